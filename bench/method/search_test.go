package method_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// stepCurve is a capacity curve with a flat step below its true best: 100
// per connection up to 4, flat at 400 from 4 to 16 (exclusive), then its
// best, 1600 at 16, falling by 20 per connection above.
func stepCurve(level int) float64 {
	switch {
	case level <= 4:
		return 100 * float64(level)
	case level < 16:
		return 400
	}
	return 1600 - 20*float64(level-16)
}

// searchPlan is one cell (CPS of one profile), levels 1 to 64, min_gain 5%,
// one final run within a wide tolerance: the exploration decides the level.
func searchPlan() *plan.Plan {
	p := testPlan("a")
	p.Tests = p.Tests[:1]
	p.Tests[0].Profiles = p.Tests[0].Profiles[:1]
	p.Method.Explore.MinGain = 0.05
	p.Method.Final = plan.Final{MinAccepted: 1, MaxRuns: 1, Tolerance: 0.10}
	return p
}

// frozenLevel is the level the exploration chose (before a re-exploration,
// if any).
func frozenLevel(c *method.Cell) int {
	if c.Reexplored != nil {
		return c.Reexplored.Level
	}
	return c.Level
}

// TestSearchPatience: on a curve with a flat step (4 to 8) below its true
// best (16), each exploratory probe ±3% of noise (seeded), the search finds
// the best level in every one of 200 campaigns: a level that does not gain
// is followed by one above before the search stops. The summary lists every
// level probed and why the steps stopped.
func TestSearchPatience(t *testing.T) {
	const seeds = 200
	found := 0
	var stuck []string
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 26))
		fe := &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
			v := stepCurve(req.Concurrency)
			if req.Phase == vocab.Exploratory {
				v *= 1 + 0.03*(2*rng.Float64()-1)
			}
			return v, nil
		}}
		s, err := campaign(t, searchPlan(), fe, t.TempDir()).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c := s.Cells[0]
		if frozenLevel(c) == 16 {
			found++
		} else if len(stuck) < 5 {
			stuck = append(stuck, fmt.Sprintf("seed %d: level %d, exploration %+v", seed, frozenLevel(c), c.Exploration))
		}
	}
	t.Logf("found at 16 in %d of %d seeded searches", found, seeds)
	if found != seeds {
		t.Errorf("the search found the best level (16) in %d of %d seeded searches; elsewhere: %s",
			found, seeds, strings.Join(stuck, "; "))
	}
}

// TestSearchSummary: the summary lists every level probed, in order, and
// why the steps stopped.
func TestSearchSummary(t *testing.T) {
	fe := &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		return stepCurve(req.Concurrency), nil
	}}
	s, err := campaign(t, searchPlan(), fe, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	c := s.Cells[0]
	// The steps to 64 (8 does not gain, 16 does; 32 and 64 do not), 16
	// again (above both neighbours by more than 5%), the midpoints 11, 23.
	if want := []int{1, 2, 4, 8, 16, 32, 64, 16, 11, 23}; c.Search == nil || !slices.Equal(c.Search.Order, want) {
		t.Errorf("search %+v: want the order %v", c.Search, want)
	}
	if got, want := c.Search.Stop, "no gain of min_gain 5% over the best at 32 and 64 in a row"; got != want {
		t.Errorf("stop %q, want %q", got, want)
	}
}

// TestSearchRepeatsDisagreeingProbe: one probe far below both its
// neighbours (a noisy dip at the true best) is probed again, and the
// search freezes that level; the summary keeps the first probe.
func TestSearchRepeatsDisagreeingProbe(t *testing.T) {
	// The true curve peaks at 8 (1600); 16 is 1500. The first probe at 8
	// reads 700: below 4 (800) and 16, so the steps would take 16.
	probes8 := 0
	fe := &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		l := req.Concurrency
		v := map[bool]float64{true: 200 * float64(l), false: 1600 - 6.25*float64(l-8)}[l <= 8]
		if l == 8 && req.Phase == vocab.Exploratory {
			if probes8++; probes8 == 1 {
				v = 700
			}
		}
		return v, nil
	}}
	s, err := campaign(t, searchPlan(), fe, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0]
	if frozenLevel(c) != 8 || c.Search == nil || len(c.Search.Replaced) != 1 || c.Search.Replaced[0].Level != 8 ||
		c.Search.Replaced[0].Value != 700 {
		t.Errorf("level %d, search %+v: want 8, its first probe (700) replaced", frozenLevel(c), c.Search)
	}
	if n := countOf(c.Search.Order, 8); n != 2 {
		t.Errorf("order %v: 8 probed %d times, want 2", c.Search.Order, n)
	}
}

// TestResumeSearch: a campaign interrupted after any exploratory probe (a
// level probed again among them) and resumed makes no probe twice, loses
// none, and gives the summary of a campaign made at once.
func TestResumeSearch(t *testing.T) {
	exec := func() *fakeExec {
		return &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
			return stepCurve(req.Concurrency), nil
		}}
	}
	s, err := campaign(t, searchPlan(), exec(), t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Cells[0].Search.Order; countOf(o, 16) != 2 {
		t.Fatalf("order %v: want 16 (above both neighbours by more than min_gain) probed twice", o)
	}
	resumeAt(t, searchPlan, exec, func(calls int) []int {
		var stops []int
		for stopAfter := 2; stopAfter < calls; stopAfter++ {
			stops = append(stops, stopAfter)
		}
		return stops
	})
}

func countOf(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
