package metrics

import (
	"fmt"
	"io"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// LabeledRun is a run and the name it goes by in a log or a report.
type LabeledRun struct {
	Label string
	Run   *Run
}

// WriteHistogramLog writes the runs' histograms as an HdrHistogram interval
// log (format 1.3), which HdrHistogram's own tools read
// (HistogramLogProcessor, HistogramLogAnalyzer, hdrhistogram-go's
// HistogramLogReader). Each phase of each run is one interval, the run's
// steady window, tagged with the phase ("handshake"), or with the run's
// label and the phase ("adc-a.cps.p256.handshake") when there are several
// runs.
//
// The values are microseconds, where the log format assumes nanoseconds
// for its Interval_Max column (written as the maximum ÷ 10^6): the log says
// so in a comment, and HdrHistogram's tools give microseconds ÷ their
// -outputValueUnitRatio (1000 for milliseconds).
func WriteHistogramLog(w io.Writer, runs []LabeledRun) error {
	if len(runs) == 0 {
		return fmt.Errorf("metrics: no run to log")
	}
	first := runs[0].Run.steadyStart()
	for _, lr := range runs[1:] {
		if s := lr.Run.steadyStart(); s.Before(first) {
			first = s
		}
	}
	// The log states its base time in whole seconds; timestamps are
	// relative to it.
	base := first.Truncate(time.Second).UnixMilli()
	lw := hdr.NewHistogramLogWriter(w)
	lw.SetBaseTime(base)
	for _, err := range []error{
		lw.OutputLogFormatVersion(),
		lw.OutputStartTime(base),
		lw.OutputBaseTime(base),
		lw.OutputComment(" tlsbench latency histograms: values in MICROSECONDS (1 us to 100 s, 3 significant digits), successful transactions of each run's steady window."),
		lw.OutputComment(" Interval_Max is the maximum / 10^6, i.e. seconds. HistogramLogProcessor: -outputValueUnitRatio 1000 gives milliseconds."),
		lw.OutputComment(" Tags: [run label.]phase, the phases being " + strings.Join(phaseNames[:], ", ") + "."),
	} {
		if err != nil {
			return err
		}
	}
	for i, lr := range runs {
		r := lr.Run
		if err := lw.OutputComment(fmt.Sprintf(" run %d %s: %s %s -> %s, started %s, %d transactions in %.3f s",
			i+1, tagSafe(lr.Label), r.Engine, r.Profile, r.Target.Address, r.Started.UTC().Format(time.RFC3339Nano), r.Transactions, r.DurationS)); err != nil {
			return err
		}
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	for _, lr := range runs {
		r := lr.Run
		start := r.steadyStart()
		end := start.Add(time.Duration(r.DurationS * float64(time.Second)))
		for _, phase := range phaseNames {
			if _, ok := r.Histograms[phase]; !ok {
				continue
			}
			h, err := r.Histogram(phase)
			if err != nil {
				return err
			}
			tag := phase
			if len(runs) > 1 {
				tag = tagSafe(lr.Label) + "." + phase
			}
			h.SetTag(tag)
			h.SetStartTimeMs(start.UnixMilli())
			h.SetEndTimeMs(end.UnixMilli())
			if err := lw.OutputIntervalHistogram(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// steadyStart is when the run's steady window began.
func (r *Run) steadyStart() time.Time {
	return r.Started.Add(time.Duration(r.SteadyStartS * float64(time.Second)))
}

// tagSafe replaces what a log tag may not hold (commas, white space).
func tagSafe(s string) string {
	return strings.Map(func(c rune) rune {
		if c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			return '_'
		}
		return c
	}, s)
}
