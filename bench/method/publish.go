package method

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// PublishedSeq is the final run whose value a cell publishes: the best
// accepted one (the first of equals); 0 when none was accepted.
func PublishedSeq(runs []FinalRun) int {
	seq, best := 0, math.Inf(-1)
	for _, r := range runs {
		if r.Accepted && r.Value > best {
			seq, best = r.Seq, r.Value
		}
	}
	return seq
}

// PublishedRun is the record of a cell's published run, nil when none was
// accepted or the ledger does not have it.
func PublishedRun(ledger []*Entry, cell *Cell) *metrics.Run {
	seq := PublishedSeq(cell.Runs)
	if cell.Published > 0 {
		seq = cell.Published
	}
	if seq == 0 {
		return nil
	}
	if e := FinalEntry(ledger, cell, seq); e != nil {
		return e.Run
	}
	return nil
}

// FinalEntry finds a cell's final run seq in the ledger; nil when it is
// not there.
func FinalEntry(ledger []*Entry, cell *Cell, seq int) *Entry {
	for _, e := range ledger {
		if e.Phase == vocab.Final && e.DUT == cell.DUT && e.Engine == cell.Engine && e.Profile == cell.Profile &&
			e.Test == cell.Test && entrySR(e) == cell.SR && e.Run != nil &&
			e.Run.ProtocolName() == cmp.Or(cell.Protocol, vocab.DefaultProtocol) &&
			e.Level == cell.Level && e.Seq == seq && e.Round == cellRound(cell) && e.Repeat == 0 {
			return e
		}
	}
	return nil
}

// entrySR is the session reuse an entry's run was asked for (Cell.SR).
func entrySR(e *Entry) float64 {
	if e.Run != nil && e.Run.Resumption != nil {
		return e.Run.Resumption.Ratio
	}
	return 0
}

// cellRound is the round of a cell's final runs: 1 when they were made
// after a re-exploration.
func cellRound(cell *Cell) int {
	if cell.Reexplored != nil && cell.Reexplored.Finals != nil {
		return 1
	}
	return 0
}

// recordsVerdict is the method's judgement of run records of one cell made
// outside a campaign, by the default acceptance rule.
type recordsVerdict struct {
	Rule      plan.Accept // the rule they were judged by: the default
	Values    []float64   // each record's value (Value)
	Reasons   [][]string  // each record's rejections; none when accepted
	Accepted  int         // how many were accepted
	Published int         // the index of the published record; -1: none
	// Best3 and Spread are bestOf's of the accepted values.
	Best3  []float64
	Spread float64
}

// JudgeRecords judges run records by the method's default rule and picks
// the one to publish. runs must not be empty.
func JudgeRecords(runs []*metrics.Run) recordsVerdict {
	v := recordsVerdict{Rule: plan.DefaultMethod().Accept, Published: -1}
	// Records that all resume sessions are an SR row's: judged as such.
	full := func(r *metrics.Run) bool { return r.Resumption == nil }
	v.Rule.SessionReuse = len(runs) > 0 && !slices.ContainsFunc(runs, full)
	var accepted []float64
	for i, run := range runs {
		v.Values = append(v.Values, value(run))
		v.Reasons = append(v.Reasons, Judge(v.Rule, run))
		if len(v.Reasons[i]) == 0 {
			accepted = append(accepted, v.Values[i])
			if v.Published < 0 || v.Values[i] > v.Values[v.Published] {
				v.Published = i
			}
		}
	}
	v.Accepted = len(accepted)
	v.Best3, _, v.Spread = bestOf(accepted)
	return v
}

// NoAcceptedRun says why nothing is published of runs none of which was
// accepted: "no accepted run: " and at most three of their reasons, alike
// reasons (differing only in figures) once, with how many runs gave them.
func NoAcceptedRun(reasons [][]string) string {
	count := map[string]int{}
	first := map[string]string{}
	var order []string
	for _, rs := range reasons {
		for _, r := range rs {
			k := figures.ReplaceAllString(r, "#")
			if count[k] == 0 {
				order, first[k] = append(order, k), r
			}
			count[k]++
		}
	}
	if len(order) == 0 {
		return "no accepted run"
	}
	const most = 3
	parts := make([]string, 0, most+1)
	for _, k := range order[:min(len(order), most)] {
		r := first[k]
		if n := count[k]; n > 1 {
			r += fmt.Sprintf(" (%d runs)", n)
		}
		parts = append(parts, r)
	}
	if n := len(order) - most; n > 0 {
		parts = append(parts, fmt.Sprintf("%d other reasons", n))
	}
	return "no accepted run: " + strings.Join(parts, "; ")
}

// figures are the numbers in a rejection reason.
var figures = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
