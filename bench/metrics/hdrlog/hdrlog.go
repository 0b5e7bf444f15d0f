// Package hdrlog writes run records' histograms as an HdrHistogram interval
// log, which HdrHistogram's own tools read.
package hdrlog

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// LabeledRun is a run and the name it goes by in a log or a report.
type LabeledRun struct {
	Label string
	Run   *metrics.Run
}

// Write writes the runs' histograms as an HdrHistogram interval
// log (format 1.3), which HdrHistogram's own tools read
// (HistogramLogProcessor, HistogramLogAnalyzer, hdrhistogram-go's
// HistogramLogReader). Each phase of each run is one interval, the run's
// steady window, tagged with the phase ("handshake"), or with the run's
// label and the phase ("adc-a.cps.p256.handshake") when there are several
// runs. Each second of a run's series that has per-second histograms is one
// more interval per phase, tagged with ".1s" after the phase
// ("total.1s", "adc-a.cps.p256.total.1s"): 2 significant digits, every
// transaction that ended in that second (warm-up and drain included), the
// partial last second ending when the run did. Intervals are in the order
// of their start, as HistogramLogProcessor's -start and -end need; its -tag
// selects one series of them.
//
// The values are microseconds, where the log format assumes nanoseconds
// for its Interval_Max column (written as the maximum ÷ 10^6): the log says
// so in a comment, and HdrHistogram's tools give microseconds ÷ their
// -outputValueUnitRatio (1000 for milliseconds).
func Write(w io.Writer, runs []LabeledRun) error {
	if len(runs) == 0 {
		return fmt.Errorf("hdrlog: no run to log")
	}
	var ivs []interval
	for _, lr := range runs {
		prefix := ""
		if len(runs) > 1 {
			prefix = tagSafe(lr.Label) + "."
		}
		more, err := intervalsOf(lr.Run, prefix)
		if err != nil {
			return err
		}
		ivs = append(ivs, more...)
	}
	sort.SliceStable(ivs, func(i, j int) bool { return ivs[i].start.Before(ivs[j].start) })
	// The log states its base time in whole seconds; timestamps are
	// relative to it.
	base := ivs[0].start.Truncate(time.Second).UnixMilli()
	lw := hdr.NewHistogramLogWriter(w)
	lw.SetBaseTime(base)
	for _, err := range []error{
		lw.OutputLogFormatVersion(),
		lw.OutputStartTime(base),
		lw.OutputBaseTime(base),
		lw.OutputComment(" tlsbench latency histograms: values in MICROSECONDS (1 us to 100 s), successful transactions."),
		lw.OutputComment(" Interval_Max is the maximum / 10^6, i.e. seconds. " +
			"HistogramLogProcessor: -outputValueUnitRatio 1000 gives milliseconds."),
		lw.OutputComment(" Tags: [run label.]phase, the phases being " + strings.Join(vocab.PhaseNames(), ", ") +
			" (those the record has): each run's steady window (3 significant digits)."),
		lw.OutputComment(" Tags: [run label.]phase.1s: one interval per second of the run, by completion, " +
			"warm-up and drain included (2 significant digits)."),
		lw.OutputComment(" One series, a line per interval in NAME: " +
			"HistogramLogProcessor -i FILE -tag total.1s -outputValueUnitRatio 1000 -o NAME"),
	} {
		if err != nil {
			return err
		}
	}
	for i, lr := range runs {
		r := lr.Run
		if err := lw.OutputComment(fmt.Sprintf(" run %d %s: %s %s -> %s, started %s, %d transactions in %.3f s",
			i+1, tagSafe(lr.Label), r.Engine, r.Profile, r.Target.Address,
			r.Started.UTC().Format(time.RFC3339Nano), r.Transactions, r.DurationS)); err != nil {
			return err
		}
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	for _, iv := range ivs {
		// The interval line of hdrhistogram-go's and Java's writers.
		start := float64(iv.start.UnixMilli()-base) / 1000
		length := float64(iv.end.UnixMilli()-iv.start.UnixMilli()) / 1000
		maxMs := float64(iv.max) / hdr.MsToNsRatio
		if _, err := fmt.Fprintf(w, "Tag=%s,%f,%f,%f,%s\n", iv.tag, start, length, maxMs, iv.enc); err != nil {
			return err
		}
	}
	return nil
}

// interval is one line of an interval log.
type interval struct {
	tag        string
	start, end time.Time
	max        int64  // µs
	enc        string // V2 compressed, base64
}

// SecondTagSuffix ends the tags of a log's per-second intervals.
const SecondTagSuffix = ".1s"

// intervalsOf returns the run's intervals: each phase's steady window, then
// each second's handshake and total histograms.
func intervalsOf(r *metrics.Run, prefix string) ([]interval, error) {
	var ivs []interval
	start := r.Started.Add(time.Duration(r.SteadyStartS * float64(time.Second))) // the steady window's
	end := start.Add(time.Duration(r.DurationS * float64(time.Second)))
	for _, phase := range vocab.PhaseNames() {
		enc, ok := r.Histograms[phase]
		if !ok {
			continue
		}
		h, err := r.Histogram(phase)
		if err != nil {
			return nil, err
		}
		ivs = append(ivs, interval{tag: prefix + phase, start: start, end: end, max: h.Max(), enc: enc})
	}
	for _, s := range r.Series {
		from := r.Started.Add(time.Duration(s.T-1) * time.Second)
		to := from.Add(time.Second)
		if s.Partial && r.Ended.After(from) && r.Ended.Before(to) {
			to = r.Ended
		}
		for _, ph := range []struct{ name, enc string }{
			{vocab.PhaseHandshake.String(), s.HandshakeHist},
			{vocab.PhaseTotal.String(), s.TotalHist},
		} {
			if ph.enc == "" {
				continue
			}
			h, err := metrics.DecodeSecondHistogram(ph.enc)
			if err != nil {
				return nil, fmt.Errorf("hdrlog: second %d: %s histogram: %w", s.T, ph.name, err)
			}
			// Re-encoded: records older than the standard encoding
			// hold a private one.
			ivs = append(ivs, interval{tag: prefix + ph.name + SecondTagSuffix, start: from, end: to, max: h.Max(),
				enc: metrics.EncodeV2(h)})
		}
	}
	return ivs, nil
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
