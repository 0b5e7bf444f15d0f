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

// TestPacerLateStopHighRate: the starts a late pacer never sent are counted
// without visiting each (cps --rate 1e12 hung there for half an hour): a
// billion starts a second, 95 ms late, gives the count of the starts due,
// each dropped, in a few dozen looks at the schedule (one per start: 95
// million).
func TestPacerLateStopHighRate(t *testing.T) {
	start := time.Now().Add(-95 * time.Millisecond)
	c := curve{start: start, end: start.Add(time.Second), rate: 1e9, full: time.Second}
	var looks int
	at := func(i int64) (time.Time, bool) { looks++; return c.at(i) }
	var dropped atomic.Int64
	before := time.Now()
	n := behind(at, 0, &dropped)
	after := time.Now()
	last, _ := c.at(n - 1)
	next, _ := c.at(n)
	if dropped.Load() != n || last.After(after) || !next.After(before) || n < 90e6 {
		t.Errorf("scheduled %d, dropped %d (start %d due %v, start %d due %v; stopped between %v and %v)",
			n, dropped.Load(), n-1, last.Sub(start), n, next.Sub(start), before.Sub(start), after.Sub(start))
	}
	if looks > 128 {
		t.Errorf("%d looks at the schedule to count %d starts: want a few dozen", looks, n)
	}
}
