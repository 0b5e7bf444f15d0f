package hdrlog_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/hdrlog"
	"github.com/tlsbench/tlsbench/bench/metrics/metricstest"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestRoundTrip: HdrHistogram's own log reader reads the log
// back into the record's histograms, tagged with their phases, at the
// steady window's time.
func TestRoundTrip(t *testing.T) {
	a, b := metricstest.Run(t, 3000, 0, 7*time.Millisecond), metricstest.Run(t, 500, 2, 90*time.Millisecond)
	b.Started = b.Started.Add(time.Minute + 250*time.Millisecond)
	for _, tt := range []struct {
		runs []hdrlog.LabeledRun
		tags []string // of the first run's phases
	}{
		// One run: the tags are the phases.
		{[]hdrlog.LabeledRun{{Label: "a", Run: a}}, []string{"connect", "handshake", "ttfb", "transfer", "total", "total_uncorrected"}},
		// Several: the label (made safe) and the phase.
		{[]hdrlog.LabeledRun{{Label: "adc a,1", Run: a}, {Label: "b", Run: b}}, []string{"adc_a_1.connect", "adc_a_1.handshake"}},
	} {
		var buf bytes.Buffer
		if err := hdrlog.Write(&buf, tt.runs); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "MICROSECONDS") {
			t.Errorf("the log does not state its unit:\n%s", buf.String())
		}
		rd := hdr.NewHistogramLogReader(&buf)
		n := 0
		for _, lr := range tt.runs {
			start := lr.Run.Started.Add(time.Duration(lr.Run.SteadyStartS * float64(time.Second)))
			for p := range vocab.NumTimed {
				h, err := rd.NextIntervalHistogram()
				if err != nil || h == nil {
					t.Fatalf("interval %d: %v, %v", n, h, err)
				}
				want, err := lr.Run.Histogram(p.String())
				if err != nil {
					t.Fatal(err)
				}
				if !h.Equals(want) {
					t.Errorf("%s %s: read back %d values, differs from the record's %d", lr.Label, p, h.TotalCount(), want.TotalCount())
				}
				if n < len(tt.tags) && h.Tag() != tt.tags[n] {
					t.Errorf("interval %d tag %q, want %q", n, h.Tag(), tt.tags[n])
				}
				if got, want := h.StartTimeMs(), start.UnixMilli(); got != want {
					t.Errorf("%s %s: starts at %d ms, want %d", lr.Label, p, got, want)
				}
				if got, want := h.EndTimeMs()-h.StartTimeMs(), int64(lr.Run.DurationS*1000); got != want {
					t.Errorf("%s %s: lasts %d ms, want %d", lr.Label, p, got, want)
				}
				n++
			}
		}
		if h, err := rd.NextIntervalHistogram(); h != nil || (err != nil && err != io.EOF) {
			t.Errorf("an interval too many: %v, %v", h, err)
		}
	}
	if err := hdrlog.Write(io.Discard, nil); err == nil {
		t.Error("a log of no run was written")
	}
}

// TestSeconds: each second of the series with histograms is an
// interval of its own, tagged phase.1s, from T−1 to T seconds after the
// start (the partial last one ending with the run), and the log is in the
// order of the intervals' starts.
func TestSeconds(t *testing.T) {
	r := metricstest.Run(t, 50, 0, 7*time.Millisecond)
	r.Started = r.Started.Add(250 * time.Millisecond)
	rng := rand.New(rand.NewPCG(4, 4))
	rec := metrics.NewRecorder(2, r.Started)
	for sec := 1; sec <= 13; sec++ {
		for i := range 40 * sec {
			rec.Record(i, metricstest.PlayedSample(rng, sec > 2))
		}
		s := rec.Tick(r.Started.Add(time.Duration(sec) * time.Second))
		s.Partial = sec == 13
		r.Series = append(r.Series, s)
	}
	r.Ended = r.Started.Add(12*time.Second + 300*time.Millisecond)
	// A record made before the standard encoding: the log has it in the
	// standard one.
	r.Series[0].TotalHist = metricstest.OldSparse(mustDecodeSecond(t, r.Series[0].TotalHist))

	var buf bytes.Buffer
	if err := hdrlog.Write(&buf, []hdrlog.LabeledRun{{Label: "a", Run: r}}); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	rd := hdr.NewHistogramLogReader(&buf)
	var seconds [2]int
	var last int64
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil || h == nil {
			break
		}
		if h.StartTimeMs() < last {
			t.Errorf("%s starts at %d ms, before the interval above it (%d ms)", h.Tag(), h.StartTimeMs(), last)
		}
		last = h.StartTimeMs()
		var i int
		var enc string
		switch h.Tag() {
		case "handshake.1s":
			i, enc = 0, r.Series[seconds[0]].HandshakeHist
		case "total.1s":
			i, enc = 1, r.Series[seconds[1]].TotalHist
		default:
			continue
		}
		s := r.Series[seconds[i]]
		seconds[i]++
		if want := mustDecodeSecond(t, enc); !h.Equals(want) {
			t.Errorf("%s second %d: read back %d values, the record's second has %d", h.Tag(), s.T, h.TotalCount(), want.TotalCount())
		}
		from := r.Started.Add(time.Duration(s.T-1) * time.Second)
		to := from.Add(time.Second)
		if s.Partial {
			to = r.Ended
		}
		if h.StartTimeMs() != from.UnixMilli() || h.EndTimeMs() != to.UnixMilli() {
			t.Errorf("%s second %d: %d–%d ms, want %d–%d", h.Tag(), s.T, h.StartTimeMs(), h.EndTimeMs(), from.UnixMilli(), to.UnixMilli())
		}
	}
	if seconds != [2]int{13, 13} {
		t.Errorf("read %v handshake and total seconds, want 13 each", seconds)
	}
	if !strings.Contains(log, "-tag total.1s") {
		t.Error("the log does not say how to read one series")
	}
}

func mustDecodeSecond(t *testing.T, enc string) *hdr.Histogram {
	t.Helper()
	h, err := metrics.DecodeSecondHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
