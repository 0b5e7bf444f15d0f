package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// A schedule gives the workers their starts: as fast as they go (closed
// loop) or at a rate (open loop). The worker loop knows no more of it.
type schedule interface {
	// next waits for worker id's next start and returns when it was
	// intended and when it is (the same in closed loop); false when the
	// worker is to stop.
	next(id int) (intended, start time.Time, ok bool)
	// report adds what the schedule counted to the outcome, once the
	// workers have stopped.
	report(o *Outcome)
}

// closedLoop starts a worker's next transaction as soon as its last one
// ended, until the window ends or stop closes.
type closedLoop struct {
	end  time.Time
	stop <-chan struct{}
}

func (c closedLoop) next(int) (intended, start time.Time, ok bool) {
	select {
	case <-c.stop:
		return
	default:
	}
	now := time.Now()
	if !now.Before(c.end) {
		// Keep the connection until the window's connections are
		// counted (apply closes stop).
		<-c.stop
		return
	}
	return now, now, true
}

func (closedLoop) report(*Outcome) {}

// lateThreshold is how far behind its intended start a transaction may begin
// before it counts as late.
const lateThreshold = time.Millisecond

// openLoop hands out the starts its pacer schedules at a rate, and counts
// the ones late, dropped, and the generator's own lateness of each.
type openLoop struct {
	ticks       <-chan time.Time
	steadyStart time.Time
	lags        *lagHistograms
	late        atomic.Int64
	dropped     atomic.Int64
	scheduled   atomic.Int64
}

// startOpenLoop starts the pacer of l (counted in wg): it schedules starts
// at l's rate until l's window ends or l.stop closes.
func startOpenLoop(l *load, wg *sync.WaitGroup) *openLoop {
	ticks := make(chan time.Time, l.cfg.Concurrency)
	o := &openLoop{ticks: ticks, steadyStart: l.steadyStart, lags: newLagHistograms(l.cfg.Shards)}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ticks)
		o.scheduled.Store(pace(l.start, l.end, l.cfg.Rate, l.stop, ticks, &o.dropped))
	}()
	return o
}

func (o *openLoop) next(id int) (intended, start time.Time, ok bool) {
	if intended, ok = <-o.ticks; !ok {
		return
	}
	// The tick comes a little ahead (handoffLead): start on time.
	start = spinUntil(intended)
	if start.Sub(intended) > lateThreshold {
		o.late.Add(1)
	}
	if !intended.Before(o.steadyStart) {
		o.lags.record(id, start.Sub(intended))
	}
	return intended, start, true
}

func (o *openLoop) report(out *Outcome) {
	out.Late, out.Dropped, out.Scheduled = o.late.Load(), o.dropped.Load(), o.scheduled.Load()
	out.StartLag = o.lags.merged()
}

// lagHistograms hold the open loop's start lateness, sharded like the
// recorder so that workers rarely contend.
type lagHistograms struct {
	shards []lagShard
}

type lagShard struct {
	mu sync.Mutex
	h  *metrics.Histogram
}

func newLagHistograms(n int) *lagHistograms {
	l := &lagHistograms{shards: make([]lagShard, n)}
	for i := range l.shards {
		l.shards[i].h = metrics.NewHistogram()
	}
	return l
}

func (l *lagHistograms) record(i int, d time.Duration) {
	v := min(max(int64(d/time.Microsecond), 0), metrics.Highest)
	sh := &l.shards[uint(i)%uint(len(l.shards))]
	sh.mu.Lock()
	_ = sh.h.RecordValue(v)
	sh.mu.Unlock()
}

func (l *lagHistograms) merged() *metrics.Histogram {
	h := metrics.NewHistogram()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		h.Merge(sh.h)
		sh.mu.Unlock()
	}
	return h
}
