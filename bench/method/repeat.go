package method

import (
	"context"
	"slices"
)

// Repeats is the repeatability of a cell: with final.repeat N above 1 the
// final phase is made N times at the frozen level, each publishing a value.
type Repeats struct {
	// Values are the published values of the repeats, the first being the
	// cell's Value; 0 for a repeat none of whose runs was accepted.
	Values []float64 `json:"values"`
	// Spread is (max − min) / max of Values (RepeatSpread).
	Spread float64 `json:"spread"`
	// Tolerance is the plan's final.tolerance; Exceeds says Spread is
	// larger, and the cell is then not consistent.
	Tolerance float64 `json:"tolerance"`
	Exceeds   bool    `json:"exceeds,omitempty"`
}

// repeat makes repeats 2..n of the final phase of cells, interleaved, and
// records each cell's Repeats.
func (c *Campaign) repeat(ctx context.Context, fs []*finalPhase, n int) error {
	tol := float64(c.Plan.Method.Final.Tolerance)
	for _, f := range fs {
		f.cell.Repeats = &Repeats{Values: []float64{f.cell.Value}, Tolerance: tol}
	}
	for r := 2; r <= n; r++ {
		sets, err := c.finalPass(ctx, fs, r)
		if err != nil {
			return err
		}
		for i, f := range fs {
			_, v, _ := bestOf(sets[i].accepted)
			f.cell.Repeats.Values = append(f.cell.Repeats.Values, v)
		}
	}
	for _, f := range fs {
		rp := f.cell.Repeats
		rp.Spread = RepeatSpread(rp.Values)
		if rp.Spread > tol {
			rp.Exceeds, f.cell.Consistent = true, false
		}
	}
	return nil
}

// RepeatSpread is (max − min) / max of the repeats' values; 0 when there
// are fewer than two or the best is not positive.
func RepeatSpread(vs []float64) float64 {
	if len(vs) < 2 {
		return 0
	}
	top, low := slices.Max(vs), slices.Min(vs)
	if top <= 0 {
		return 0
	}
	return (top - low) / top
}
