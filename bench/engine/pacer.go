package engine

import (
	"sync/atomic"
	"time"
)

// pace sends the intended start times of an open-loop schedule: the i-th
// transaction is due at c.at(i), start + i/rate without ramps. A due start that finds every worker
// busy and the queue full is dropped and counted, never delayed silently. It
// returns how many starts it scheduled (sent or dropped).
//
// Each start is sent on time, not when a timer happens to fire: the Go
// runtime's timers may fire up to a millisecond late when the process is
// otherwise idle (its poller sleeps in whole milliseconds), which an open
// loop would charge to the target. The pacer sleeps on a timer until
// pacerCoarse before the start, then waits the rest precisely (waitUntil).
func pace(c *curve, stop <-chan struct{}, ticks chan<- time.Time, dropped *atomic.Int64) int64 {
	restore := preciseWaits()
	defer restore()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	lead := min(handoffLead, time.Duration(float64(time.Second)/c.rate/10))
	for i := int64(0); ; i++ {
		due, ok := c.at(i)
		if !ok {
			// The workers keep their connections until the load
			// ends: close the queue only then.
			<-stop
			return i
		}
		if d := time.Until(due) - pacerCoarse; d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-stop:
				return behind(c.at, i, dropped)
			}
		}
		select {
		case <-stop:
			return behind(c.at, i, dropped)
		default:
		}
		waitUntil(due.Add(-lead))
		select {
		case ticks <- due:
		default:
			dropped.Add(1)
		}
	}
}

// behind counts the starts from the i-th on that were due when the load
// stopped but not sent (the pacer itself ran late, e.g. descheduled on a
// busy machine) as dropped, and returns how many starts were scheduled: the
// schedule's count does not depend on the pacer's own lateness. The first
// start not due is found by doubling, then bisection (starts are in time
// order): a few dozen steps whatever the rate, never one per start.
func behind(at func(int64) (time.Time, bool), i int64, dropped *atomic.Int64) int64 {
	now := time.Now()
	due := func(j int64) bool { t, ok := at(j); return ok && !t.After(now) }
	lo, hi := i, i // starts before lo are due; hi is the first not due once found
	for step := int64(1); due(hi); step *= 2 {
		lo, hi = hi+1, hi+step
	}
	for lo < hi {
		if m := lo + (hi-lo)/2; due(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	dropped.Add(hi - i)
	return hi
}

// handoffLead is how far ahead of its start a tick is handed to a worker,
// which then waits for the start itself (spinUntil): waking a parked worker
// takes tens of microseconds. It is at most a tenth of the period, so that
// the workers' own waits cost at most a tenth of a core.
const handoffLead = 100 * time.Microsecond

// spinUntil returns the time at or after t when it returns, polling the
// clock without yielding (a yield could hand the processor to a long
// computation): the wait is at most handoffLead.
func spinUntil(t time.Time) time.Time {
	for {
		if now := time.Now(); !now.Before(t) {
			return now
		}
	}
}

// pacerCoarse is how long before a start the pacer stops trusting the
// runtime's timer: a little more than its worst lateness on an idle process.
const pacerCoarse = 2 * time.Millisecond
