package method

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Confirmation says whether a second campaign (B) confirms a first (A):
// per cell, the two published values, B − A and its percent of A, and
// whether that is within the plans' final.tolerance.
type Confirmation struct {
	// Tolerance is the fraction used to judge (0.05 for ±5%); 0 when
	// neither campaign has its plan, and then no cell is judged.
	Tolerance float64 `json:"tolerance"`
	// ToleranceNote says where Tolerance comes from when the plans differ
	// (the stricter is used) or one or both are missing.
	ToleranceNote string      `json:"tolerance_note,omitempty"`
	Cells         []Confirmed `json:"cells"`
	// Compared counts the cells with a published value on both sides,
	// Confirmed those within the tolerance; Differ names the others.
	Compared  int      `json:"compared"`
	Confirmed int      `json:"confirmed"`
	Differ    []string `json:"differ"`
	// Summary is the verdict in one sentence: "N of M cells confirmed
	// within ±T%; K differ: …", then the unstable cells and the repeats'
	// spreads beyond the tolerance.
	Summary string `json:"summary"`
	// UnstableA and UnstableB name the cells that campaign called
	// unstable (Cell.Unstable).
	UnstableA []string `json:"unstable_a,omitempty"`
	UnstableB []string `json:"unstable_b,omitempty"`
}

// Confirmed is one cell of a Confirmation.
type Confirmed struct {
	Cell string `json:"cell"`
	Unit string `json:"unit"` // CPS or Gbps
	// A and B are the published values; nil when that side has none.
	A *float64 `json:"a"`
	B *float64 `json:"b"`
	// StateA and StateB are StatePublished, or why that side has no value:
	// StateAbsent, "not supported: …", or the cell's failure.
	StateA string `json:"state_a"`
	StateB string `json:"state_b"`
	// Delta is B − A and DeltaPct (B − A) ÷ A × 100, when both sides are
	// published (DeltaPct nil when A is 0).
	Delta    *float64 `json:"delta"`
	DeltaPct *float64 `json:"delta_pct"`
	Verdict  string   `json:"verdict"`
	// UnstableA and UnstableB are that side's Cell.Unstable ("exploration
	// X, finals Y"), if it was unstable.
	UnstableA string `json:"unstable_a,omitempty"`
	UnstableB string `json:"unstable_b,omitempty"`
	// RepeatSpreadA and RepeatSpreadB are that side's spread between the
	// repeats of its final phase (Repeats.Spread), when it made repeats.
	RepeatSpreadA *float64 `json:"repeat_spread_a,omitempty"`
	RepeatSpreadB *float64 `json:"repeat_spread_b,omitempty"`
}

// The states of a side of a Confirmed cell (besides a cell's own
// "not supported: …" and failure).
const (
	StatePublished = "published"
	StateAbsent    = "absent"
)

// The verdicts of a Confirmed cell.
const (
	VerdictConfirmed = "confirmed"    // |Δ%| within the tolerance
	VerdictDiffers   = "differs"      // |Δ%| beyond it
	VerdictUnjudged  = "not judged"   // both published, but no plan gives a tolerance
	VerdictOnlyA     = "only in A"    // B has no such cell
	VerdictOnlyB     = "only in B"    // A has no such cell
	VerdictNoValue   = "not compared" // a side has the cell but no published value
)

// CellPair is one cell of two campaigns, by the key that matched them; A or
// B is nil when that campaign has no such cell.
type CellPair struct {
	Key  string
	A, B *Cell
}

// ConfirmTolerance is the tolerance to judge B against A by: the final
// phase's tolerance of their plans (nil when a campaign has none), the
// stricter when they differ; note says so, or that a plan is missing.
func ConfirmTolerance(a, b *plan.Plan) (tol float64, note string) {
	switch {
	case a == nil && b == nil:
		return 0, "neither campaign has its plan: no tolerance, differences are not judged"
	case a == nil:
		return float64(b.Method.Final.Tolerance), "A has no plan: B's tolerance"
	case b == nil:
		return float64(a.Method.Final.Tolerance), "B has no plan: A's tolerance"
	}
	ta, tb := a.Method.Final.Tolerance, b.Method.Final.Tolerance
	if ta == tb {
		return float64(ta), ""
	}
	return float64(min(ta, tb)), fmt.Sprintf("the plans differ (A ±%s, B ±%s): the stricter is used",
		percent(float64(ta)), percent(float64(tb)))
}

