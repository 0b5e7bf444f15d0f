package method_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestRepeat: final.repeat 3 makes the final phase three times, each
// repeat interleaved across the cells (repeat r of every cell before
// r+1); each repeat's published value is in the cell with their spread,
// (max − min) / max, beside the tolerance; the ledger marks the repeats.
func TestRepeat(t *testing.T) {
	p := onePlan("a", "b")
	p.Method.Final.Repeat = 3
	dir := t.TempDir()
	c := campaign(t, p, &fakeExec{}, dir)
	var order []string
	c.Events = func(e method.Event) {
		if e.Phase == vocab.Final {
			order = append(order, fmt.Sprintf("%s%d.%d", e.DUT, e.Seq, e.Repeat))
		}
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	want := "a1.0 b1.0 a2.0 b2.0 a3.0 b3.0 a1.2 b1.2 a2.2 b2.2 a3.2 b3.2 a1.3 b1.3 a2.3 b2.3 a3.3 b3.3"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order\n%s\nwant\n%s", got, want)
	}
	for _, cell := range s.Cells {
		r := cell.Repeats
		if r == nil || !reflect.DeepEqual(r.Values, []float64{1600, 1600, 1600}) || r.Spread != 0 || r.Exceeds || r.Tolerance != 0.03 || !cell.Consistent {
			t.Errorf("cell %s: repeats %+v, consistent %v", cell.DUT, r, cell.Consistent)
		}
	}
	entries, err := method.ReadLedger(filepath.Join(dir, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	byRepeat := map[int]int{}
	for _, e := range entries {
		if e.Phase == vocab.Final {
			byRepeat[e.Repeat]++
		}
	}
	if want := map[int]int{0: 6, 2: 6, 3: 6}; !reflect.DeepEqual(byRepeat, want) {
		t.Errorf("final runs by repeat in the ledger %v, want %v", byRepeat, want)
	}
}

// TestRepeatSpread: repeats that disagree by more than the tolerance are
// flagged, and the cell is not consistent; within it, it stays consistent.
func TestRepeatSpread(t *testing.T) {
	for _, tc := range []struct {
		second  float64 // the second repeat's value (the first: 1600)
		exceeds bool
	}{{1580, false}, {1500, true}} {
		p := onePlan("a")
		p.Method.Final.Repeat = 2
		exec := finalRunsExplored(curve, func(n int) (float64, map[string]int64) {
			if n <= 3 {
				return 1600, nil
			}
			return tc.second, nil
		})
		s, err := campaign(t, p, exec, t.TempDir()).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		validSummary(t, s)
		c := s.Cells[0]
		r := c.Repeats
		want := (1600 - tc.second) / 1600
		if r == nil || !reflect.DeepEqual(r.Values, []float64{1600, tc.second}) || math.Abs(r.Spread-want) > 1e-12 || r.Exceeds != tc.exceeds {
			t.Errorf("second repeat %v: repeats %+v, want spread %v, exceeds %v", tc.second, r, want, tc.exceeds)
		}
		if c.Consistent == tc.exceeds || s.Rows[0].Consistent == tc.exceeds {
			t.Errorf("second repeat %v: cell consistent %v, row %v", tc.second, c.Consistent, s.Rows[0].Consistent)
		}
		if c.Value != 1600 {
			t.Errorf("published %v, want the first repeat's 1600", c.Value)
		}
	}
}

// TestResumeRepeat: a campaign with repeats, interrupted and resumed,
// makes no run twice and gives the same summary.
func TestResumeRepeat(t *testing.T) {
	p := func() *plan.Plan {
		pl := onePlan("a", "b")
		pl.Method.Final.Repeat = 2
		return pl
	}
	straight := &fakeExec{}
	want, err := campaign(t, p(), straight, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAfter := range []int{5, 15, 20, straight.calls - 1} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		first := &fakeExec{}
		c := campaign(t, p(), first, dir)
		c.Events = func(method.Event) {
			if first.calls == stopAfter {
				cancel()
			}
		}
		if _, err := c.Run(ctx); !errors.Is(err, method.ErrInterrupted) {
			t.Fatalf("stop after %d: %v", stopAfter, err)
		}
		cancel()
		second := &fakeExec{}
		got, err := campaign(t, p(), second, dir).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if first.calls+second.calls != straight.calls || !reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)) {
			t.Errorf("stop after %d: %d + %d runs (straight %d), summaries equal %v", stopAfter, first.calls, second.calls, straight.calls,
				reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)))
		}
	}
}
