package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/hdrlog"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// hdrJar is where Debian's libhdrhistogram-java puts HdrHistogram's
// reference implementation; TLSBENCH_HDR_JAR names another.
func hdrJar(t *testing.T) (java, jar string) {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java: install default-jre-headless (make deps-test) to check tlsbench's percentiles against HdrHistogram's Java implementation")
	}
	jar = os.Getenv("TLSBENCH_HDR_JAR")
	if jar == "" {
		jar = "/usr/share/java/hdrhistogram.jar"
	}
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("no %s: install libhdrhistogram-java (make deps-test) to check tlsbench's percentiles against HdrHistogram's Java implementation", jar)
	}
	return java, jar
}

// javaLine is one interval of HistogramLogProcessor's output: the
// interval's count, p50, p90 and maximum, then those of all the intervals
// read so far (count, p50, p90, p99, p99.9, p99.99, maximum).
type javaLine struct {
	count                int64
	p50, p90, max        int64
	total                int64
	t50, t90, t99, t999  int64
	t9999, tmax          int64
	raw                  string
	intervalEndRelativeS float64
}

// javaOutput is what one HistogramLogProcessor run printed.
type javaOutput struct {
	lines []javaLine
	mean  string // of all intervals read, as the percentile distribution prints it
}

var javaLineRE = regexp.MustCompile(`^([\d.]+): I:(\d+) \( +([\d.]+) +([\d.]+) +([\d.]+) \) T:(\d+) \( +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) \)$`)

var javaMeanRE = regexp.MustCompile(`(?m)^#\[Mean += +([\d.]+),`)

