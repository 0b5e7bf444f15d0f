package method_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// fakeClock is the campaign's clock in the progress tests: runs and
// cool-downs advance it, nothing waits.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// timedExec is a fakeExec whose runs take their warm-up and duration plus a
// fixed overhead on the fake clock; halfway through each it samples the
// campaign's status.
type timedExec struct {
	*fakeExec
	clock    *fakeClock
	overhead time.Duration
	c        *method.Campaign
	sample   func(method.Progress)
}

func (e *timedExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	d := req.Warmup + req.Duration + e.overhead
	e.clock.t = e.clock.t.Add(d / 2)
	e.sample(e.c.Status())
	e.clock.t = e.clock.t.Add(d - d/2)
	return e.fakeExec.Run(ctx, req)
}

type progressSample struct {
	at time.Time
	p  method.Progress
}

// runProgress runs a campaign of p on the fake clock and returns every
// progress seen (each change, and halfway through each run), the status at
// the end, and the number of runs made.
func runProgress(t *testing.T, p *plan.Plan, fe *fakeExec, dir string) ([]progressSample, method.Progress, int) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var samples []progressSample
	sample := func(pr method.Progress) { samples = append(samples, progressSample{clock.t, pr}) }
	exec := &timedExec{fakeExec: fe, clock: clock, overhead: 700 * time.Millisecond, sample: sample}
	c := campaign(t, p, exec, dir)
	exec.c = c
	c.Now, c.Watch = clock.now, sample
	c.Sleep = func(_ context.Context, d time.Duration) { clock.t = clock.t.Add(d) }
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The last sample: when Do returned.
	samples = append(samples, progressSample{clock.t, c.Status()})
	return samples, c.Status(), fe.calls
}

func TestProgressEstimate(t *testing.T) {
	for _, order := range []string{plan.OrderInterleaved, plan.OrderSequential} {
		t.Run(order, func(t *testing.T) {
			p := testPlan("a", "b")
			p.Method.Cooldown = plan.Duration(2 * time.Second)
			p.Method.Final.Order = order
			// DUT b refuses the first profile (not supported), and its
			// exploration of the second test fails: the bound drops.
			fe := &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
				switch {
				case req.DUT.Name == "b" && req.Profile.Name == p.Tests[0].Profiles[0] && req.Test.Engine == p.Tests[0].Engine:
					return 0, map[string]int64{"handshake": 5}
				case req.DUT.Name == "b" && req.Test.Engine == p.Tests[1].Engine && req.Phase == vocab.Exploratory:
					return curve(req.Concurrency), map[string]int64{"reset": 5}
				}
				return curve(req.Concurrency), nil
			}}
			samples, last, calls := runProgress(t, p, fe, t.TempDir())
			end := samples[len(samples)-1].at

			if got, want := last.RunsDone, calls; got != want {
				t.Errorf("RunsDone = %d at the end, want the %d runs made", got, want)
			}
			if last.RunsLeft != 0 || last.Remaining != 0 || last.Running {
				t.Errorf("at the end: %d runs left, %s remaining, running %v; want none", last.RunsLeft, last.Remaining, last.Running)
			}
			if last.CellsDone != last.Cells || last.Cells != 2*len(p.Tests)*len(p.Tests[0].Profiles) {
				t.Errorf("cells %d of %d done at the end", last.CellsDone, last.Cells)
			}
			if last.Overhead != 700*time.Millisecond {
				t.Errorf("Overhead = %s, want the fake's 700ms", last.Overhead)
			}
			if first := samples[0].p; first.RunsLeft < calls || first.RunsDone != 0 {
				t.Errorf("at the start: %d runs left at most, %d done; the campaign made %d", first.RunsLeft, first.RunsDone, calls)
			}
			measured := false
			prevEnd, ends := time.Duration(-1), 0
			for i, s := range samples {
				if s.p.RunsDone+s.p.RunsLeft < calls {
					t.Fatalf("sample %d: %d done + %d left at most < %d made", i, s.p.RunsDone, s.p.RunsLeft, calls)
				}
				if s.p.Run < 1 && s.p.DUT != "" || s.p.Run > s.p.Of {
					t.Fatalf("sample %d: run %d of %d", i, s.p.Run, s.p.Of)
				}
				if s.p.Phase == vocab.Final && s.p.Of != p.Method.Final.MaxRuns {
					t.Fatalf("sample %d: final run of %d, want of %d", i, s.p.Of, p.Method.Final.MaxRuns)
				}
				// Once a run has been measured (its overhead known), the
				// estimate is never below the time the campaign took.
				if measured {
					if truth := end.Sub(s.at); s.p.Remaining < truth {
						t.Fatalf("sample %d (%s %s run %d/%d): estimate %s below the true remaining %s", i, s.p.Phase, s.p.Cell(), s.p.Run, s.p.Of, s.p.Remaining, truth)
					}
				}
				if s.p.Overhead > 0 {
					measured = true
				}
				// As runs complete (the samples between runs), the estimate
				// decreases.
				if measured && !s.p.Running && s.p.RunsDone > ends {
					if prevEnd >= 0 && s.p.Remaining >= prevEnd {
						t.Fatalf("sample %d: after run %d the estimate is %s, not below %s after the run before", i, s.p.RunsDone, s.p.Remaining, prevEnd)
					}
					prevEnd, ends = s.p.Remaining, s.p.RunsDone
				}
			}
			if ends != calls {
				t.Errorf("the estimate was followed over %d run ends, want %d", ends, calls)
			}
		})
	}
}

