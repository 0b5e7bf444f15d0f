package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// SiegeSummaries lays every run of inputs (run records, and the published
// run of every campaign cell) out in Siege's own summary layout, so that its
// numbers can be held against Siege's.
func SiegeSummaries(inputs []Input) (Document, error) {
	d := Document{title: "Siege summaries"}
	w := &strings.Builder{}
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
		siegeSummary(w, s)
		return nil
	}
	labels := dutLabels(inputs)
	for _, in := range inputs {
		if in.Run != nil {
			if err := each(fmt.Sprintf("%s %s %s (%s)", labels[DUTKey(in.Run)], in.Run.Engine, in.Run.Profile, in.Name), in.Run); err != nil {
				return d, err
			}
			continue
		}
		if in.Campaign == nil {
			continue
		}
		for _, cell := range in.Campaign.Summary.Cells {
			if run := method.PublishedRun(in.Campaign.Ledger, cell); run != nil {
				if err := each(fmt.Sprintf("%s %s %s (%s)", cell.DUT, cell.Engine, cell.Profile, in.Name), run); err != nil {
					return d, err
				}
			}
		}
	}
	if n == 0 {
		return d, fmt.Errorf("no run to summarise: the campaigns published no run")
	}
	d.add(pre(w.String()))
	return d, nil
}

// siegeSummary writes s as Siege prints its summary.
func siegeSummary(w io.Writer, s analysis.Siege) {
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
