package reports

import (
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/bench/metrics"

	"github.com/tlsbench/tlsbench/bench/hdrlog"
)

// HistogramLog writes the latency histograms of the inputs' runs — every
// run record, and the published run of every campaign cell — as one
// HdrHistogram interval log (see hdrlog.Write).
func HistogramLog(w io.Writer, inputs []Input) error {
	var runs []hdrlog.LabeledRun
	seen := map[string]int{}
	labels := dutLabels(inputs) // two devices of one host name are told apart
	add := func(label string, r *metrics.Run) {
		seen[label]++
		if n := seen[label]; n > 1 {
			label = fmt.Sprintf("%s.%d", label, n)
		}
		runs = append(runs, hdrlog.LabeledRun{Label: label, Run: r})
	}
	for _, in := range inputs {
		if in.Run != nil {
			add(labels[DUTKey(in.Run)]+"."+in.Run.Engine.String()+"."+in.Run.Profile, in.Run)
			continue
		}
		if in.Campaign == nil {
			continue
		}
		for _, cell := range in.Campaign.Summary.Cells {
			if run := publishedRun(in.Campaign.Ledger, cell); run != nil {
				add(cell.DUT+"."+cell.Engine.String()+"."+cell.Profile, run)
			}
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("no run with histograms: the campaigns published no run")
	}
	return hdrlog.Write(w, runs)
}
