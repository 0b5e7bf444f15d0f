package impact

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/stats"
)

// TestShiftSummaryPMethod: a p from the normal approximation (more rounds
// than the exact distribution is computed for) is printed with
// "(normal approximation)"; an exact one is not labelled.
func TestShiftSummaryPMethod(t *testing.T) {
	sample := func(n int, base float64) []float64 {
		var xs []float64
		for i := range n {
			xs = append(xs, base+float64(i%10)) // tied values
		}
		return xs
	}
	for _, tc := range []struct {
		n      int
		approx bool
	}{{stats.ExactTiedLimit / 2, false}, {stats.ExactTiedLimit/2 + 1, true}} {
		for _, shift := range []float64{0, 0.5, 5} {
			s := stats.ShiftOf(sample(tc.n, 100), sample(tc.n, 100+shift))
			sum := ShiftSummary(s)
			if got := strings.Contains(sum, "(normal approximation)"); got != tc.approx {
				t.Errorf("%d a side, shift %g (%s): %q", tc.n, shift, s.PMethod, sum)
			}
		}
	}
}
