package target

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFaultShares: several faults take disjoint, exact shares of the
// connections: after every n connections, each kind has been picked for
// floor(n×fraction) or ceil(n×fraction) of them (within 1), whatever the
// fractions (adding up to 1 or less), and no connection gets two (pick
// returns one kind or none).
func TestFaultShares(t *testing.T) {
	sets := [][]Fault{
		{{"alert", 0.5}, {"status-503", 0.5}},
		{{"alert", 0.25}, {"status-503", 0.25}},
		{{"alert", 0.5}, {"status-503", 0.25}},
		{{"alert", 1.0 / 3}, {"status-503", 1.0 / 3}, {"stall", 1.0 / 3}},
		{{"alert", 0.7}, {"status-503", 0.2}, {"stall", 0.1}},
		{{"alert", 0.001}},
	}
	rng := rand.New(rand.NewPCG(1, 27))
	for range 200 { // random sets: up to every kind, fractions adding up to at most 1
		kinds := rng.Perm(len(FaultKinds))[:1+rng.IntN(len(FaultKinds))]
		scale := rng.Float64()
		if rng.IntN(3) == 0 {
			scale = 1
		}
		w, sum := make([]float64, len(kinds)), 0.0
		for i := range w {
			w[i] = rng.Float64()
			sum += w[i]
		}
		var set []Fault
		for i, k := range kinds {
			set = append(set, Fault{FaultKinds[k], max(w[i]*scale/sum, 1e-6)})
		}
		if CheckFaults(set) == nil {
			sets = append(sets, set)
		}
	}
	const n = 5000
	for _, set := range sets {
		f := newFaults(set)
		got := map[string]int{}
		worst := 0.0
		for i := 1; i <= n; i++ {
			got[f.pick()]++
			for _, k := range set {
				worst = max(worst, math.Abs(float64(got[k.Kind])-float64(i)*k.Fraction))
			}
		}
		if worst >= 1 {
			t.Errorf("%v: a kind's count strayed %.3f from n×fraction", set, worst)
		}
		total := 0
		for _, c := range got {
			total += c
		}
		if total != n {
			t.Errorf("%v: %d picks for %d connections", set, total, n)
		}
	}
}

func TestCheckFaults(t *testing.T) {
	for _, tc := range []struct {
		set  []Fault
		want string // "" is accepted
	}{
		{[]Fault{{"alert", 0.5}, {"status-503", 0.5}}, ""},
		{[]Fault{{"alert", 0.7}, {"status-503", 0.2}, {"stall", 0.1}}, ""},
		{[]Fault{{"alert", 0.5}, {"alert", 0.25}}, "fault alert is given twice"},
		{[]Fault{{"alert", 0.5}, {"status-503", 0.6}}, "add up to 1.1, more than 1"},
		{[]Fault{{"alert", 1}, {"stall", 1}}, "add up to 2, more than 1"},
		{[]Fault{{"alert", 0}}, "not in (0, 1]"},
		{[]Fault{{"boom", 0.1}}, "unknown fault"},
	} {
		err := CheckFaults(tc.set)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.set, err, tc.want)
		}
	}
}
