package method_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// driftRamp is how much slower both targets of the drift test get every
// second: their delay starts at driftDelay and grows by driftRamp a second.
const (
	driftDelay = 50 * time.Millisecond
	driftRamp  = 6 * time.Millisecond
)

// driftCampaign qualifies two identical reference targets (the true ratio
// of their CPS is 1) that slow down together, steadily, from the same
// instant — the machine or the network drifting under a campaign — with
// the final runs in order. It returns the ratio of their published CPS
// (the first DUT's over the second's) and the campaign's summary.
func driftCampaign(t *testing.T, order string) (float64, *method.Summary) {
	t.Helper()
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := time.Now()
	var duts []plan.DUT
	for _, name := range []string{"a", "b"} {
		tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: driftDelay, DelayRamp: driftRamp, RampStart: start,
			DelayJitter: 150 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tg.Close() })
		ca := filepath.Join(dir, name+"-ca.pem")
		if err := os.WriteFile(ca, tg.CA.CertPEM(), 0o644); err != nil {
			t.Fatal(err)
		}
		duts = append(duts, plan.DUT{Name: name, URL: "https://" + tg.Listener(p.Name).Addr + "/", CACert: ca})
	}
	m := plan.QuickMethod()
	m.Duration, m.Warmup, m.Cooldown = plan.Duration(time.Second), plan.Duration(300*time.Millisecond), 0
	m.Explore.Concurrency = plan.Range{Min: 64, Max: 64}
	m.Explore.ProbeDuration = plan.Duration(3 * time.Second)
	m.Accept.MaxGeneratorCPU = 1 // the machine running the tests may be busy
	m.Final = plan.Final{MinAccepted: 3, MaxRuns: 3, Tolerance: 0.10, Order: order}
	pl := &plan.Plan{Name: "drift", DUTs: duts, Tests: []plan.Test{{Engine: vocab.EngineCPS, Path: "/1k", Profiles: []string{p.Name}}}, Method: m}
	if err := pl.Check(profiles.Builtin()); err != nil {
		t.Fatal(err)
	}
	c := campaign(t, pl, &method.Local{UserAgent: "tlsbench-test"}, dir)
	c.Events = func(e method.Event) {
		t.Logf("%5.1fs %-11s %s c=%d seq %d round %d: %.0f CPS accepted %v %v", time.Since(start).Seconds(), e.Phase, e.DUT, e.Level, e.Seq, e.Round, e.Value, e.Accepted, e.Reasons)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Cells[0], s.Cells[1]
	if a.Value == 0 || b.Value == 0 {
		t.Fatalf("no published value: %+v %+v", a, b)
	}
	return a.Value / b.Value, s
}

// TestDrift: two identical DUTs, whose speed drifts down during the
// campaign alike. With the final runs interleaved — the default order —
// both DUTs' published runs are made close in time, and their ratio stays
// within the tolerance (10%) of the true one (1); in sequential order the
// second DUT's finals come after its whole exploration, on a slower
// machine, and the ratio is off by more than the tolerance.
func TestDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("two campaigns of about 15 s each")
	}
	if !(plan.Final{}).Interleaved() {
		t.Fatal("interleaved finals are not the default")
	}
	const tol = 0.10
	niceTest(t)
	inter, si := driftCampaign(t, "")
	seq, ss := driftCampaign(t, plan.OrderSequential)
	show := func(what string, ratio float64, s *method.Summary) string {
		out := fmt.Sprintf("%s: ratio %.3f", what, ratio)
		for _, c := range s.Cells {
			out += fmt.Sprintf("; %s %.0f CPS at c=%d consistent %v unstable %q re-explored %v", c.DUT, c.Value, c.Level, c.Consistent, c.Unstable, c.Reexplored != nil)
		}
		return out
	}
	t.Log(show("interleaved", inter, si))
	t.Log(show("sequential", seq, ss))
	if inter < 1-tol || inter > 1+tol {
		t.Errorf("interleaved finals: published ratio %.3f, want within %.0f%% of 1", inter, tol*100)
	}
	if seq >= 1-tol && seq <= 1+tol {
		t.Errorf("sequential finals: published ratio %.3f, within %.0f%% of 1: the drift did not show", seq, tol*100)
	}
}

// niceTest raises the priority of the test process's threads (nice −10,
// which root may; new threads inherit it), so that the machine's other
// load (builds, other tests) does not drown the drift the test makes. Not
// root, the test runs as it is.
func niceTest(t *testing.T) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, -10); err != nil {
			t.Logf("priority not raised: %v", err)
			return
		}
	}
}
