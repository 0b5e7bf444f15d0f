package engine

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestPacerLateStop: a pacer that finds the load stopped with starts due
// that it never sent (it was itself descheduled) counts them as scheduled
// and dropped, so the schedule's count does not depend on the pacer's own
// lateness: 100 starts a second, 95 ms late, 10 due (0 to 90 ms).
func TestPacerLateStop(t *testing.T) {
	start := time.Now().Add(-95 * time.Millisecond)
	c := curve{start: start, end: start.Add(time.Second), rate: 100, full: time.Second}
	stop := make(chan struct{})
	close(stop)
	var dropped atomic.Int64
	n := pace(&c, stop, make(chan time.Time), &dropped)
	if n != 10 || dropped.Load() != 10 {
		t.Errorf("scheduled %d, dropped %d: want the 10 starts due before the stop, each dropped", n, dropped.Load())
	}
}
