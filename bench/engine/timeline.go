package engine

import (
	"context"
	"math"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// The timeline of RFC 9411 §4.3.4 (the traffic load profile): the load
// ramps up from nothing to its target (Load.RampUp), holds it through the
// warm-up and the steady window (the sustain phase), ramps down to nothing
// (Load.RampDown), stops, and drains. In closed loop the ramps start and
// stop workers in turn; in open loop they move the pacer's rate. A run
// without ramps or pause takes none of this path but the series' marks.

// ramped says whether the run has a ramp.
func (l *load) ramped() bool { return l.cfg.RampUp > 0 || l.cfg.RampDown > 0 }

// timed says whether the closed loop needs the timed schedule (a ramp or a
// pause between transactions).
func (l *load) timed() bool { return l.ramped() || l.cfg.Pause > 0 }

// awaitRampDown waits from the window's end until the load is to stop: the
// ramp-down's end, or ctx's cancellation. It returns when it stopped.
func (l *load) awaitRampDown(ctx context.Context) time.Time {
	t := time.NewTimer(time.Until(l.stopAt))
	defer t.Stop()
	select {
	case <-t.C:
		return l.stopAt
	case <-ctx.Done():
		return time.Now()
	}
}

// phaseAt is the phase of the timeline in which a second ending at e ends.
// A phase ends at its last instant: a second that ends exactly at a
// boundary belongs to the phase before it. Once the load has stopped (at
// its planned end or on an interruption), it is the drain.
func (l *load) phaseAt(e time.Time) vocab.TimelinePhase {
	if s := l.stopped.Load(); s != 0 && time.Unix(0, s).Before(e) {
		return vocab.TimelineDrain
	}
	switch {
	case !e.After(l.start.Add(l.cfg.RampUp)):
		return vocab.TimelineRampUp
	case !e.After(l.steadyStart):
		return vocab.TimelineWarmup
	case !e.After(l.end):
		return vocab.TimelineSustain
	case !e.After(l.stopAt):
		return vocab.TimelineRampDown
	}
	return vocab.TimelineDrain
}

// marker returns what marks each second of the series as it closes: the
// operation's open connections, when it counts them (at the second's
// nominal end, and their mean over the second from a sample every
// openSampleEvery), and the timeline's phase, when the run has a ramp; nil
// when there is nothing to mark.
func (l *load) marker(op Op) *marker {
	gauge, counts := op.(connCounter)
	ramped := l.ramped()
	if !counts && !ramped {
		return nil
	}
	m := &marker{l: l, gauge: gauge, counts: counts, ramped: ramped, end: l.start.Add(time.Second)}
	if counts {
		m.last, _ = gauge.OpenConns()
	}
	return m
}

// openSampleEvery is how often the open connections are sampled for a
// second's mean: 100 samples a second, a wake-up of a few microseconds each.
const openSampleEvery = 10 * time.Millisecond

// marker marks the seconds of a run's series; it is used by the one
// goroutine that closes them. A second's open connections are those of its
// last sample taken by its nominal end: a tick that comes late (a busy
// machine) does not see what the next second opened or closed.
type marker struct {
	l              *load
	gauge          connCounter
	counts, ramped bool
	end            time.Time // the nominal end of the second being sampled
	last           int64     // the open connections at the last sample taken by end
	sum, n         int64     // the open connections sampled in the second
}

// sample adds the open connections now to the second's mean, unless the
// second has ended (its tick is late): the sample is then left out.
func (m *marker) sample() {
	if !m.counts {
		return
	}
	now, _ := m.gauge.OpenConns()
	if time.Now().After(m.end) {
		return
	}
	m.last = now
	m.sum += now
	m.n++
}

// mark marks s, the second that ends at end, and starts the next. A
// second marked before its end (the run's last, partial) takes a sample
// now.
func (m *marker) mark(s *metrics.Second, end time.Time) {
	if m.counts {
		m.sample()
		s.OpenConns = m.last
		if m.n > 0 {
			s.OpenConnsMean = math.Round(float64(m.sum)/float64(m.n)*100) / 100
		}
		m.sum, m.n, m.end = 0, 0, end.Add(time.Second)
	}
	if m.ramped {
		s.Phase = string(m.l.phaseAt(end))
	}
}

// timedLoop is the closed loop of a run with a ramp or a pause: worker i of
// C takes its first start at start + RampUp·i/C, waits Pause after each
// transaction, and takes no start after end + RampDown·(1 − i/C), when it
// is closed; so the workers at work rise and fall linearly.
type timedLoop struct {
	start, end              time.Time
	rampUp, rampDown, pause time.Duration
	n                       int
	stop                    <-chan struct{}
	// begun[i] says whether worker i has taken its first start; each
	// element is its worker's alone.
	begun []bool
}

func newTimedLoop(l *load) *timedLoop {
	return &timedLoop{start: l.start, end: l.end, rampUp: l.cfg.RampUp, rampDown: l.cfg.RampDown,
		pause: l.cfg.Pause, n: l.cfg.Concurrency, stop: l.stop, begun: make([]bool, l.cfg.Concurrency)}
}

// share is d·i/n.
func share(d time.Duration, i, n int) time.Duration {
	return time.Duration(float64(d) * float64(i) / float64(n))
}

func (c *timedLoop) next(id int) (intended, start time.Time, ok bool) {
	if !c.begun[id] {
		c.begun[id] = true
		if d := time.Until(c.start.Add(share(c.rampUp, id, c.n))); d > 0 {
			wait(d, c.stop)
		}
	} else if c.pause > 0 {
		wait(c.pause, c.stop)
	}
	select {
	case <-c.stop:
		return
	default:
	}
	now := time.Now()
	if !now.Before(c.end.Add(share(c.rampDown, c.n-id, c.n))) {
		if c.rampDown == 0 {
			// As closedLoop: keep the connection until the window's
			// connections are counted.
			<-c.stop
		}
		return
	}
	return now, now, true
}

func (*timedLoop) report(*Outcome) {}

// curve is the open loop's schedule: the rate rises linearly from 0 to
// rate over up, holds until full after start (the window's end), falls
// linearly to 0 over down, and the load ends at end. The i-th start is due
// when the integral of the rate reaches i.
type curve struct {
	start, end     time.Time
	rate           float64
	up, down, full time.Duration
}

// at returns when the i-th start is due, and false when it is not before
// the load's end.
func (c *curve) at(i int64) (time.Time, bool) {
	if c.up == 0 && c.down == 0 {
		due := c.start.Add(time.Duration(float64(i) * float64(time.Second) / c.rate))
		return due, due.Before(c.end)
	}
	t, ok := c.ramped(float64(i))
	if !ok {
		return time.Time{}, false
	}
	due := c.start.Add(time.Duration(t * float64(time.Second)))
	return due, due.Before(c.end)
}

// ramped solves N(t) = x for t (seconds from start), N the integral of the
// rate: R·t²/(2U) in the ramp-up (U its length), then R·U/2 + R·(t − U),
// then in the ramp-down (D its length, from E) N(E) + R·(τ − τ²/(2D)),
// τ = t − E. False when x is past the ramp-down's last start.
func (c *curve) ramped(x float64) (float64, bool) {
	r, u, e, d := c.rate, c.up.Seconds(), c.full.Seconds(), c.down.Seconds()
	nU := r * u / 2
	nE := nU + r*(e-u)
	switch {
	case x < nU:
		return math.Sqrt(2 * x * u / r), true
	case x < nE:
		return u + (x-nU)/r, true
	case d == 0:
		return 0, false
	}
	q := 1 - 2*(x-nE)/(r*d)
	if q <= 0 {
		return 0, false
	}
	return e + d*(1-math.Sqrt(q)), true
}
