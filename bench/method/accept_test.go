package method_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/httpreq"
	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

// openLoopRun makes a CPS open-loop run at rate against the in-process
// reference target, whose responses wait delay before their first byte.
func openLoopRun(t *testing.T, rate float64, conc int, delay time.Duration) *metrics.Run {
	t.Helper()
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	spec := &job.Spec{
		Engine: job.CPS,
		Conn: tlsconn.Config{Profile: p, Address: tg.Listeners[0].Addr, ConnectTimeout: 5 * time.Second, HandshakeTimeout: 5 * time.Second,
			TLS: profiles.ClientOptions{ServerName: "localhost", RootCAs: tg.CA.Pool()}},
		Request: httpreq.Request{Path: "/1k", Host: "localhost", ExpectSize: 1024, ReadTimeout: 10 * time.Second},
		Load:    bench.Config{Concurrency: conc, Rate: rate, Duration: time.Second, Drain: 10 * time.Second},
	}
	r, err := job.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOverloadedOpenLoopRejected: an open loop faster than the target (100
// starts a second, one connection at a time, each taking more than 20 ms)
// drops starts; the record is marked (dropped share, latency a lower bound),
// the summary prints the share beside the percentiles, and the method
// rejects the run by default (max_dropped_share 0) and accepts it when the
// plan allows that share.
func TestOverloadedOpenLoopRejected(t *testing.T) {
	r := openLoopRun(t, 100, 1, 20*time.Millisecond)
	l := r.Load
	t.Logf("scheduled %d, dropped %d (%.1f%%), transactions %d", l.Scheduled, l.Dropped, l.DroppedShare*100, r.Transactions)
	if l.Scheduled != 100 || l.Dropped == 0 || !l.LatencyLowerBound || l.DroppedShare < 0.3 {
		t.Fatalf("load %+v: want 100 scheduled, a third or more dropped, marked a lower bound", l)
	}
	reasons := method.DefaultMethod().Accept.Judge(r)
	if !strings.Contains(strings.Join(reasons, "; "), "dropped") {
		t.Errorf("default acceptance %q does not reject the dropped starts", reasons)
	}
	lenient := method.DefaultMethod().Accept
	lenient.MaxDroppedShare = 0.99
	lenient.MaxGeneratorCPU = 1
	for _, why := range lenient.Judge(r) {
		if strings.Contains(why, "dropped") {
			t.Errorf("max_dropped_share 99%% still rejects: %s", why)
		}
	}
	var out bytes.Buffer
	reports.RunText(&out, r)
	text := out.String()
	if !strings.Contains(text, "≥") || strings.Count(text, "% of starts dropped)") < 5 || !strings.Contains(text, "lower bound") {
		t.Errorf("summary does not mark the lower bound beside every percentile:\n%s", text)
	}
}

// TestIdleOpenLoopLag: at 200/s against an idle target nothing is dropped,
// the record carries the generator's own start lateness (schedule_lag, one
// value per transaction of the window, decodable) and the flag that says
// whether it is material. (Its size is bounded in bench's
// TestOpenLoopStartsOnTime, where no handshake shares the cores.)
func TestIdleOpenLoopLag(t *testing.T) {
	r := openLoopRun(t, 200, 64, 0)
	lag := r.Latency[metrics.ScheduleLag]
	t.Logf("late %d of %d; schedule lag p50 %d µs, p99 %d µs; total p50 %d µs (uncorrected %d µs); material %v",
		r.Load.Late, r.Load.Scheduled, lag.P50, lag.P99, r.Latency["total"].P50, r.Latency["total_uncorrected"].P50, r.Load.StartLagMaterial)
	if r.Load.Dropped != 0 || r.Load.LatencyLowerBound {
		t.Errorf("load %+v: nothing should drop at an idle target", r.Load)
	}
	if lag.Count != r.Transactions+r.Errors.Total {
		t.Errorf("schedule lag holds %d values, the window %d transactions", lag.Count, r.Transactions+r.Errors.Total)
	}
	want := float64(lag.P50) > metrics.StartLagShare*float64(r.Latency["total"].P50) ||
		float64(lag.P99) > metrics.StartLagShare*float64(r.Latency["total"].P99)
	if r.Load.StartLagMaterial != want {
		t.Errorf("start_lag_material %v, want %v", r.Load.StartLagMaterial, want)
	}
	if _, err := r.Histogram(metrics.ScheduleLag); err != nil {
		t.Error(err)
	}
}
