package stats_test

import (
	"math"
	"testing"

	"github.com/tlsbench/tlsbench/bench/stats"
)

// TestPairedRatio: the rounds' ratios' geometric mean and its interval.
func TestPairedRatio(t *testing.T) {
	m, lo, hi := stats.PairedRatio([]float64{100, 200, 400}, []float64{110, 220, 440})
	if math.Abs(m-1.1) > 1e-12 || math.Abs(lo-1.1) > 1e-12 || math.Abs(hi-1.1) > 1e-12 {
		t.Errorf("equal ratios 1.1: %g [%g, %g]", m, lo, hi)
	}
	m, lo, hi = stats.PairedRatio([]float64{100, 100, 100, 100}, []float64{90, 110, 95, 105})
	if !(lo < 1 && 1 < hi) || math.Abs(m-math.Pow(0.9*1.1*0.95*1.05, 0.25)) > 1e-12 {
		t.Errorf("ratios around 1: %g [%g, %g], want an interval holding 1", m, lo, hi)
	}
	if m, _, _ := stats.PairedRatio([]float64{1}, []float64{2}); m != 0 {
		t.Errorf("one round: %g, want 0 (no interval)", m)
	}
}
