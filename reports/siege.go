package reports

import (
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// Siege writes every run of inputs (run records, and the published run of
// every campaign cell) in Siege's own summary layout, so that its numbers
// can be held against Siege's.
func Siege(w io.Writer, inputs []Input) error {
	n := 0
	each := func(label string, r *metrics.Run) error {
		s, err := analysis.SiegeOf(r)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
		n++
		fmt.Fprintf(w, "%s\n", label)
		SiegeSummary(w, s)
		return nil
	}
	labels := dutLabels(inputs)
	for _, in := range inputs {
		if in.Run != nil {
			if err := each(fmt.Sprintf("%s %s %s (%s)", labels[DUTKey(in.Run)], in.Run.Engine, in.Run.Profile, in.Name), in.Run); err != nil {
				return err
			}
			continue
		}
		if in.Campaign == nil {
			continue
		}
		for _, cell := range in.Campaign.Summary.Cells {
			if run := method.PublishedRun(in.Campaign.Ledger, cell); run != nil {
				if err := each(fmt.Sprintf("%s %s %s (%s)", cell.DUT, cell.Engine, cell.Profile, in.Name), run); err != nil {
					return err
				}
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("no run to summarise: the campaigns published no run")
	}
	return nil
}

// SiegeSummary writes s as Siege prints its summary.
func SiegeSummary(w io.Writer, s analysis.Siege) {
	fmt.Fprintf(w, "Transactions:\t\t%12d hits\n", s.Transactions)
	fmt.Fprintf(w, "Availability:\t\t%12.2f %%\n", s.Availability)
	fmt.Fprintf(w, "Elapsed time:\t\t%12.2f secs\n", s.ElapsedTime)
	fmt.Fprintf(w, "Data transferred:\t%12.2f MB\n", s.DataTransferred)
	fmt.Fprintf(w, "Response time:\t\t%12.2f secs\n", s.ResponseTime)
	fmt.Fprintf(w, "Transaction rate:\t%12.2f trans/sec\n", s.TransactionRate)
	fmt.Fprintf(w, "Throughput:\t\t%12.2f MB/sec\n", s.Throughput)
	fmt.Fprintf(w, "Concurrency:\t\t%12.2f\n", s.Concurrency)
	fmt.Fprintf(w, "Successful transactions:%12d\n", s.SuccessfulTransactions)
	fmt.Fprintf(w, "Failed transactions:\t%12d\n", s.FailedTransactions)
	fmt.Fprintf(w, "Longest transaction:\t%12.2f\n", s.LongestTransaction)
	fmt.Fprintf(w, "Shortest transaction:\t%12.2f\n", s.ShortestTransaction)
}
