package method_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// boundExec is a fakeExec whose runs at bound connections or more use 93%
// of the generator's cores (rejected by max_generator_cpu 90%).
type boundExec struct {
	*fakeExec
	bound int
}

func (b *boundExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	r, err := b.fakeExec.Run(ctx, req)
	if err == nil && req.Concurrency >= b.bound {
		r.Client.Utilization, r.Client.GeneratorBound = 0.93, true
	}
	return r, err
}

// TestSearchBelowGeneratorBound: explore.concurrency.min 4, the generator
// saturated from 2 connections on (as the lab's single core at c=2): the
// search tries 2, then 1, and freezes 1 instead of publishing nothing.
func TestSearchBelowGeneratorBound(t *testing.T) {
	p := searchPlan()
	p.Method.Explore.Concurrency.Min = 4
	s, err := campaign(t, p, &boundExec{fakeExec: &fakeExec{}, bound: 2}, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0]
	if c.Level != 1 || c.Accepted == 0 || c.Failed != "" || !slices.Equal(c.Search.Order[:3], []int{4, 2, 1}) {
		t.Errorf("level %d, accepted %d, failed %q, order %v: want 1 frozen after 4, 2, 1",
			c.Level, c.Accepted, c.Failed, c.Search.Order)
	}
}

// TestAtCeiling: a device that still gains at explore.concurrency.max is
// frozen there and marked at_ceiling; one whose best is below it is not.
func TestAtCeiling(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want bool
	}{{8, true}, {64, false}} {
		p := searchPlan()
		p.Method.Explore.Concurrency.Max = tc.max
		s, err := campaign(t, p, &fakeExec{}, t.TempDir()).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		validSummary(t, s) // at_ceiling is in summary.json's schema
		if c := s.Cells[0]; c.AtCeiling != tc.want || tc.want && c.Level != tc.max {
			t.Errorf("max %d: level %d, at_ceiling %v, want %v (stop %q)", tc.max, c.Level, c.AtCeiling, tc.want, c.Search.Stop)
		}
	}
}