// TestProgressResumed: the runs of a resumed campaign taken from its ledger
// count as done (cached), and the counts are those of a campaign made at
// once.
func TestProgressResumed(t *testing.T) {
	p := testPlan("a")
	p.Tests = p.Tests[:1]
	dir := t.TempDir()
	_, whole, calls := runProgress(t, p, &fakeExec{}, dir)
	_, again, calls2 := runProgress(t, p, &fakeExec{}, dir)
	if calls2 != 0 {
		t.Fatalf("the resumed campaign made %d runs, want 0", calls2)
	}
	if again.RunsDone != whole.RunsDone || again.RunsCached != calls || again.RunsLeft != 0 || again.Remaining != 0 {
		t.Errorf("resumed: %d done, %d cached, %d left, %s remaining; want %d, %d, 0, 0", again.RunsDone, again.RunsCached, again.RunsLeft, again.Remaining, whole.RunsDone, calls)
	}
}

// TestProgressWorstCase: a campaign that takes the plan's worst case (every
// exploration makes all its probes, two levels probed again among them; the final runs never agree and fall
// short of the exploration, so that the cell is re-explored around its
// level, its three probes accepted, and its finals made again; then the
// repeats) ends exactly when the estimate said, from the first measured run
// on.
func TestProgressWorstCase(t *testing.T) {
	for _, repeat := range []int{1, 3} {
		t.Run(fmt.Sprintf("repeat%d", repeat), func(t *testing.T) { testProgressWorstCase(t, repeat) })
	}
}

func testProgressWorstCase(t *testing.T, repeat int) {
	p := testPlan("a")
	p.Method.Cooldown = plan.Duration(2 * time.Second)
	p.Method.Final.Repeat = repeat
	last := p.Method.Explore.Concurrency.Max
	probed := map[string]int{} // by cell and level
	fe := &fakeExec{value: func(req method.Request, n int) (float64, map[string]int64) {
		key := fmt.Sprint(req.Profile.Name, req.Test.Engine, req.Concurrency)
		if req.Phase == vocab.Exploratory && req.Round == 0 {
			probed[key]++
		}
		switch {
		case req.Phase == vocab.Final:
			// Each run half the one before: accepted, never within the
			// tolerance of another, far below the exploration.
			return float64(req.Concurrency) / float64(int(1)<<(n%20+1)), nil
		case req.Concurrency == last:
			return 10, nil // the geometric steps go to the last; the best is the one before
		case (req.Concurrency == 4 || req.Concurrency == 16) && probed[key] == 1 && req.Round == 0:
			return 1, nil // below both neighbours: probed again
		}
		return float64(req.Concurrency), nil
	}}
	samples, end, calls := runProgress(t, p, fe, t.TempDir())
	if want := samples[0].p.RunsLeft; calls != want {
		t.Fatalf("the worst case made %d runs, the plan's bound is %d", calls, want)
	}
	if end.RunsDone != calls || end.RunsLeft != 0 || end.Remaining != 0 {
		t.Errorf("at the end: %d done, %d left, %s remaining", end.RunsDone, end.RunsLeft, end.Remaining)
	}
	stop := samples[len(samples)-1].at
	measured := false
	for i, s := range samples {
		if measured {
			if truth := stop.Sub(s.at); s.p.Remaining != truth {
				t.Fatalf("sample %d (%s %s run %d/%d, running %v): estimate %s, true remaining %s", i, s.p.Phase, s.p.Cell(), s.p.Run, s.p.Of, s.p.Running, s.p.Remaining, truth)
			}
		}
		measured = s.p.Overhead > 0
	}
}
