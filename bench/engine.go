// Package bench is the engine core: it schedules transactions of an Op in a
// closed loop (N concurrent workers) or an open loop (a target rate), applies
// the warm-up and steady-state windows, keeps the per-second series and
// records every transaction into a metrics.Recorder.
//
// The engine never prints; progress leaves through Config.Progress.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Op makes the per-worker executors of one kind of transaction.
type Op interface {
	// NewWorker returns the executor for worker id; each is used by one
	// goroutine only.
	NewWorker(id int) (Worker, error)
}

// Worker executes transactions one at a time. A Worker that also implements
// io.Closer is closed when it will run no more.
type Worker interface {
	// Do performs one transaction starting now and fills s: the phase
	// durations (Total from s.Start), the error class, bytes. It must return
	// within the operation's own deadlines; ctx is cancelled only to abandon
	// work (the sample is then discarded).
	Do(ctx context.Context, s *metrics.Sample)
}

// Opener is a Worker that holds a connection across transactions and can
// open it ahead of the load. Run opens the connection of every Opener before
// the load starts (Config.OpenParallel at a time, before StartAt), so that
// all of them are held from the first scheduled start on, the way wrk opens
// its connections. Open returns false when it failed: s then holds the
// failure, which is recorded as a warm-up error, and the worker tries again
// in its first transaction. A successful open is carried by the worker's
// first sample (connect and handshake times, Opened), as if that
// transaction had opened it.
type Opener interface {
	Open(ctx context.Context, s *metrics.Sample) bool
}

// ConnCounter is an Op that counts its open connections: now, and the most
// at once.
type ConnCounter interface {
	OpenConns() (now, peak int64)
}

// closeWorker closes a worker that holds resources across transactions
// (a kept-alive connection), once it will run no more.
func closeWorker(w Worker) {
	if c, ok := w.(io.Closer); ok {
		_ = c.Close()
	}
}

func closeAll(ws []Worker) {
	for _, w := range ws {
		closeWorker(w)
	}
}

// Config says how to apply load. The zero value is not valid; see Defaults.
type Config struct {
	Concurrency int           // closed loop: workers; open loop: most in flight
	Rate        float64       // transactions per second; 0 for closed loop
	Duration    time.Duration // steady-state window
	Warmup      time.Duration // before the window, excluded from statistics
	// Drain bounds how long in-flight transactions may run after the window
	// (or an interruption) before they are abandoned.
	Drain  time.Duration
	Shards int // histogram shards; 0 means 2×GOMAXPROCS
	// OpenParallel bounds the connections opened at once before the load
	// (workers that are Openers); 0 means 8 per core.
	OpenParallel int
	// Progress, if set, is called once a second from one goroutine.
	Progress func(metrics.Second)
	// StartAt, if set, is when the load starts: the workers are prepared,
	// then Run sleeps until StartAt (agents of one distributed run agree on
	// it). Run refuses to start more than StartTolerance after it.
	StartAt        time.Time
	StartTolerance time.Duration
	// AbortAfter, if positive, stops the run when nothing has succeeded
	// for that long while transactions failed (Result.Aborted); 0: never.
	// Whatever it is, a worker that fails BackoffAfter times in a row
	// backs off (see BackoffBase).
	AbortAfter time.Duration
}

// LateError is returned when StartAt had passed by more than the tolerance
// once the workers were ready.
type LateError struct {
	Late, Tolerance time.Duration
}

func (e *LateError) Error() string {
	return fmt.Sprintf("the agreed start time had passed by %s when the load was ready (tolerance %s); not starting late", e.Late.Round(time.Millisecond), e.Tolerance)
}

