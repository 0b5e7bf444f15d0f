package main

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestParseRefuses checks that bad input is a one-line usage error (exit 2)
// naming the problem, before anything is built.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no base revision"},
		{[]string{"--base", "HEAD", "--rounds", "1"}, "at least 2 rounds"},
		{[]string{"--base", "HEAD", "--duration", "10ms"}, "at least 1s"},
		{[]string{"--base", "HEAD", "--profiles", "nope"}, "--profiles"},
		{[]string{"--base", "HEAD", "extra"}, `unexpected argument "extra"`},
	} {
		_, err := parse(c.args)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parse(%q) = %v, want a one-line usage error containing %q", c.args, err, c.want)
		}
	}
	if o, err := parse([]string{"--base", "HEAD~1"}); err != nil || len(o.profiles) != 3 || o.rounds < 2 {
		t.Errorf("parse(--base HEAD~1) = %+v, %v; want the seed profiles and the default rounds", o, err)
	}
}

// TestPairedRatio: the rounds' ratios' geometric mean and its interval.
func TestPairedRatio(t *testing.T) {
	m, lo, hi := pairedRatio([]float64{100, 200, 400}, []float64{110, 220, 440})
	if math.Abs(m-1.1) > 1e-12 || math.Abs(lo-1.1) > 1e-12 || math.Abs(hi-1.1) > 1e-12 {
		t.Errorf("equal ratios 1.1: %g [%g, %g]", m, lo, hi)
	}
	m, lo, hi = pairedRatio([]float64{100, 100, 100, 100}, []float64{90, 110, 95, 105})
	if !(lo < 1 && 1 < hi) || math.Abs(m-math.Pow(0.9*1.1*0.95*1.05, 0.25)) > 1e-12 {
		t.Errorf("ratios around 1: %g [%g, %g], want an interval holding 1", m, lo, hi)
	}
	if m, _, _ := pairedRatio([]float64{1}, []float64{2}); m != 0 {
		t.Errorf("one round: %g, want 0 (no interval)", m)
	}
}
