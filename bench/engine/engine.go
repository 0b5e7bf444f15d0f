// Package engine is the engine core: it schedules transactions of an Op in a
// closed loop (N concurrent workers) or an open loop (a target rate), applies
// the warm-up and steady-state windows, keeps the per-second series and
// records every transaction into a metrics.Recorder.
//
// Run is the whole of it, in the way of vegeta's Attack: a schedule hands
// out the starts (closedLoop: as soon as a worker is free; openLoop: its
// pacer's, at a rate), one loop per worker (load.work) makes a transaction
// at each (hit) and records it, tickSeries closes the seconds as they pass,
// and Run alone decides when the load stops (closing load.stop) and
// drains it. gc.go holds the process's GOGC setting, shared by overlapping
// runs; backoff.go the waits after failures and the stall that aborts a
// run; preflight.go the check before a run.
//
// The engine never prints; progress leaves through Config.Progress.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
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
// the load starts (Config.OpenParallel at a time, before StartAt; not when
// the load ramps up, which opens them as it goes), so that
// all of them are held from the first scheduled start on, the way wrk opens
// its connections. Open returns false when it failed: s then holds the
// failure, which is recorded as a warm-up error, and the worker tries again
// in its first transaction. A successful open is carried by the worker's
// first sample (connect and handshake times, Opened), as if that
// transaction had opened it.
type Opener interface {
	Open(ctx context.Context, s *metrics.Sample) bool
}

// Drainer is a Worker whose transactions overlap (HTTP/2's streams): one
// it is to run no more may still have some under way, which the device
// answers. The engine then calls Drain until it returns false, each call
// ending one of them into s (recorded, outside the window), so that every
// request the device answered is counted. Drain returns false, s untouched,
// when none is left or ctx is done.
type Drainer interface {
	Drain(ctx context.Context, s *metrics.Sample) bool
}

// connCounter is an Op that counts its open connections: now, and the most
// at once.
type connCounter interface {
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

// Load is the load of a run: how many transactions at once, at what rate,
// for how long. A run spec embeds it (its JSON names are the spec's).
type Load struct {
	Concurrency int           `json:"concurrency"`    // closed loop: workers; open loop: most in flight
	Rate        float64       `json:"rate,omitempty"` // transactions per second; 0 for closed loop
	Duration    time.Duration `json:"duration"`       // steady-state window
	Warmup      time.Duration `json:"warmup"`         // before the window, excluded from statistics
	// Drain bounds how long in-flight transactions may run after the window
	// (or an interruption) before they are abandoned (0: DefaultDrain).
	Drain time.Duration `json:"drain"`
	// AbortAfter, if positive, stops the run when nothing has succeeded
	// for that long while transactions failed (Outcome.Aborted); 0: never.
	// Whatever it is, a worker that fails BackoffAfter times in a row
	// backs off (see BackoffBase).
	AbortAfter time.Duration `json:"abort_after"`
	// The timeline (RFC 9411 §4.3.4): RampUp moves the load linearly from
	// nothing to its target (the concurrency in closed loop, the rate in
	// open loop) before the warm-up and the steady window (the sustain
	// phase); RampDown moves it back to nothing after the window. Neither
	// ramp is part of the window's statistics.
	RampUp   time.Duration `json:"ramp_up,omitempty"`
	RampDown time.Duration `json:"ramp_down,omitempty"`
	// Pause is how long a worker waits after each transaction before its
	// next (closed loop only): the think time between the requests of a
	// held connection (RFC 9411 §7.9).
	Pause time.Duration `json:"pause,omitempty"`
}

// Span is how long the load goes: ramp-up, warm-up, window and ramp-down
// (the drain after it not included).
func (l *Load) Span() time.Duration { return l.RampUp + l.Warmup + l.Duration + l.RampDown }

// Validate reports the first setting out of its domain, a *vocab.FieldError.
func (l *Load) Validate() error {
	bad := func(field string, v any, want string) error {
		return &vocab.FieldError{Field: field, Value: v, Want: want}
	}
	switch {
	case l.Concurrency < 1:
		return bad("concurrency", l.Concurrency, "be at least 1")
	case math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) || l.Rate < 0:
		return bad("rate", l.Rate, "be a finite number, not negative")
	case l.Duration <= 0:
		return bad("duration", l.Duration, "be positive")
	case l.Warmup < 0:
		return bad("warmup", l.Warmup, "not be negative")
	case l.Drain < 0:
		return bad("drain", l.Drain, "not be negative")
	case l.AbortAfter < 0:
		return bad("abort_after", l.AbortAfter, "not be negative")
	case l.RampUp < 0:
		return bad("ramp_up", l.RampUp, "not be negative")
	case l.RampDown < 0:
		return bad("ramp_down", l.RampDown, "not be negative")
	case l.Pause < 0:
		return bad("pause", l.Pause, "not be negative")
	case l.Pause > 0 && l.Rate > 0:
		return bad("pause", l.Pause, "be 0 in open loop (the rate paces the starts)")
	}
	return nil
}