// Defaults returns the default configuration.
func Defaults() Config {
	return Config{Concurrency: 32, Duration: 10 * time.Second, Warmup: 2 * time.Second, Drain: 30 * time.Second}
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	switch {
	case c.Concurrency < 1:
		return fmt.Errorf("concurrency must be at least 1, got %d", c.Concurrency)
	case c.Rate < 0:
		return fmt.Errorf("rate must not be negative, got %g", c.Rate)
	case c.Duration <= 0:
		return fmt.Errorf("duration must be positive, got %s", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("warm-up must not be negative, got %s", c.Warmup)
	}
	return nil
}

// Result is what a run measured.
type Result struct {
	Snapshot    metrics.Snapshot
	Series      []metrics.Second
	Started     time.Time
	SteadyStart time.Time
	Ended       time.Time
	// Window is the steady-state time actually covered: Duration, or less
	// when the run was interrupted.
	Window    time.Duration
	Complete  bool
	Late      int64 // open loop: started more than 1 ms after intended
	Dropped   int64 // open loop: intended starts that never ran
	Abandoned int64 // in flight when the drain bound expired; not recorded
	// PreOpened is how many connections were opened before the load
	// started (Openers); PreOpenFailed how many of those opens failed.
	PreOpened, PreOpenFailed int
	// HeldAtEnd and HeldPeak are the connections open when the window
	// ended and the most open at once, for an Op that counts them
	// (ConnCounter); -1 otherwise.
	HeldAtEnd, HeldPeak int64
	// Attempts is how many transactions the workers started (pre-opens
	// that failed included: each is a sample); Backoffs how many waits
	// followed consecutive failures.
	Attempts, Backoffs int64
	// Aborted says why the run was stopped early (Config.AbortAfter); ""
	// when it was not.
	Aborted string

	// Scheduled is how many starts the open-loop schedule intended (run
	// or dropped), whole run.
	Scheduled int64
	// StartLag is the open loop's own lateness: actual start − intended
	// start of every transaction the steady window scheduled (µs, the
	// shared geometry); nil in closed loop. It is the generator's, not
	// the target's, and is part of the corrected total latency.
	StartLag *metrics.Histogram
}

// With manyConnections workers or more, Run lowers the garbage collector's
// target (GOGC) to manyConnectionsGC for the run: the heap then grows 25%
// over what is live instead of 100%, and most of what is live is the
// connections' own state. Measured at 20,000 connections (docs/PERFORMANCE.md).
const (
	manyConnections   = 1000
	manyConnectionsGC = 25
)

// lowerGC lowers GOGC to percent unless it is lower already (or off) and
// returns the function that restores it.
func lowerGC(percent int) (restore func()) {
	old := debug.SetGCPercent(percent)
	if old >= 0 && old < percent || old < 0 {
		debug.SetGCPercent(old)
	}
	return func() { debug.SetGCPercent(old) }
}

// lateThreshold is how far behind its intended start a transaction may begin
// before it counts as late.
const lateThreshold = time.Millisecond

// Run applies load until the duration ends or ctx is cancelled. Cancelling
// ctx stops new transactions; in-flight ones finish (within Drain) and are
// recorded, and the result says Complete: false.
func Run(ctx context.Context, cfg Config, op Op) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Shards <= 0 {
		cfg.Shards = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 30 * time.Second
	}
	// Workers are made one by one, not as one slice of -c allocated up front.
	workers := make([]Worker, 0, min(cfg.Concurrency, 4096))
	for i := range cfg.Concurrency {
		w, err := op.NewWorker(i)
		if err != nil {
			closeAll(workers)
			return nil, err
		}
		workers = append(workers, w)
	}
	if cfg.OpenParallel <= 0 {
		cfg.OpenParallel = 8 * runtime.GOMAXPROCS(0)
	}
	if cfg.Concurrency >= manyConnections {
		defer lowerGC(manyConnectionsGC)()
	}
	openFailed, opened, err := openAll(ctx, workers, cfg.OpenParallel)
	if err != nil {
		closeAll(workers)
		return nil, err
	}

	if !cfg.StartAt.IsZero() {
		if late := time.Since(cfg.StartAt); late > cfg.StartTolerance {
			closeAll(workers)
			return nil, &LateError{Late: late, Tolerance: cfg.StartTolerance}
		}
		t := time.NewTimer(time.Until(cfg.StartAt))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			closeAll(workers)
			return nil, ctx.Err()
		}
	}
	start := time.Now()
	steadyStart := start.Add(cfg.Warmup)
	end := steadyStart.Add(cfg.Duration)
	rec := metrics.NewRecorder(cfg.Shards, start)
	res := &Result{Started: start, SteadyStart: steadyStart, HeldAtEnd: -1, HeldPeak: -1}
	res.PreOpened, res.PreOpenFailed = opened, len(openFailed)

	// opCtx outlives ctx so that in-flight transactions finish and count;
	// it is cancelled when the drain bound expires.
	opCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	stop := make(chan struct{}) // closed when no new transaction may start
	var stopOnce sync.Once
	stopAt := end
	var stopMu sync.Mutex
	halt := func(at time.Time) {
		stopOnce.Do(func() {
			stopMu.Lock()
			stopAt = at
			stopMu.Unlock()
			close(stop)
		})
	}

	var abandoned, attempts, backoffs atomic.Int64
	attempts.Store(int64(res.PreOpenFailed)) // a successful open is its worker's first transaction
	stall := newStallWatch(cfg.AbortAfter, start)
	record := func(id int, s *metrics.Sample) {
		if opCtx.Err() != nil && errors.Is(s.Err, context.Canceled) {
			abandoned.Add(1)
			return
		}
		rec.Record(id, s)
		stall.observe(s)
	}
	// done counts a worker's attempts and backoffs when it ends.
	done := func(n int64, bo *backoff) {
		attempts.Add(n)
		backoffs.Add(bo.waits)
	}

	for i := range openFailed {
		record(openFailed[i].id, &openFailed[i].s)
	}
	openFailed = nil

	var wg sync.WaitGroup
	var late, dropped, scheduled atomic.Int64
	var lags *lagHistograms
	if cfg.Rate == 0 {
		for i, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer closeWorker(w)
				s := new(metrics.Sample) // one per worker, not per transaction
				var bo backoff
				var n int64
				defer func() { done(n, &bo) }()
				for {
					select {
					case <-stop:
						return
					default:
					}
					now := time.Now()
					if !now.Before(end) {
						// Keep the connection until the window's
						// connections are counted (halt closes stop).
						<-stop
						return
					}
					*s = metrics.Sample{}
					s.Intended, s.Start, s.Steady = now, now, !now.Before(steadyStart)
					w.Do(opCtx, s)
					n++
					s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
					record(i, s)
					if d := bo.after(s.Class == ""); d > 0 {
						wait(d, stop)
					}
				}
			}()
		}
	} else {
		ticks := make(chan time.Time, cfg.Concurrency)
		lags = newLagHistograms(cfg.Shards)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ticks)
			scheduled.Store(pace(start, end, cfg.Rate, stop, ticks, &dropped))
		}()
		for i, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer closeWorker(w)
				s := new(metrics.Sample)
				var bo backoff
				var n int64
				defer func() { done(n, &bo) }()
				for intended := range ticks {
					// The tick comes a little ahead (handoffLead):
					// start on time.
					now := spinUntil(intended)
					if now.Sub(intended) > lateThreshold {
						late.Add(1)
					}
					if !intended.Before(steadyStart) {
						lags.record(i, now.Sub(intended))
					}
					*s = metrics.Sample{}
					s.Intended, s.Start, s.Steady = intended, now, !intended.Before(steadyStart)
					w.Do(opCtx, s)
					// Coordinated omission: the latency the user would
					// have seen runs from the intended start (wrk2's
					// expected_latency_start); the uncorrected figure is
					// kept beside it.
					s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
					s.Dur[vocab.PhaseTotal] += now.Sub(intended)
					n++
					record(i, s)
					// Backing off, the worker takes no start: those
					// due meanwhile are dropped (and counted).
					if d := bo.after(s.Class == ""); d > 0 {
						wait(d, stop)
					}
				}
			}()
		}
	}

	// The series ticker: second k closes at start + k s (a late wake-up
	// does not shift the seconds after it), and each k is ticked once.
	tickDone := make(chan struct{})
	var series []metrics.Second
	ticked := 0 // the last second closed
	go func() {
		defer close(tickDone)
		t := time.NewTimer(time.Until(start.Add(time.Second)))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ticked++
				sec := rec.Tick(start.Add(time.Duration(ticked) * time.Second))
				series = append(series, sec)
				if cfg.Progress != nil {
					cfg.Progress(sec)
				}
				t.Reset(time.Until(start.Add(time.Duration(ticked+1) * time.Second)))
			case <-tickDone:
				return
			}
		}
	}()

	// Stop scheduling at the end of the window or on cancellation.
	// The connections held are counted before the workers let go.
	gauge, counts := op.(ConnCounter)
	haltCounting := func(at time.Time) {
		if counts {
			res.HeldAtEnd, _ = gauge.OpenConns()
		}
		halt(at)
	}
	aborted := make(chan string, 1)
	watchDone := make(chan struct{})
	defer close(watchDone)
	if cfg.AbortAfter > 0 {
		go stall.watch(watchDone, func(reason string) { aborted <- reason })
	}
	endTimer := time.NewTimer(time.Until(end))
	select {
	case <-endTimer.C:
		haltCounting(end)
	case <-ctx.Done():
		endTimer.Stop()
		haltCounting(time.Now())
	case res.Aborted = <-aborted:
		endTimer.Stop()
		haltCounting(time.Now())
	}
	// Wait for in-flight transactions, at most Drain.
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(cfg.Drain):
		abandon()
		<-waited
	}
	tickDone <- struct{}{}
	<-tickDone
	// What ended after the last tick is the next second, partial when
	// the run ended before that second did.
	next := start.Add(time.Duration(ticked+1) * time.Second)
	final := rec.Tick(next)
	final.Partial = time.Now().Before(next)
	if final.Transactions+final.Errors > 0 {
		series = append(series, final)
	}

	stopMu.Lock()
	at := stopAt
	stopMu.Unlock()
	res.Ended = time.Now()
	res.Complete = !at.Before(end)
	if at.After(end) {
		at = end
	}
	res.Window = max(at.Sub(steadyStart), 0)
	res.Snapshot = rec.Snapshot()
	res.Series = series
	res.Late, res.Dropped, res.Abandoned = late.Load(), dropped.Load(), abandoned.Load()
	res.Attempts, res.Backoffs = attempts.Load(), backoffs.Load()
	res.Scheduled = scheduled.Load()
	if lags != nil {
		res.StartLag = lags.merged()
	}
	if counts {
		_, res.HeldPeak = gauge.OpenConns()
	}
	return res, nil
}

