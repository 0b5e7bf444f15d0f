package method

import (
	"math"
	"testing"
)

func TestCompareShift(t *testing.T) {
	// Two samples whose means differ by exactly 10 with little noise.
	var b, c []float64
	for i := 0; i < 30; i++ {
		noise := float64(i%5) - 2 // -2..2
		b = append(b, 20+noise)
		c = append(c, 30+noise)
	}
	s := Compare(b, c)
	if math.Abs(s.Delta-10) > 1e-9 || !s.Significant || s.P > 1e-6 {
		t.Errorf("shift %+v: want +10, significant", s)
	}
	// Same distribution: not significant.
	s = Compare(b, append([]float64(nil), b...))
	if s.Delta != 0 || s.Significant || s.P < 0.5 {
		t.Errorf("identical samples: %+v", s)
	}
}

// TestMannWhitneyKnown checks a p-value computed by hand: a = 1..5,
// b = 6..10 gives U = 0, z = (12.5-0.5)/4.787 = 2.507, p = 0.0122.
func TestMannWhitneyKnown(t *testing.T) {
	p := mannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if math.Abs(p-0.0122) > 0.0005 {
		t.Errorf("p = %.4f, want 0.0122", p)
	}
}

func TestTQuantile(t *testing.T) {
	for _, tc := range []struct{ df, want float64 }{{1, 12.706}, {10, 2.228}, {30, 2.042}, {60, 2.000}, {1000, 1.962}} {
		if got := tQuantile975(tc.df); math.Abs(got-tc.want) > 0.002 {
			t.Errorf("t(0.975, %v) = %.4f, want %.3f", tc.df, got, tc.want)
		}
	}
}