// Confirm judges each pair: both published and |B − A| ≤ tol × |A| is
// confirmed, beyond it differs; a cell on one side only, or without a
// published value on a side, is listed as such and not counted.
func Confirm(pairs []CellPair, tol float64, note string) *Confirmation {
	c := &Confirmation{Tolerance: tol, ToleranceNote: note, Cells: []Confirmed{}, Differ: []string{}}
	for _, p := range pairs {
		cc := Confirmed{Cell: p.Key}
		cc.A, cc.StateA = publishedValue(p.A)
		cc.B, cc.StateB = publishedValue(p.B)
		cc.UnstableA, cc.RepeatSpreadA = stability(p.A)
		cc.UnstableB, cc.RepeatSpreadB = stability(p.B)
		if cc.UnstableA != "" {
			c.UnstableA = append(c.UnstableA, p.Key)
		}
		if cc.UnstableB != "" {
			c.UnstableB = append(c.UnstableB, p.Key)
		}
		if p.A != nil {
			cc.Unit = unitOf(p.A.Engine)
		} else if p.B != nil {
			cc.Unit = unitOf(p.B.Engine)
		}
		switch {
		case p.B == nil:
			cc.Verdict = VerdictOnlyA
		case p.A == nil:
			cc.Verdict = VerdictOnlyB
		case cc.A == nil || cc.B == nil:
			cc.Verdict = VerdictNoValue
		default:
			c.Compared++
			d := *cc.B - *cc.A
			cc.Delta = &d
			if *cc.A != 0 {
				pct := d / *cc.A * 100
				cc.DeltaPct = &pct
			}
			switch {
			case tol <= 0:
				cc.Verdict = VerdictUnjudged
			// A relative margin keeps a difference of exactly the
			// tolerance confirmed despite rounding.
			case math.Abs(d) <= tol*math.Abs(*cc.A)*(1+1e-9):
				cc.Verdict = VerdictConfirmed
				c.Confirmed++
			default:
				cc.Verdict = VerdictDiffers
				what := p.Key
				if cc.DeltaPct != nil {
					what += fmt.Sprintf(" (%+.1f%%)", *cc.DeltaPct)
				}
				c.Differ = append(c.Differ, what)
			}
		}
		c.Cells = append(c.Cells, cc)
	}
	c.Summary = c.summary()
	return c
}

// summary is the one-line verdict.
func (c *Confirmation) summary() string {
	cells := func(n int) string {
		if n == 1 {
			return "1 cell"
		}
		return fmt.Sprintf("%d cells", n)
	}
	var s string
	if c.Tolerance <= 0 {
		s = fmt.Sprintf("%s compared; not judged (no tolerance)", cells(c.Compared))
	} else {
		s = fmt.Sprintf("%d of %s confirmed within ±%s", c.Confirmed, cells(c.Compared), percent(c.Tolerance))
		if k := len(c.Differ); k > 0 {
			verb := "differ"
			if k == 1 {
				verb = "differs"
			}
			s += fmt.Sprintf("; %d %s: %s", k, verb, strings.Join(c.Differ, ", "))
		}
	}
	if n := len(c.Cells) - c.Compared; n > 0 {
		s += fmt.Sprintf("; %s not compared (on one side only or without a published value)", cells(n))
	}
	for _, side := range []struct {
		name     string
		unstable []string
	}{{"A", c.UnstableA}, {"B", c.UnstableB}} {
		if len(side.unstable) > 0 {
			s += fmt.Sprintf("; unstable in %s (finals short of the exploration): %s",
				side.name, strings.Join(side.unstable, ", "))
		}
	}
	for _, side := range []string{"A", "B"} {
		var over []string
		for _, cc := range c.Cells {
			sp := cc.RepeatSpreadA
			if side == "B" {
				sp = cc.RepeatSpreadB
			}
			if sp != nil && c.Tolerance > 0 && *sp > c.Tolerance {
				over = append(over, fmt.Sprintf("%s (%.1f%%)", cc.Cell, *sp*100))
			}
		}
		if len(over) > 0 {
			s += fmt.Sprintf("; repeats of %s spread beyond ±%s: %s", side, percent(c.Tolerance), strings.Join(over, ", "))
		}
	}
	return s
}

// stability is a cell's Unstable and its repeats' spread (nil without
// repeats).
func stability(c *Cell) (unstable string, spread *float64) {
	if c == nil {
		return "", nil
	}
	if c.Repeats != nil {
		v := c.Repeats.Spread
		spread = &v
	}
	return c.Unstable, spread
}

// publishedValue is a cell's published value and its state: the value
// when a final run was accepted (as the summary's table publishes it), else
// nil and why.
func publishedValue(c *Cell) (*float64, string) {
	switch {
	case c == nil:
		return nil, StateAbsent
	case c.Unsupported != "":
		return nil, "not supported: " + c.Unsupported
	case c.Accepted == 0:
		if c.Failed != "" {
			return nil, c.Failed
		}
		return nil, "no accepted run"
	}
	v := c.Value
	return &v, StatePublished
}

// percent writes a fraction as a percentage, without float noise: "7%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*100*1e6)/1e6, 'g', -1, 64) + "%"
}

func unitOf(e vocab.Engine) string {
	if e == vocab.EngineThroughput {
		return "Gbps"
	}
	return "CPS"
}
