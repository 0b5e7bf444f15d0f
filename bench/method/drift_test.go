package method_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
)

// driftRamp is how much slower both targets of the drift test get every
// second of the campaign's clock: their delay starts at driftDelay and
// grows by driftRamp a second (the reference target's --delay and
// --delay-ramp).
const (
	driftDelay = 50 * time.Millisecond
	driftRamp  = 6 * time.Millisecond
)

// driftExec is a scripted pair of identical targets that slow down
// together, steadily, from the campaign's start — the machine or the
// network drifting under a campaign — on the campaign's fake clock: a run
// takes its warm-up and duration on it, and is worth what a closed loop of
// its connections makes against the delay at its middle (c ÷ delay), times
// a noise of −3%, 0 or +3% in turn. Drift and noise are exact: the machine
// running the test has no part in them.
func driftExec(clock *fakeClock) *fakeExec {
	start := clock.t
	return &fakeExec{value: func(req method.Request, n int) (float64, map[string]int64) {
		d := req.Warmup + req.Duration
		mid := clock.t.Add(d / 2).Sub(start).Seconds()
		clock.t = clock.t.Add(d)
		delay := driftDelay.Seconds() + driftRamp.Seconds()*mid
		return float64(req.Concurrency) / delay * (1 + 0.03*float64(n%3-1)), nil
	}}
}

// driftCampaign qualifies the two scripted targets (the true ratio of
// their CPS is 1) with the final runs in order. It returns the ratio of
// their published CPS (the first DUT's over the second's) and the
// campaign's summary.
func driftCampaign(t *testing.T, order string) (float64, *method.Summary) {
	t.Helper()
	pl := testPlan("a", "b")
	pl.Tests = pl.Tests[:1]
	pl.Tests[0].Profiles = pl.Tests[0].Profiles[:1]
	m := &pl.Method
	m.Duration, m.Warmup, m.Cooldown = plan.Duration(time.Second), plan.Duration(300*time.Millisecond), 0
	m.Explore.Concurrency = plan.Range{Min: 64, Max: 64}
	m.Explore.ProbeDuration = plan.Duration(3 * time.Second)
	m.Final = plan.Final{MinAccepted: 3, MaxRuns: 3, Tolerance: 0.10, Order: order}
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := campaign(t, pl, driftExec(clock), t.TempDir())
	c.Now = clock.now
	c.Sleep = func(_ context.Context, d time.Duration) { clock.t = clock.t.Add(d) }
	start := clock.t
	c.Events = func(e method.Event) {
		t.Logf("%5.1fs %-11s %s c=%d seq %d round %d: %.0f CPS accepted %v %v", clock.t.Sub(start).Seconds(), e.Phase,
			e.DUT, e.Level, e.Seq, e.Round, e.Value, e.Accepted, e.Reasons)
	}
	s, err := c.Run(context.Background())
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
	if !(plan.Final{}).Interleaved() {
		t.Fatal("interleaved finals are not the default")
	}
	const tol = 0.10
	inter, si := driftCampaign(t, "")
	seq, ss := driftCampaign(t, plan.OrderSequential)
	show := func(what string, ratio float64, s *method.Summary) string {
		out := fmt.Sprintf("%s: ratio %.3f", what, ratio)
		for _, c := range s.Cells {
			out += fmt.Sprintf("; %s %.0f CPS at c=%d consistent %v unstable %q re-explored %v", c.DUT, c.Value, c.Level,
				c.Consistent, c.Unstable, c.Reexplored != nil)
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
