package method_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/metricstest"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

// openLoopRun makes a CPS open-loop run at rate against the in-process
// reference target, whose responses wait delay before their first byte.
func openLoopRun(t *testing.T, rate float64, conc int, delay time.Duration) *metrics.Run {
	t.Helper()
	return referenceRun(t, target.Config{Delay: delay}, func(spec *runner.Spec) {
		spec.Concurrency, spec.Rate, spec.Duration, spec.Warmup, spec.Drain, spec.AbortAfter = conc, rate, time.Second, 0, 10*time.Second, 0
	})
}

// referenceRun makes a CPS run, as set edits its spec, against the
// in-process reference target configured as tc (its profile added).
func referenceRun(t *testing.T, tc target.Config, set func(*runner.Spec)) *metrics.Run {
	t.Helper()
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tc.Profiles = []*profiles.Profile{p}
	tg, err := target.Start(tc)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	spec := runner.Defaults(vocab.EngineCPS)
	spec.Profile, spec.Target = p.Name, metrics.Target{Address: tg.Listeners[0].Addr, ServerName: "localhost"}
	spec.Roots, spec.Host, spec.ExpectSize, spec.UserAgent = tg.CA.Pool(), "localhost", 1024, ""
	set(&spec)
	r, err := runner.Run(context.Background(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAbandonedRejected: a run against the reference target whose "slow"
// connections (a fifth of them) wait 3 s before their first byte, within
// the read deadline but beyond a 300 ms drain: the workers stuck at the
// window's end are abandoned, and the record counts them (load.abandoned,
// errors of class abandoned, valid on read), and acceptance rejects the run
// for those errors.
func TestAbandonedRejected(t *testing.T) {
	slow := target.Config{Faults: []target.Fault{{Kind: "slow", Fraction: 0.2}}, SlowDelay: 3 * time.Second}
	r := referenceRun(t, slow, func(spec *runner.Spec) {
		spec.Concurrency, spec.Duration, spec.Warmup, spec.Drain, spec.AbortAfter = 4, time.Second, 0, 300*time.Millisecond, 0
		spec.ReadTimeout = 10 * time.Second
	})
	n := r.Errors.ByClass[vocab.ClassAbandoned]
	t.Logf("transactions %d, abandoned %d (%d in the window), errors %v", r.Transactions, r.Load.Abandoned, n, r.Errors.ByClass)
	if r.Load.Abandoned == 0 || n != r.Load.Abandoned || r.Whole.Errors < n {
		t.Fatalf("load.abandoned %d, abandoned errors %d (whole run errors %d): want the stuck workers counted in both",
			r.Load.Abandoned, n, r.Whole.Errors)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.DecodeRun(data); err != nil {
		t.Errorf("the record is not valid: %v", err)
	}
	a := plan.DefaultMethod().Accept
	a.MaxGeneratorCPU = 1
	why := strings.Join(method.Judge(a, r), "; ")
	if !strings.Contains(why, fmt.Sprintf("abandoned ×%d", n)) {
		t.Errorf("acceptance %q does not reject the %d abandoned transactions", why, n)
	}
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
	if _, err := r.Histogram(vocab.PhaseScheduleLag.String()); err != nil {
		t.Error(err)
	}
}

// TestStartLagMaterial: the start lateness is material when its p50 or p99
// is above 5% of the total's, on fixed records (the arithmetic beside each).
func TestStartLagMaterial(t *testing.T) {
	for _, tc := range []struct {
		name             string
		mode             string
		lag50, lag99     int64 // schedule_lag p50, p99 (µs); count 0 when both are 0
		total50, total99 int64 // total p50, p99 (µs)
		want             bool
	}{
		{"at 5% of both", "open", 50, 100, 1000, 2000, false},  // 50 > 50? no; 100 > 100? no
		{"p50 above", "open", 51, 100, 1000, 2000, true},       // 51 > 0.05×1000 = 50
		{"p99 above", "open", 10, 101, 1000, 2000, true},       // 10 ≤ 50; 101 > 0.05×2000 = 100
		{"both far below", "open", 1, 9, 1000, 2000, false},    // 1 ≤ 50; 9 ≤ 100
		{"no lag counted", "open", 0, 0, 1000, 2000, false},    // nothing to judge
		{"closed loop", "closed", 500, 900, 1000, 2000, false}, // 500 > 50, but no schedule in a closed loop
	} {
		r := &metrics.Run{Load: metrics.Load{Mode: tc.mode}, Latency: map[string]metrics.Percentiles{
			"total": {Count: 100, Min: 1, Mean: 900, P50: tc.total50, P90: tc.total99, P99: tc.total99, P999: tc.total99, Max: tc.total99},
		}}
		if tc.lag99 > 0 {
			r.Latency["schedule_lag"] = metrics.Percentiles{Count: 100, P50: tc.lag50, P90: tc.lag99, P99: tc.lag99, P999: tc.lag99, Max: tc.lag99}
		}
		r.SetLoadMarks()
		if r.Load.StartLagMaterial != tc.want {
			t.Errorf("%s: start_lag_material %v, want %v", tc.name, r.Load.StartLagMaterial, tc.want)
		}
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
	// Without a noise measurement: no limit set, nothing to judge; a limit
	// set rejects the run with the measurement's own error, or a default.
	r.Noise = nil
	a.MaxOtherCPU, a.MaxSteal = 0, 0
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("no noise limit, no noise: %q", why)
	}
	for _, tc := range []struct {
		other, steal plan.Percent
		unmeasured   string
		want         string
	}{
		{0.01, 0, "", "machine noise not measured: the record has no noise measurement (max_other_cpu 1%, max_steal 0%)"},
		{0, 0.01, "sysnoise: /proc/stat is not readable: open /proc/stat: permission denied",
			"machine noise not measured: sysnoise: /proc/stat is not readable: open /proc/stat: permission denied (max_other_cpu 0%, max_steal 1%)"},
	} {
		a.MaxOtherCPU, a.MaxSteal, r.NoiseUnmeasured = tc.other, tc.steal, tc.unmeasured
		if why := method.Judge(a, r); len(why) != 1 || why[0] != tc.want {
			t.Errorf("without a noise measurement: %q, want [%q]", why, tc.want)
		}
	}
}

// agentRecord is agent name's record, shard i of 2, its generator's CPU at
// utilization of its cores, its machine's noise measured or not (why).
func agentRecord(t *testing.T, name string, i int, utilization float64, noise *metrics.Noise, why string) *metrics.Run {
	r := metricstest.Run(t, 1000, 0, 2*time.Millisecond)
	r.Agent = &metrics.Agent{Name: name, Shard: i, Shards: 2}
	r.Host.Hostname = name
	r.Client = metrics.Client{CPUSeconds: utilization * 2 * 12, Cores: 2, Utilization: utilization,
		GeneratorBound: utilization > 0.9}
	r.Complete, r.Noise, r.NoiseUnmeasured = true, noise, why
	return r
}

// TestJudgeMergedGenerator: a merged record is judged by its busiest agent.
// One agent at 99% of its 2 cores and one at 30% (12 s each) merge to the
// mean 64.5% ((23.76 + 7.2) CPU-s ÷ (24 + 24) core-s = 30.96 ÷ 48), below
// max_generator_cpu 90%; the run is rejected all the same, the agent named.
func TestJudgeMergedGenerator(t *testing.T) {
	busy := agentRecord(t, "busy", 1, 0.99, nil, "")
	idle := agentRecord(t, "idle", 0, 0.30, nil, "")
	m, err := metrics.Merge([]*metrics.Run{idle, busy})
	if err != nil {
		t.Fatal(err)
	}
	if u := m.Client.Utilization; u < 0.644 || u > 0.646 || !m.Client.GeneratorBound {
		t.Fatalf("merged utilization %.4f, generator_bound %v: want the mean 0.645, bound", u, m.Client.GeneratorBound)
	}
	a := plan.DefaultMethod().Accept // max_generator_cpu 90%
	want := "generator-bound: agent busy (shard 1/2): its CPU was 99% of 2 cores, above 90%"
	if why := method.Judge(a, m); len(why) != 1 || why[0] != want {
		t.Errorf("merged record: %q, want [%q]", why, want)
	}
	busy.Client.Utilization = 0.85
	if m, err = metrics.Merge([]*metrics.Run{idle, busy}); err != nil {
		t.Fatal(err)
	}
	if why := method.Judge(a, m); len(why) != 0 {
		t.Errorf("busiest agent at 85%%: %q", why)
	}
}

// TestJudgeMergedNoise: with a noise limit, a merged record one of whose
// agents did not measure its machine's noise is rejected, the agent and
// its reason named, although the other agent's noise is in the record.
func TestJudgeMergedNoise(t *testing.T) {
	quiet := &metrics.Noise{WindowS: 10, CPUs: 2, OtherCores: 0.02, OtherShare: 0.01, GeneratorCores: 0.6}
	a1 := agentRecord(t, "a1", 0, 0.3, quiet, "")
	a2 := agentRecord(t, "a2", 1, 0.3, nil, "sysnoise: /proc/stat is not readable: open /proc/stat: no such file or directory")
	m, err := metrics.Merge([]*metrics.Run{a1, a2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Noise == nil {
		t.Fatal("merged record has no noise: want a1's")
	}
	a := plan.DefaultMethod().Accept
	a.MaxOtherCPU = 0.25
	want := "machine noise not measured: agent a2 (shard 1/2): sysnoise: /proc/stat is not readable: " +
		"open /proc/stat: no such file or directory (max_other_cpu 25%, max_steal 0%)"
	if why := method.Judge(a, m); len(why) != 1 || why[0] != want {
		t.Errorf("%q, want [%q]", why, want)
	}
}

// TestReconnectsJudged: the reference target closing its kept-alive
// connections every 5 responses (as Apache's MaxKeepAliveRequests does
// every 100) makes a throughput run reconnect inside its window: the record
// counts it (reconnects, valid on read), the summary and the table show it,
// and acceptance rejects the run above max_reconnect_share (default 10%:
// this run's share is about 20%), and accepts it when the plan allows more.
func TestReconnectsJudged(t *testing.T) {
	r := referenceRun(t, target.Config{MaxRequestsPerConn: 5}, func(spec *runner.Spec) {
		spec.Engine, spec.Path, spec.ExpectSize = vocab.EngineThroughput, "/bytes/16k", 16<<10
		spec.Concurrency, spec.Duration, spec.Warmup = 2, 500*time.Millisecond, 0
	})
	n, req := metrics.Value(r.Reconnects), metrics.Value(r.Requests)
	t.Logf("%d reconnections, %d requests, %d connections opened in the window", n, req, r.ConnectionsOpened)
	if n == 0 || n != r.ConnectionsOpened-2 || r.Errors.Total != 0 {
		t.Fatalf("reconnects %d, want the window's %d connections but the workers' first 2 (errors %v)", n,
			r.ConnectionsOpened, r.Errors.ByClass)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.DecodeRun(data); err != nil {
		t.Errorf("the record is not valid: %v", err)
	}
	var sum, tab bytes.Buffer
	if err := reports.RunSummary(r).Text(&sum); err != nil {
		t.Fatal(err)
	}
	if err := reports.ThroughputTable([]*metrics.Run{r}).Text(&tab); err != nil {
		t.Fatal(err)
	}
	shown := fmt.Sprintf("%d (%.1f%% of requests)", n, float64(n)/float64(req)*100)
	if !strings.Contains(sum.String(), "reconnects   "+shown) || !strings.Contains(tab.String(), shown) {
		t.Errorf("%q not shown:\n%s\n%s", shown, sum.String(), tab.String())
	}
	a := plan.DefaultMethod().Accept
	a.MaxGeneratorCPU = 1
	if why := strings.Join(method.Judge(a, r), "; "); !strings.Contains(why,
		fmt.Sprintf("%d of %d requests", n, req)) || !strings.Contains(why, "above max_reconnect_share 10%") {
		t.Errorf("reasons %q: want the reconnections rejected", why)
	}
	a.MaxReconnectShare = new(plan.Percent(0.5))
	for _, why := range method.Judge(a, r) {
		if strings.Contains(why, "reconnect") {
			t.Errorf("rejected within max_reconnect_share 50%%: %q", why)
		}
	}
}
