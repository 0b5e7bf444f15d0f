package analysis_test

import (
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// TestBackendSeconds: each second's margin is the in-flight transactions
// and a slot's requests at the highest neighbouring rate, and 1; a
// difference beyond it does not agree; counts of another length compare
// nothing.
func TestBackendSeconds(t *testing.T) {
	r := &metrics.Run{Series: []metrics.Second{{T: 1, Transactions: 100}, {T: 2, Transactions: 300, Errors: 2},
		{T: 3, Transactions: 5}}}
	r.Load.Concurrency = 4
	got := analysis.BackendSeconds(r, []int64{90, 340, 20}, 100*time.Millisecond)
	want := []analysis.BackendSecond{
		{T: 1, Backends: 90, Engine: 100, Margin: 4 + 31 + 1, Agrees: true},
		{T: 2, Backends: 340, Engine: 302, Margin: 4 + 31 + 1, Agrees: false},
		{T: 3, Backends: 20, Engine: 5, Margin: 4 + 31 + 1, Agrees: true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d seconds, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("second %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	r.Device = &metrics.Device{InFlight: 40} // a pipeline of 10
	if m := analysis.BackendSeconds(r, []int64{0, 0, 0}, 100*time.Millisecond)[0].Margin; m != 40+31+1 {
		t.Errorf("margin %d with 40 in flight, want 72", m)
	}
	if s := analysis.BackendSeconds(r, []int64{1, 2}, time.Second); s != nil {
		t.Errorf("counts of 2 seconds for 3: %+v", s)
	}
}