// Config says how to apply load. The zero value is not valid; see Defaults.
type Config struct {
	Load
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
	// AtWindow, if set, is called at the steady window's start (end
	// false) and then, if it was, when the load stops (end true: the
	// window's end, an interruption or a stall), from the goroutine that
	// waits for the load's end, so that what the caller measures over the
	// window (the machine's noise) covers it. It must return quickly.
	AtWindow func(end bool)
	// Live, if set, is called once when the load starts, with what a
	// reader may look at while it goes (see Live).
	Live func(Live)
}

// lateError is returned when StartAt had passed by more than the tolerance
// once the workers were ready.
type lateError struct {
	Late, Tolerance time.Duration
}

func (e *lateError) Error() string {
	return fmt.Sprintf("the agreed start time had passed by %s when the load was ready (tolerance %s); not starting "+
		"late", e.Late.Round(time.Millisecond), e.Tolerance)
}

// DefaultDrain is the drain bound when Config.Drain is zero.
const DefaultDrain = 30 * time.Second

// Validate reports a configuration error (Load.Validate's).
func (c Config) Validate() error { return c.Load.Validate() }

// Outcome is what one application of load measured.
type Outcome struct {
	Snapshot metrics.Snapshot
	Series   []metrics.Second
	// Started is when the load started: Config.StartAt when it is set
	// (agents of one run share their windows and seconds even if one was
	// ready a little late: its warm-up is that much shorter), else the
	// moment the workers were ready.
	Started time.Time
	// StartSkew is how late the load really started after StartAt; 0
	// without StartAt.
	StartSkew   time.Duration
	SteadyStart time.Time
	Ended       time.Time
	// Window is the steady-state time actually covered: Duration, or less
	// when the run was interrupted.
	Window   time.Duration
	Complete bool
	Late     int64 // open loop: started more than 1 ms after intended
	Dropped  int64 // open loop: intended starts that never ran
	// Abandoned is how many transactions were in flight when the drain
	// bound expired; each is recorded as an error of class abandoned.
	Abandoned int64
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

// Run applies load until the duration ends or ctx is cancelled. Cancelling
// ctx stops new transactions; in-flight ones finish (within Drain) and are
// recorded, and the outcome says Complete: false.
func Run(ctx context.Context, cfg Config, op Op) (*Outcome, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	workers, err := newWorkers(op, cfg.Concurrency)
	if err != nil {
		return nil, err
	}
	if cfg.Concurrency >= manyConnections {
		defer holdLowGC()()
	}
	// A ramp-up opens the connections as it goes: none ahead of it.
	var failed []failedOpen
	var opened int
	if cfg.RampUp == 0 {
		failed, opened, err = openAll(ctx, workers, cfg.OpenParallel)
	}
	if err == nil {
		err = awaitStart(ctx, cfg.StartAt, cfg.StartTolerance)
	}
	if err != nil {
		closeAll(workers)
		return nil, err
	}
	start, skew := time.Now(), time.Duration(0)
	if !cfg.StartAt.IsZero() {
		start, skew = cfg.StartAt, time.Since(cfg.StartAt)
	}
	l := newLoad(ctx, cfg, start)
	defer l.abandon()
	if cfg.Live != nil {
		cfg.Live(l.live(op))
	}
	out := &Outcome{Started: l.start, StartSkew: skew, SteadyStart: l.steadyStart, HeldAtEnd: -1, HeldPeak: -1,
		PreOpened: opened, PreOpenFailed: len(failed)}
	l.attempts.Store(int64(len(failed))) // a successful open is its worker's first transaction
	for i := range failed {
		l.record(failed[i].id, &failed[i].s)
	}
	l.run(ctx, op, workers, out)
	return out, nil
}

// run runs the workers until the load is to stop, then drains them and
// fills out.
func (l *load) run(ctx context.Context, op Op, workers []Worker, out *Outcome) {
	var wg sync.WaitGroup
	var sched schedule = closedLoop{end: l.end, stop: l.stop}
	switch {
	case l.cfg.Rate > 0:
		sched = startOpenLoop(l, &wg)
	case l.timed():
		sched = newTimedLoop(l) // timeline.go
	}
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.work(i, w, sched)
		}()
	}
	series := tickSeries(l.rec, l.start, l.cfg.Progress, l.marker(op))

	at, aborted, steady := l.awaitStop(ctx)
	if steady && l.cfg.AtWindow != nil {
		l.cfg.AtWindow(true)
	}
	// The connections held are counted before the workers let go.
	gauge, counts := op.(connCounter)
	if counts {
		out.HeldAtEnd, _ = gauge.OpenConns()
	}
	stopped := at
	if aborted == "" && !at.Before(l.end) && l.cfg.RampDown > 0 {
		stopped = l.awaitRampDown(ctx) // timeline.go
	}
	l.stopped.Store(stopped.UnixNano())
	close(l.stop)
	l.drain(&wg)
	out.Series = series()
	l.report(out, at, aborted)
	sched.report(out)
	if counts {
		_, out.HeldPeak = gauge.OpenConns()
	}
}