// histogramLogProcessor runs HdrHistogram's HistogramLogProcessor on log,
// values in the log's unit (-outputValueUnitRatio 1), with args (-tag …).
func histogramLogProcessor(t *testing.T, java, jar, log string, args ...string) (javaOutput, error) {
	out := filepath.Join(t.TempDir(), "out")
	var o javaOutput
	args = append([]string{"-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", log, "-outputValueUnitRatio", "1", "-o", out}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return o, fmt.Errorf("java %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	intervals, err := os.ReadFile(out)
	if err != nil {
		return o, err
	}
	hgrm, err := os.ReadFile(out + ".hgrm")
	if err != nil {
		return o, err
	}
	if m := javaMeanRE.FindSubmatch(hgrm); m != nil {
		o.mean = string(m[1])
	}
	for _, line := range strings.Split(string(intervals), "\n") {
		m := javaLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := make([]int64, 0, 11)
		for _, f := range m[2:] {
			// Values print as %7.3f at a unit ratio of 1: integers.
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v != float64(int64(v)) {
				return o, fmt.Errorf("%q: %q is not an integer count or value", line, f)
			}
			n = append(n, int64(v))
		}
		end, _ := strconv.ParseFloat(m[1], 64)
		o.lines = append(o.lines, javaLine{count: n[0], p50: n[1], p90: n[2], max: n[3], total: n[4],
			t50: n[5], t90: n[6], t99: n[7], t999: n[8], t9999: n[9], tmax: n[10], raw: line, intervalEndRelativeS: end})
	}
	return o, nil
}

// ours is what tlsbench computes for a histogram, in the processor's
// columns.
func ours(h *hdr.Histogram) [6]int64 {
	return [6]int64{metrics.ValueAtPercentile(h, 50), metrics.ValueAtPercentile(h, 90), metrics.ValueAtPercentile(h, 99),
		metrics.ValueAtPercentile(h, 99.9), metrics.ValueAtPercentile(h, 99.99), h.Max()}
}

func (l javaLine) totals() [6]int64 { return [6]int64{l.t50, l.t90, l.t99, l.t999, l.t9999, l.tmax} }

// TestHistogramLogJava: HdrHistogram's reference implementation (Java,
// HistogramLogProcessor) reads every interval of a real run's .hlog, the
// steady window's and each second's, and prints the percentiles tlsbench
// stored and printed for them.
func TestHistogramLogJava(t *testing.T) {
	java, jar := hdrJar(t)
	dir := t.TempDir()
	record, log := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.hlog")
	if code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "1s", "--warmup", "1s", "--json", record); code != exitOK {
		t.Fatalf("cps: exit %d: %s", code, stderr)
	}
	if code, _, stderr := invoke(t, context.Background(), "report", "--format", "hlog", "-o", log, record); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	r, err := metrics.ReadRun(record)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	base := regexp.MustCompile(`#\[StartTime: (\d+)`).FindSubmatch(data)
	if base == nil {
		t.Fatal("the log states no start time")
	}
	baseS, _ := strconv.ParseInt(string(base[1]), 10, 64)

	// The processor runs, two at a time (each is a JVM).
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	check := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f()
		}()
	}

	// The steady window: one interval a phase; its percentiles are those
	// of the record (which tlsbench printed) and its mean the record's.
	for phase, lat := range r.Latency {
		if lat.Count == 0 {
			continue
		}
		check(func() {
			h, err := r.Histogram(phase)
			if err != nil {
				t.Error(err)
				return
			}
			o, err := histogramLogProcessor(t, java, jar, log, "-tag", phase)
			if err != nil {
				t.Error(err)
				return
			}
			if len(o.lines) != 1 {
				t.Errorf("%s: the processor read %d intervals, want 1", phase, len(o.lines))
				return
			}
			l := o.lines[0]
			stored := [6]int64{lat.P50, lat.P90, lat.P99, lat.P999, metrics.ValueAtPercentile(h, 99.99), lat.Max}
			if l.count != lat.Count || l.totals() != stored || l.totals() != ours(h) || l.p50 != lat.P50 || l.p90 != lat.P90 || l.max != lat.Max {
				t.Errorf("%s: HdrHistogram (Java) prints\n  %s\nthe record has count %d, p50 %d, p90 %d, p99 %d, p99.9 %d, max %d (p99.99 %d)",
					phase, l.raw, lat.Count, lat.P50, lat.P90, lat.P99, lat.P999, lat.Max, stored[4])
			}
			// Java's %f rounds a tie half up (2596.5625 → 2596.563), Go's to
			// even: round half up first, as Java does.
			d := decimals(o.mean)
			if want := fmt.Sprintf("%.*f", d, math.Floor(lat.Mean*math.Pow10(d)+0.5)/math.Pow10(d)); o.mean != want {
				t.Errorf("%s: mean %s (Java), %s (the record's %v)", phase, o.mean, want, lat.Mean)
			}
		})
	}

	// Each second: the interval's percentiles are the second's, those of
	// the intervals so far the merged seconds'; the second's p99 (which
	// the record stores) is read by selecting that one interval with
	// -start and -end.
	for _, phase := range []string{"handshake", "total"} {
		var seconds []metrics.Second
		var hists []*hdr.Histogram
		for _, s := range r.Series {
			enc := s.TotalHist
			if phase == "handshake" {
				enc = s.HandshakeHist
			}
			if enc == "" {
				continue
			}
			h, err := metrics.DecodeSecondHistogram(enc)
			if err != nil {
				t.Fatal(err)
			}
			seconds, hists = append(seconds, s), append(hists, h)
		}
		if len(seconds) < 2 {
			t.Fatalf("%s: %d seconds with a histogram in a run of 2 s", phase, len(seconds))
		}
		tag := phase + hdrlog.SecondTagSuffix
		check(func() {
			o, err := histogramLogProcessor(t, java, jar, log, "-tag", tag)
			if err != nil {
				t.Error(err)
				return
			}
			if len(o.lines) != len(seconds) {
				t.Errorf("%s: the processor read %d intervals, the series has %d seconds", tag, len(o.lines), len(seconds))
				return
			}
			sum := hdr.New(metrics.Lowest, metrics.Highest, 2)
			for i, l := range o.lines {
				h := hists[i]
				sum.Merge(h)
				if l.count != h.TotalCount() || l.p50 != metrics.ValueAtPercentile(h, 50) || l.p90 != metrics.ValueAtPercentile(h, 90) || l.max != h.Max() {
					t.Errorf("%s second %d: Java prints %s; tlsbench: %d values, p50 %d, p90 %d, max %d", tag, seconds[i].T, l.raw,
						h.TotalCount(), metrics.ValueAtPercentile(h, 50), metrics.ValueAtPercentile(h, 90), h.Max())
				}
				if l.total != sum.TotalCount() || l.totals() != ours(sum) {
					t.Errorf("%s seconds 1–%d: Java prints %s; tlsbench: %d values, %v", tag, seconds[i].T, l.raw, sum.TotalCount(), ours(sum))
				}
			}
		})
		for i, s := range seconds {
			check(func() {
				// The interval starts T−1 s after the run's start.
				from := float64(r.Started.Add(time.Duration(s.T-1)*time.Second).UnixMilli())/1000 - float64(baseS)
				o, err := histogramLogProcessor(t, java, jar, log, "-tag", tag,
					"-start", fmt.Sprintf("%.3f", from-0.01), "-end", fmt.Sprintf("%.3f", from+0.01))
				if err != nil {
					t.Error(err)
					return
				}
				if len(o.lines) != 1 {
					t.Errorf("%s second %d: the processor read %d intervals from %.3f s, want 1", tag, s.T, len(o.lines), from)
					return
				}
				l, h := o.lines[0], hists[i]
				stored := int64(s.TotalP99)
				if phase == "handshake" {
					stored = int64(s.HandshakeP99)
				}
				if l.totals() != ours(h) || l.t99 != stored || (phase == "total" && l.t50 != int64(s.TotalP50)) {
					t.Errorf("%s second %d: Java prints %s; tlsbench %v, the record's p99 %d", tag, s.T, l.raw, ours(h), stored)
				}
			})
		}
	}
	wg.Wait()
}

