package method_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

func TestConfirm(t *testing.T) {
	pub := func(v float64) *method.Cell {
		return &method.Cell{Engine: vocab.EngineCPS, Value: v, Accepted: 3, Total: 3}
	}
	pairs := []method.CellPair{
		{Key: "edge", A: pub(100), B: pub(110)},  // exactly the tolerance: confirmed
		{Key: "over", A: pub(100), B: pub(89.9)}, // beyond it, downwards
		{Key: "zero", A: pub(0), B: pub(0)},      // no % of 0, but equal
		{Key: "unsupported", A: &method.Cell{Engine: vocab.EngineThroughput, Unsupported: "handshake failure"}, B: pub(5)},
		{Key: "failed", A: pub(100), B: &method.Cell{Engine: vocab.EngineCPS, Failed: "no final run was accepted", Total: 5}},
	}
	c := method.Confirm(pairs, 0.10, "")
	want := []string{method.VerdictConfirmed, method.VerdictDiffers, method.VerdictConfirmed, method.VerdictNoValue, method.VerdictNoValue}
	for i, cc := range c.Cells {
		if cc.Verdict != want[i] {
			t.Errorf("%s: %s, want %s", cc.Cell, cc.Verdict, want[i])
		}
	}
	if c.Cells[2].DeltaPct != nil {
		t.Errorf("zero: Δ%% of 0 is %v, want none", *c.Cells[2].DeltaPct)
	}
	if s := c.Cells[3].StateA; s != "not supported: handshake failure" || c.Cells[3].A != nil || c.Cells[3].Unit != "Gbps" {
		t.Errorf("unsupported: A %v, state %q, unit %s", c.Cells[3].A, s, c.Cells[3].Unit)
	}
	const summary = "2 of 3 cells confirmed within ±10%; 1 differs: over (-10.1%); 2 cells not compared (on one side only or without a published value)"
	if c.Summary != summary {
		t.Errorf("summary %q\nwant %q", c.Summary, summary)
	}
	if c := method.Confirm(pairs[:1], 0, "none"); c.Cells[0].Verdict != method.VerdictUnjudged || !strings.Contains(c.Summary, "not judged") {
		t.Errorf("no tolerance: %s, %q", c.Cells[0].Verdict, c.Summary)
	}
}

func TestConfirmTolerance(t *testing.T) {
	p := func(tol plan.Percent) *plan.Plan {
		return &plan.Plan{Method: plan.Method{Final: plan.Final{Tolerance: tol}}}
	}
	for _, tc := range []struct {
		a, b *plan.Plan
		tol  float64
		note string
	}{
		{p(0.05), p(0.05), 0.05, ""},
		{p(0.10), p(0.07), 0.07, "the plans differ (A ±10%, B ±7%): the stricter is used"},
		{nil, p(0.03), 0.03, "A has no plan: B's tolerance"},
		{nil, nil, 0, "neither campaign has its plan: no tolerance, differences are not judged"},
	} {
		tol, note := method.ConfirmTolerance(tc.a, tc.b)
		if tol != tc.tol || note != tc.note {
			t.Errorf("%v, %q; want %v, %q", tol, note, tc.tol, tc.note)
		}
	}
}

// TestConfirmStability: compare of two campaigns says per side which cells
// were unstable and, when a side made repeats, their spread, flagging in
// the summary the spreads beyond the tolerance.
func TestConfirmStability(t *testing.T) {
	pub := func(v float64) *method.Cell {
		return &method.Cell{Engine: vocab.EngineCPS, Value: v, Accepted: 3, Total: 3}
	}
	unstable := pub(138)
	unstable.Unstable = "exploration 217 CPS, finals 161 CPS"
	repeated := pub(1000)
	repeated.Repeats = &method.Repeats{Values: []float64{1000, 850}, Spread: 0.15, Tolerance: 0.10, Exceeds: true}
	steady := pub(1000)
	steady.Repeats = &method.Repeats{Values: []float64{1000, 980}, Spread: 0.02, Tolerance: 0.10}
	c := method.Confirm([]method.CellPair{
		{Key: "p384", A: unstable, B: pub(258)},
		{Key: "p256", A: pub(997), B: repeated},
		{Key: "rsa", A: steady, B: pub(1000)},
	}, 0.10, "")
	if c.Cells[0].UnstableA != unstable.Unstable || c.Cells[0].UnstableB != "" || len(c.UnstableA) != 1 || c.UnstableA[0] != "p384" || len(c.UnstableB) != 0 {
		t.Errorf("unstable: cell %+v, A %v, B %v", c.Cells[0], c.UnstableA, c.UnstableB)
	}
	if sp := c.Cells[1].RepeatSpreadB; sp == nil || *sp != 0.15 || c.Cells[1].RepeatSpreadA != nil {
		t.Errorf("repeat spreads of p256: A %v, B %v", c.Cells[1].RepeatSpreadA, sp)
	}
	for _, want := range []string{"unstable in A (finals short of the exploration): p384", "repeats of B spread beyond ±10%: p256 (15.0%)"} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("summary %q lacks %q", c.Summary, want)
		}
	}
	if strings.Contains(c.Summary, "rsa (") || strings.Contains(c.Summary, "unstable in B") {
		t.Errorf("summary %q flags a steady side", c.Summary)
	}
}
