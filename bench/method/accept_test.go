package method_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/plan"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"

	"github.com/tlsbench/tlsbench/bench/vocab"
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
	spec := runner.Defaults(vocab.EngineCPS)
	spec.Profile, spec.Target = p.Name, metrics.Target{Address: tg.Listeners[0].Addr, ServerName: "localhost"}
	spec.Roots, spec.Host, spec.ExpectSize, spec.UserAgent = tg.CA.Pool(), "localhost", 1024, ""
	spec.Concurrency, spec.Rate, spec.Duration, spec.Warmup, spec.Drain, spec.AbortAfter = conc, rate, time.Second, 0, 10*time.Second, 0
	r, err := runner.Execute(context.Background(), &spec)
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
	reasons := method.Judge(plan.DefaultMethod().Accept, r)
	if !strings.Contains(strings.Join(reasons, "; "), "dropped") {
		t.Errorf("default acceptance %q does not reject the dropped starts", reasons)
	}
	lenient := plan.DefaultMethod().Accept
	lenient.MaxDroppedShare = 0.99
	lenient.MaxGeneratorCPU = 1
	for _, why := range method.Judge(lenient, r) {
		if strings.Contains(why, "dropped") {
			t.Errorf("max_dropped_share 99%% still rejects: %s", why)
		}
	}
	var out bytes.Buffer
	if err := reports.RunSummary(r).Text(&out); err != nil {
		t.Fatal(err)
	}
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
	lag := r.Percentiles(vocab.PhaseScheduleLag)
	t.Logf("late %d of %d; schedule lag p50 %d µs, p99 %d µs; total p50 %d µs (uncorrected %d µs); material %v",
		r.Load.Late, r.Load.Scheduled, lag.P50, lag.P99, r.Percentiles(vocab.PhaseTotal).P50, r.Latency["total_uncorrected"].P50, r.Load.StartLagMaterial)
	if r.Load.Dropped != 0 || r.Load.LatencyLowerBound {
		t.Errorf("load %+v: nothing should drop at an idle target", r.Load)
	}
	if lag.Count != r.Transactions+r.Errors.Total {
		t.Errorf("schedule lag holds %d values, the window %d transactions", lag.Count, r.Transactions+r.Errors.Total)
	}
	want := float64(lag.P50) > metrics.StartLagShare*float64(r.Percentiles(vocab.PhaseTotal).P50) ||
		float64(lag.P99) > metrics.StartLagShare*float64(r.Percentiles(vocab.PhaseTotal).P99)
	if r.Load.StartLagMaterial != want {
		t.Errorf("start_lag_material %v, want %v", r.Load.StartLagMaterial, want)
	}
	if _, err := r.Histogram(vocab.PhaseScheduleLag.String()); err != nil {
		t.Error(err)
	}
}

// TestJudgeNoise: accept.max_other_cpu and max_steal reject a run made on a
// disturbed machine, with the measured share and the limit in the reason;
// 0 (the default) is no limit, and a record without noise (not Linux) is
// not judged by them.
func TestJudgeNoise(t *testing.T) {
	r := &metrics.Run{Engine: vocab.EngineCPS, Complete: true, Transactions: 100,
		Noise: &metrics.Noise{WindowS: 10, CPUs: 4, OtherCores: 2.48, OtherShare: 0.62, StealShare: 0.08, GeneratorCores: 1}}
	a := plan.DefaultMethod().Accept
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("default acceptance rejects for noise: %q", why)
	}
	a.MaxOtherCPU, a.MaxSteal = 0.25, 0.05
	why := strings.Join(method.Judge(a, r), "; ")
	for _, want := range []string{
		"other processes used 0.62 of the machine's CPU (2.48 of 4 cores; max_other_cpu 25%)",
		"the hypervisor stole 0.08 of the machine's CPU (max_steal 5%)",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("reasons %q, want %q", why, want)
		}
	}
	a.MaxOtherCPU, a.MaxSteal = 0.62, 0.08 // at the limit: accepted
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("at the limits: %q", why)
	}
	a.MaxOtherCPU, a.MaxSteal = 0.01, 0.01
	r.Noise = nil
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("without a noise measurement: %q", why)
	}
}