// decimals is how many digits follow the point in s.
func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// TestHistogramLogJava168: on 168 values, p99 is the 167th by the
// reference implementation's rule, the 166th by nearest-rank rounding; the
// processor prints tlsbench's.
func TestHistogramLogJava168(t *testing.T) {
	java, jar := hdrJar(t)
	rec := metrics.NewRecorder(1, time.Unix(1_800_000_000, 0))
	for i := 1; i <= 168; i++ {
		var s metrics.Sample
		s.Steady = true
		for p := range s.Dur {
			s.Dur[p] = time.Duration(i) * time.Millisecond
		}
		rec.Record(0, &s)
	}
	r := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Profile: "p", Started: time.Unix(1_800_000_000, 0), DurationS: 1}
	if err := r.Fill(rec.Snapshot(), time.Second); err != nil {
		t.Fatal(err)
	}
	h, err := r.Histogram("total")
	if err != nil {
		t.Fatal(err)
	}
	if r.Percentiles(vocab.PhaseTotal).P99 == h.ValueAtQuantile(99) {
		t.Fatalf("p99 %d is also the nearest rank's: the case does not tell the rules apart", r.Percentiles(vocab.PhaseTotal).P99)
	}
	log := filepath.Join(t.TempDir(), "168.hlog")
	var buf bytes.Buffer
	if err := hdrlog.Write(&buf, []hdrlog.LabeledRun{{Label: "x", Run: r}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := histogramLogProcessor(t, java, jar, log, "-tag", "total")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.lines) != 1 {
		t.Fatalf("the processor read %d intervals, want 1", len(o.lines))
	}
	if got, want := o.lines[0].t99, r.Percentiles(vocab.PhaseTotal).P99; got != want {
		t.Errorf("p99 of 168 values: Java %d µs, tlsbench %d µs (nearest rank: %d)", got, want, h.ValueAtQuantile(99))
	}
	t.Logf("p99 of 1..168 ms: HdrHistogram (Java) %d µs, tlsbench %d µs, hdrhistogram-go's ValueAtQuantile %d µs",
		o.lines[0].t99, r.Percentiles(vocab.PhaseTotal).P99, h.ValueAtQuantile(99))
}
