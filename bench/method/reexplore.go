package method

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Reexploration is what a cell's first final runs gave before it was
// re-explored: they fell short of the exploration at their level by more
// than the tolerance.
type Reexploration struct {
	// Level, Finals and Value are the first frozen level, its final runs
	// and their published value. Finals is empty when the re-exploration
	// found no accepted level: the cell then keeps its first finals.
	Level  int        `json:"level"`
	Finals []FinalRun `json:"finals,omitempty"`
	Value  float64    `json:"value"`
	// Explored is what the exploration measured at Level.
	Explored float64 `json:"explored"`
	// Probes are the re-exploration's runs: the level and its neighbours
	// in the exploration, with the exploration's probe settings.
	Probes []Probe `json:"probes"`
}

// reexplore probes the cell's frozen level and its neighbours again,
// records the first finals in the cell and freezes the best accepted
// level (preferring one where the DUT was saturated, as the search does).
// ok is false when no probe was accepted: the cell keeps its first
// finals.
func (c *Campaign) reexplore(ctx context.Context, f *finalPhase) (ok bool, err error) {
	m := c.Plan.Method
	cell := f.cell
	explored, _ := f.explored()
	_, value, _ := bestOf(f.accepted)
	r := &Reexploration{Level: cell.Level, Value: value, Explored: explored}
	best, bestValue := 0, 0.0
	for _, level := range neighbours(cell, m.Explore.Concurrency.Min, m.Explore.Concurrency.Max) {
		req := f.probe
		req.Concurrency, req.Round = level, 1
		e, err := c.do(ctx, fmt.Sprintf("reexplore|%s|%d",
			cell.key(), level), req, Entry{Round: 1})
		if err != nil {
			return false, err
		}
		r.Probes = append(r.Probes, probeOf(level, e))
		c.Sleep(ctx, time.Duration(m.Cooldown))
		if e.Accepted && e.Value > bestValue {
			best, bestValue = level, e.Value
		}
	}
	cell.Reexplored = r
	if best == 0 {
		return false, nil
	}
	best = prefer(r.Probes, best, float64(m.Explore.MinGain))
	r.Finals = cell.Runs
	f.round, cell.Level, f.req.Concurrency, f.req.Round = 1, best, best, 1
	cell.Runs, f.accepted, cell.Total, cell.Accepted = nil, nil, 0, 0
	return true, nil
}

// neighbours are the levels a re-exploration probes, ascending: the cell's
// level and the explored levels next to it (half and double, within
// [lo, hi], where the exploration has none).
func neighbours(cell *Cell, lo, hi int) []int {
	var levels []int
	for _, p := range cell.Exploration {
		levels = append(levels, p.Level)
	}
	slices.Sort(levels)
	l := cell.Level
	out := []int{l}
	i := slices.Index(levels, l)
	switch {
	case i > 0:
		out = append(out, levels[i-1])
	case l/2 >= lo && l/2 != l:
		out = append(out, l/2)
	}
	switch {
	case i >= 0 && i+1 < len(levels):
		out = append(out, levels[i+1])
	case l*2 <= hi:
		out = append(out, l*2)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