// failedOpen is a connection that could not be opened ahead of the load.
type failedOpen struct {
	id int
	s  metrics.Sample
}

// openAll opens the connections of the workers that are Openers, at most
// parallel at a time. It returns the failures (to be recorded) and how many
// opens were tried; it stops early, with ctx's error, when ctx is cancelled.
func openAll(ctx context.Context, workers []Worker, parallel int) ([]failedOpen, int, error) {
	if _, ok := workers[0].(Opener); !ok {
		return nil, 0, nil // an operation's workers are all of one kind
	}
	ids := make(chan int)
	var mu sync.Mutex
	var failed []failedOpen
	tried := 0
	var wg sync.WaitGroup
	for range min(parallel, len(workers)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				now := time.Now()
				s := metrics.Sample{Intended: now, Start: now}
				ok := workers[i].(Opener).Open(ctx, &s)
				mu.Lock()
				tried++
				if !ok {
					s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
					failed = append(failed, failedOpen{id: i, s: s})
				}
				mu.Unlock()
			}
		}()
	}
	for i, w := range workers {
		if _, ok := w.(Opener); !ok {
			continue
		}
		select {
		case ids <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(ids)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, tried, err
	}
	return failed, tried, nil
}

// pace sends the intended start times of an open-loop schedule: the i-th
// transaction is due at start + i/rate. A due start that finds every worker
// busy and the queue full is dropped and counted, never delayed silently. It
// returns how many starts it scheduled (sent or dropped).
//
// Each start is sent on time, not when a timer happens to fire: the Go
// runtime's timers may fire up to a millisecond late when the process is
// otherwise idle (its poller sleeps in whole milliseconds), which an open
// loop would charge to the target. The pacer sleeps on a timer until
// pacerCoarse before the start, then waits the rest precisely (waitUntil).
func pace(start, end time.Time, rate float64, stop <-chan struct{}, ticks chan<- time.Time, dropped *atomic.Int64) int64 {
	restore := preciseWaits()
	defer restore()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	lead := min(handoffLead, time.Duration(float64(time.Second)/rate/10))
	for i := int64(0); ; i++ {
		due := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		if !due.Before(end) {
			// The workers keep their connections until the window
			// ends: close the queue only then.
			<-stop
			return i
		}
		if d := time.Until(due) - pacerCoarse; d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-stop:
				return i
			}
		}
		select {
		case <-stop:
			return i
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
