package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/hdrlog"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// namedRun is a run of the inputs with what it measured and where it came
// from.
type namedRun struct {
	dut     string
	engine  vocab.Engine
	profile string
	input   string // the input's name
	run     *metrics.Run
}

// runsOf lists every run of inputs: each run record (its DUT named as the
// tables name it), and the published run of every campaign cell.
func runsOf(inputs []Input) []namedRun {
	var out []namedRun
	labels := dutLabels(inputs) // two devices of one host name are told apart
	for _, in := range inputs {
		if r := in.Run; r != nil {
			out = append(out, namedRun{labels[dutKey(r)], r.Engine, r.Profile, in.Name, r})
			continue
		}
		if in.Campaign == nil {
			continue
		}
		for _, cell := range in.Campaign.Summary.Cells {
			if run := method.PublishedRun(in.Campaign.Ledger, cell); run != nil {
				out = append(out, namedRun{cell.DUT, cell.Engine, cell.Profile, in.Name, run})
			}
		}
	}
	return out
}

// HistogramLog writes the latency histograms of the inputs' runs — every
// run record, and the published run of every campaign cell — as one
// HdrHistogram interval log (see hdrlog.Write).
func HistogramLog(w io.Writer, inputs []Input) error {
	var runs []hdrlog.LabeledRun
	seen := map[string]int{}
	for _, r := range runsOf(inputs) {
		label := r.dut + "." + r.engine.String() + "." + r.profile
		seen[label]++
		if n := seen[label]; n > 1 {
			label = fmt.Sprintf("%s.%d", label, n)
		}
		runs = append(runs, hdrlog.LabeledRun{Label: label, Run: r.run})
	}
	if len(runs) == 0 {
		return fmt.Errorf("no run with histograms: the campaigns published no run")
	}
	return hdrlog.Write(w, runs)
}

// SiegeSummaries lays every run of inputs (run records, and the published
// run of every campaign cell) out in Siege's own summary layout, so that its
// numbers can be held against Siege's.
func SiegeSummaries(inputs []Input) (Document, error) {
	d := Document{title: "Siege summaries"}
	runs := runsOf(inputs)
	if len(runs) == 0 {
		return d, fmt.Errorf("no run to summarise: the campaigns published no run")
	}
	w := &strings.Builder{}
	for i, r := range runs {
		s, err := analysis.SiegeOf(r.run)
		if err != nil {
			return d, err
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s %s %s (%s)\n", r.dut, r.engine, r.profile, r.input)
		siegeSummary(w, s)
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