// withDefaults validates c and fills in what it leaves zero.
func (c Config) withDefaults() (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	if c.Shards <= 0 {
		c.Shards = 2 * runtime.GOMAXPROCS(0)
	}
	if c.Drain <= 0 {
		c.Drain = DefaultDrain
	}
	if c.OpenParallel <= 0 {
		c.OpenParallel = 8 * runtime.GOMAXPROCS(0)
	}
	return c, nil
}

// newWorkers makes op's n workers one by one, not as one slice of n
// allocated up front.
func newWorkers(op Op, n int) ([]Worker, error) {
	workers := make([]Worker, 0, min(n, 4096))
	for i := range n {
		w, err := op.NewWorker(i)
		if err != nil {
			closeAll(workers)
			return nil, err
		}
		workers = append(workers, w)
	}
	return workers, nil
}

// awaitStart sleeps until at (none when zero), or returns a LateError when
// it passed more than tolerance ago.
func awaitStart(ctx context.Context, at time.Time, tolerance time.Duration) error {
	if at.IsZero() {
		return nil
	}
	if late := time.Since(at); late > tolerance {
		return &lateError{Late: late, Tolerance: tolerance}
	}
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// load is one application of load: what its workers share. Its timeline
// (timeline.go): start, the ramp-up, the warm-up, steadyStart, the steady
// window, end, the ramp-down, stopAt.
type load struct {
	cfg                             Config
	start, steadyStart, end, stopAt time.Time
	rec                             *metrics.Recorder
	stall                           *stallWatch
	// opCtx outlives Run's ctx so that in-flight transactions finish
	// and count; abandon cancels it when the drain bound expires.
	opCtx   context.Context
	abandon context.CancelFunc
	// stop is closed once, by apply, when no new transaction may start.
	stop chan struct{}

	abandoned, attempts, backoffs atomic.Int64
	// expired is when the drain bound expired (Unix ns); 0 before.
	expired atomic.Int64
	// stopped is when the load stopped (Unix ns): stopAt, or the
	// interruption's time; 0 before.
	stopped atomic.Int64
}

func newLoad(ctx context.Context, cfg Config, start time.Time) *load {
	l := &load{cfg: cfg, start: start, steadyStart: start.Add(cfg.RampUp + cfg.Warmup),
		rec: metrics.NewRecorder(cfg.Shards, start), stall: newStallWatch(cfg.AbortAfter, start), stop: make(chan struct{})}
	l.end = l.steadyStart.Add(cfg.Duration)
	l.stopAt = l.end.Add(cfg.RampDown)
	l.opCtx, l.abandon = context.WithCancel(context.WithoutCancel(ctx))
	return l
}

// work is worker id's loop: a transaction at each start sched gives it,
// recorded, with a wait after consecutive failures (backoff).
func (l *load) work(id int, w Worker, sched schedule) {
	defer l.closeWorkerTCP(id, w)
	s := new(metrics.Sample) // one per worker, not per transaction
	var bo backoff
	var n int64
	for {
		intended, start, ok := sched.next(id)
		if !ok {
			break
		}
		hit(l.opCtx, w, s, intended, start, !intended.Before(l.steadyStart) && intended.Before(l.end))
		n++
		l.record(id, s)
		// Backing off, the worker takes no start: in open loop those
		// due meanwhile are dropped (and counted).
		if d := bo.after(s.Class == ""); d > 0 {
			wait(d, l.stop)
		}
	}
	for d, ok := w.(Drainer); ok; {
		now := time.Now()
		*s = metrics.Sample{Intended: now, Start: now}
		if ok = d.Drain(l.opCtx, s); ok {
			s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
			n++
			l.record(id, s)
		}
	}
	l.attempts.Add(n)
	l.backoffs.Add(bo.waits)
}

// hit makes one transaction of w into s: intended is when the schedule
// meant it to start, start when it did.
func hit(ctx context.Context, w Worker, s *metrics.Sample, intended, start time.Time, steady bool) {
	*s = metrics.Sample{}
	s.Intended, s.Start, s.Steady = intended, start, steady
	w.Do(ctx, s)
	// Coordinated omission: the latency the user would have seen runs
	// from the intended start (wrk2's expected_latency_start); the
	// uncorrected figure is kept beside it. In closed loop they are one.
	s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
	s.Dur[vocab.PhaseTotal] += start.Sub(intended)
}

// record records a transaction. One still in flight when the drain bound
// expired (cancelled then, or ending after it: a read waits for its own
// deadline) is an error of class abandoned (in the window if it started
// there), with no latency.
func (l *load) record(id int, s *metrics.Sample) {
	if l.abandonedAfter(s) {
		l.abandoned.Add(1)
		l.recordTCP(id, s) // its connections' retransmissions happened
		s.TCP.N = 0
		s.Class = vocab.ClassAbandoned
		s.Err = fmt.Errorf("still in flight when the drain bound (%s) expired", l.cfg.Drain)
		l.rec.Record(id, s)
		return
	}
	l.rec.Record(id, s)
	l.stall.observe(s)
}

// abandonedAfter says whether s was in flight when the drain bound expired.
func (l *load) abandonedAfter(s *metrics.Sample) bool {
	at := l.expired.Load()
	if at == 0 {
		return false
	}
	end := s.Start.Add(s.Dur[vocab.PhaseUncorrected])
	return errors.Is(s.Err, context.Canceled) || !end.Before(time.Unix(0, at))
}

// awaitStop returns when the load is to stop: at the end of the window, on
// ctx's cancellation, or when it stalled (Config.AbortAfter, with the
// reason). On the way it calls Config.AtWindow at the steady window's start;
// steady says whether it did.
func (l *load) awaitStop(ctx context.Context) (at time.Time, aborted string, steady bool) {
	end := time.NewTimer(time.Until(l.end))
	defer end.Stop()
	var check <-chan time.Time // nil: never
	if l.cfg.AbortAfter > 0 {
		t := time.NewTicker(l.stall.every())
		defer t.Stop()
		check = t.C
	}
	var window <-chan time.Time // nil: never
	if l.cfg.AtWindow != nil {
		t := time.NewTimer(time.Until(l.steadyStart))
		defer t.Stop()
		window = t.C
	}
	for {
		select {
		case <-window:
			l.cfg.AtWindow(false)
			steady, window = true, nil
		case <-end.C:
			return l.end, "", steady
		case <-ctx.Done():
			return time.Now(), "", steady
		case now := <-check:
			if aborted = l.stall.stalled(now); aborted != "" {
				return time.Now(), aborted, steady
			}
		}
	}
}

// drain waits for the workers (and the pacer), at most the drain bound;
// then it abandons the transactions still in flight and waits for them.
func (l *load) drain(wg *sync.WaitGroup) {
	waited := make(chan struct{})
	go func() {
		wg.Wait()
		close(waited)
	}()
	t := time.NewTimer(l.cfg.Drain)
	defer t.Stop()
	select {
	case <-waited:
	case <-t.C:
		l.expired.Store(time.Now().UnixNano())
		l.abandon()
		<-waited
	}
}

// report fills in what the load measured, the load stopped at.
func (l *load) report(out *Outcome, at time.Time, aborted string) {
	out.Ended = time.Now()
	out.Complete = !at.Before(l.end)
	if at.After(l.end) {
		at = l.end
	}
	out.Window = max(at.Sub(l.steadyStart), 0)
	out.Snapshot = l.rec.Snapshot()
	out.Aborted = aborted
	out.Abandoned, out.Attempts, out.Backoffs = l.abandoned.Load(), l.attempts.Load(), l.backoffs.Load()
}

// tickSeries closes the run's seconds as they pass: second k at start + k s
// (a late wake-up does not shift the seconds after it), each k once, handing
// each to progress from its one goroutine, after mark (if set) has marked
// it (timeline.go). The function it returns stops the ticks and returns the
// seconds; what ended after the last tick is the next second, partial when
// the run ended before that second did.
func tickSeries(rec *metrics.Recorder, start time.Time, progress func(metrics.Second),
	m *marker) func() []metrics.Second {
	at := func(k int) time.Time { return start.Add(time.Duration(k) * time.Second) }
	var secs []metrics.Second
	ticked := 0 // the last second closed
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(time.Until(at(1)))
		defer t.Stop()
		var samples <-chan time.Time // nil: never
		if m != nil && m.counts {
			st := time.NewTicker(openSampleEvery)
			defer st.Stop()
			samples = st.C
		}
		for {
			select {
			case <-samples:
				m.sample()
			case <-t.C:
				ticked++
				sec := rec.Tick(at(ticked))
				if m != nil {
					m.mark(&sec, at(ticked))
				}
				secs = append(secs, sec)
				if progress != nil {
					progress(sec)
				}
				t.Reset(time.Until(at(ticked + 1)))
			case <-quit:
				return
			}
		}
	}()
	return func() []metrics.Second {
		close(quit)
		<-done
		final := rec.Tick(at(ticked + 1))
		final.Partial = time.Now().Before(at(ticked + 1))
		if m != nil {
			m.mark(&final, at(ticked+1))
		}
		if final.Transactions+final.Errors > 0 {
			secs = append(secs, final)
		}
		return secs
	}
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
	var mu sync.Mutex
	var failed []failedOpen
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	tried := 0
	for i, w := range workers {
		o, ok := w.(Opener)
		if !ok {
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		tried++
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			now := time.Now()
			s := metrics.Sample{Intended: now, Start: now}
			if !o.Open(ctx, &s) {
				s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
				mu.Lock()
				failed = append(failed, failedOpen{id: i, s: s})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, tried, err
	}
	return failed, tried, nil
}

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
	ticks            <-chan time.Time
	steadyStart, end time.Time
	lags             *lagHistograms
	late             atomic.Int64
	dropped          atomic.Int64
	scheduled        atomic.Int64
}

// startOpenLoop starts the pacer of l (counted in wg): it schedules starts
// at l's rate (ramped: timeline.go) until l's load ends or l.stop closes.
func startOpenLoop(l *load, wg *sync.WaitGroup) *openLoop {
	ticks := make(chan time.Time, l.cfg.Concurrency)
	o := &openLoop{ticks: ticks, steadyStart: l.steadyStart, end: l.end, lags: newLagHistograms(l.cfg.Shards)}
	c := curve{start: l.start, end: l.stopAt, rate: l.cfg.Rate, up: l.cfg.RampUp, down: l.cfg.RampDown,
		full: l.end.Sub(l.start)}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ticks)
		o.scheduled.Store(pace(&c, l.stop, ticks, &o.dropped))
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
	if !intended.Before(o.steadyStart) && intended.Before(o.end) {
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
