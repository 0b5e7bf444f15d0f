package reports

import (
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/bench/metrics/hdrlog"
)

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
