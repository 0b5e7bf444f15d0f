package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// fakeOp sleeps for a fixed time per transaction; every nth fails.
type fakeOp struct {
	sleep   time.Duration
	failNth int64
	calls   atomic.Int64
}

func (o *fakeOp) NewWorker(int) (engine.Worker, error) { return o, nil }

func (o *fakeOp) Do(ctx context.Context, s *metrics.Sample) {
	n := o.calls.Add(1)
	select {
	case <-time.After(o.sleep):
	case <-ctx.Done():
		s.Class, s.Err = vocab.ClassOther, ctx.Err()
	}
	s.Handshake = true
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
	if o.failNth > 0 && n%o.failNth == 0 {
		s.Class, s.Err = vocab.ClassReset, errors.New("injected")
	}
}

func TestClosedLoopCounts(t *testing.T) {
	op := &fakeOp{sleep: 2 * time.Millisecond, failNth: 10}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if !res.Complete {
		t.Error("run not complete")
	}
	// Every call was recorded exactly once, in the whole-run counts.
	if got, want := s.AllOK+s.AllErrors, op.calls.Load(); got != want {
		t.Errorf("recorded %d, executed %d", got, want)
	}
	if got, want := s.Errors[vocab.ClassReset]+s.OK, s.AllOK+s.AllErrors; got >= want {
		t.Errorf("steady window %d not smaller than whole run %d despite a warm-up", got, want)
	}
	if s.OK == 0 || s.Errors[vocab.ClassReset] == 0 {
		t.Fatalf("ok %d, reset %d", s.OK, s.Errors[vocab.ClassReset])
	}
	if got, want := s.Hist[vocab.PhaseTotal].TotalCount(), s.OK; got != want {
		t.Errorf("total histogram holds %d, ok %d", got, want)
	}
	if got, want := res.Window, 300*time.Millisecond; got != want {
		t.Errorf("window %s, want %s", got, want)
	}
}

func TestOpenLoopRate(t *testing.T) {
	op := &fakeOp{sleep: time.Millisecond}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 8, Rate: 200, Duration: 500 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	// 200/s for 0.5 s: 100 intended starts, none dropped with idle workers.
	if got, want := op.calls.Load()+res.Dropped, int64(100); got != want {
		t.Errorf("started %d + dropped %d, want %d", op.calls.Load(), res.Dropped, want)
	}
	if res.Dropped != 0 {
		t.Errorf("dropped %d with idle workers", res.Dropped)
	}
	// Corrected latency is never below uncorrected.
	s := res.Snapshot
	if s.Hist[vocab.PhaseTotal].Max() < s.Hist[vocab.PhaseUncorrected].Max() {
		t.Error("corrected max below uncorrected max")
	}
}

// TestOpenLoopDrops: one slow worker cannot keep up with the rate; the
// starts it cannot take are dropped and counted, and the latency of the
// ones it takes late runs from their intended start.
func TestOpenLoopDrops(t *testing.T) {
	op := &fakeOp{sleep: 50 * time.Millisecond}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 1, Rate: 100, Duration: 500 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dropped == 0 {
		t.Error("no drops although the worker is 5× too slow")
	}
	if got, want := op.calls.Load()+res.Dropped, int64(50); got != want {
		t.Errorf("started %d + dropped %d, want %d intended", op.calls.Load(), res.Dropped, want)
	}
	if res.Late == 0 {
		t.Error("no late starts")
	}
	if res.Scheduled != 50 {
		t.Errorf("scheduled %d, want 50", res.Scheduled)
	}
	// Dropped starts are in no histogram: only the started ones.
	if got, want := res.StartLag.TotalCount(), op.calls.Load(); got != want {
		t.Errorf("start lag holds %d values, %d started", got, want)
	}
	s := res.Snapshot
	if c, u := s.Hist[vocab.PhaseTotal].ValueAtQuantile(50), s.Hist[vocab.PhaseUncorrected].ValueAtQuantile(50); c <= u {
		t.Errorf("corrected p50 %d µs not above uncorrected %d µs", c, u)
	}
}

// TestInterrupt: cancelling stops new work, keeps what was measured, and
// marks the result incomplete.
func TestInterrupt(t *testing.T) {
	op := &fakeOp{sleep: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := engine.Run(ctx, engine.Config{Load: engine.Load{Concurrency: 2, Duration: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %s after cancel at 200ms", time.Since(start))
	}
	if res.Complete {
		t.Error("interrupted run says complete")
	}
	if res.Window <= 0 || res.Window > time.Second {
		t.Errorf("window %s", res.Window)
	}
	if got, want := res.Snapshot.AllOK, op.calls.Load(); got != want {
		t.Errorf("in-flight work lost: recorded %d of %d", got, want)
	}
}

// TestDrainBound: transactions that outlive the drain bound are abandoned,
// each recorded as an error of class abandoned (no latency), and the run
// still ends.
func TestDrainBound(t *testing.T) {
	op := &fakeOp{sleep: time.Hour}
	start := time.Now()
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 3, Duration: 50 * time.Millisecond, Drain: 100 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("run took %s", time.Since(start))
	}
	if got, want := res.Abandoned, int64(3); got != want {
		t.Errorf("abandoned %d, want %d", got, want)
	}
	snap := res.Snapshot
	if snap.AllOK != 0 || snap.AllErrors != 3 || snap.Errors[vocab.ClassAbandoned] != 3 || snap.OK != 0 {
		t.Errorf("recorded %d successes, %d errors (%d of the window abandoned): want the 3 abandoned as errors",
			snap.AllOK, snap.AllErrors, snap.Errors[vocab.ClassAbandoned])
	}
	if ex := snap.Examples[vocab.ClassAbandoned]; !strings.Contains(ex, "drain bound (100ms)") {
		t.Errorf("abandoned example %q does not name the drain bound", ex)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []engine.Config{
		{Load: engine.Load{Concurrency: 0, Duration: time.Second}},                       // no workers
		{Load: engine.Load{Concurrency: 1, Duration: 0}},                                 // no window
		{Load: engine.Load{Concurrency: 1, Duration: time.Second, Rate: -1}},             // negative rate
		{Load: engine.Load{Concurrency: 1, Duration: time.Second, Warmup: -time.Second}}, // negative warm-up
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// openOp's workers hold a connection opened ahead of the load (every
// fifth open fails); it counts them.
type openOp struct {
	opened, dos atomic.Int64
	atFirstDo   atomic.Int64
}

type openWorker struct {
	op *openOp
	id int
}

func (o *openOp) NewWorker(id int) (engine.Worker, error) { return &openWorker{op: o, id: id}, nil }

func (o *openOp) OpenConns() (now, peak int64) { n := o.opened.Load(); return n, n }

func (w *openWorker) Open(ctx context.Context, s *metrics.Sample) bool {
	if w.id%5 == 0 {
		s.Class, s.Err = vocab.ClassRefused, errors.New("refused")
		s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
		return false
	}
	w.op.opened.Add(1)
	return true
}

func (w *openWorker) Do(ctx context.Context, s *metrics.Sample) {
	if w.op.dos.Add(1) == 1 {
		w.op.atFirstDo.Store(w.op.opened.Load())
	}
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

func TestOpenersOpenBeforeTheLoad(t *testing.T) {
	op := &openOp{}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 20, Rate: 100, Duration: 300 * time.Millisecond}, OpenParallel: 3}, op)
	if err != nil {
		t.Fatal(err)
	}
	if got := op.atFirstDo.Load(); got != 16 {
		t.Errorf("%d connections open at the first transaction, want all 16 that could open", got)
	}
	if res.PreOpened != 20 || res.PreOpenFailed != 4 {
		t.Errorf("pre-opened %d, failed %d; want 20 and 4", res.PreOpened, res.PreOpenFailed)
	}
	// The failed opens are recorded as errors of the run (warm-up: not in
	// the window), the held connections counted when the window ended.
	if got := res.Snapshot.AllErrors; got != 4 {
		t.Errorf("%d errors recorded, want the 4 failed opens", got)
	}
	if res.HeldAtEnd != 16 || res.HeldPeak != 16 {
		t.Errorf("held %d at the end, %d at most; want 16", res.HeldAtEnd, res.HeldPeak)
	}
	// An operation that does not count its connections says so.
	res, err = engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2, Duration: 50 * time.Millisecond}}, &fakeOp{sleep: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.HeldAtEnd != -1 || res.PreOpened != 0 {
		t.Errorf("held %d, pre-opened %d without connections", res.HeldAtEnd, res.PreOpened)
	}
}

// seriesOf runs op and returns the result and its record (filled as the
// engines fill theirs, the series attached).
func seriesOf(t *testing.T, cfg engine.Config, op engine.Op, agent *metrics.Agent) (*engine.Outcome, *metrics.Run) {
	t.Helper()
	res, err := engine.Run(context.Background(), cfg, op)
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	r := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Profile: "p", Started: res.Started, Ended: res.Ended,
		Complete: res.Complete, SteadyStartS: res.SteadyStart.Sub(res.Started).Seconds(), Load: metrics.Load{Mode: "closed"}, Agent: agent}
	if cfg.Rate > 0 {
		r.Load.Mode = "open"
	}
	if err := r.Fill(res.Snapshot, res.Window); err != nil {
		t.Error(err)
		return nil, nil
	}
	r.Series = res.Series
	return res, r
}

// checkSeries checks that a record's series has each second once, in
// order, only the last one partial, and that its seconds sum exactly to the
// record's counts: the steady ones to the window's transactions and errors
// (counted by start), all of them to the whole run's.
func checkSeries(t *testing.T, name string, r *metrics.Run) {
	t.Helper()
	if len(r.Series) == 0 {
		t.Fatalf("%s: no series", name)
	}
	var ok, errs, all, allErrs int64
	for i, s := range r.Series {
		if i > 0 && s.T != r.Series[i-1].T+1 {
			t.Errorf("%s: second %d has t = %d after t = %d: each second once, in order", name, i, s.T, r.Series[i-1].T)
		}
		if i > 0 && s.Unix != r.Series[i-1].Unix+1 {
			t.Errorf("%s: second %d has unix %d after %d", name, i, s.Unix, r.Series[i-1].Unix)
		}
		if s.Partial && i != len(r.Series)-1 {
			t.Errorf("%s: second t = %d is partial but not the last", name, s.T)
		}
		ok += s.SteadyTransactions
		errs += s.SteadyErrors
		all += s.Transactions
		allErrs += s.Errors
	}
	if ok != r.Transactions || errs != r.Errors.Total {
		t.Errorf("%s: the seconds' steady counts sum to %d transactions, %d errors; the window has %d, %d", name, ok, errs, r.Transactions, r.Errors.Total)
	}
	if all != r.Whole.Transactions || allErrs != r.Whole.Errors {
		t.Errorf("%s: the seconds sum to %d transactions, %d errors; the whole run has %d, %d", name, all, allErrs, r.Whole.Transactions, r.Whole.Errors)
	}
	if r.Transactions == 0 || r.Errors.Total == 0 {
		t.Errorf("%s: %d transactions, %d errors: nothing to sum", name, r.Transactions, r.Errors.Total)
	}
}

// TestSeriesSumsToWindow: the drain's transactions (ending after the window
// that they started in) fall in one more second, marked partial, not in a
// second repeated; and the seconds sum exactly to the record's counts, in
// closed and open loop, and after merging two agents' records.
func TestSeriesSumsToWindow(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  engine.Config
	}{
		{"closed loop", engine.Config{Load: engine.Load{Concurrency: 4, Warmup: 500 * time.Millisecond, Duration: 1500 * time.Millisecond}}},
		{"open loop", engine.Config{Load: engine.Load{Concurrency: 16, Rate: 300, Warmup: 500 * time.Millisecond, Duration: 1500 * time.Millisecond}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Two agents at once, so that their windows are one; each
			// transaction takes 40 ms, so the drain has some to finish.
			var res [2]*engine.Outcome
			var recs [2]*metrics.Run
			done := make(chan int)
			for i := range 2 {
				go func() {
					res[i], recs[i] = seriesOf(t, tt.cfg, &fakeOp{sleep: 40 * time.Millisecond, failNth: 7},
						&metrics.Agent{Name: fmt.Sprint("a", i), Shard: i, Shards: 2})
					done <- i
				}()
			}
			<-done
			<-done
			if t.Failed() {
				return
			}
			for i, r := range recs {
				checkSeries(t, fmt.Sprint("agent ", i), r)
				last := r.Series[len(r.Series)-1]
				// The run ends at 2 s; its drain, 40 ms later, is in
				// second 3, partial; or in second 2 when that second's
				// tick came after the drain (a loaded machine).
				switch {
				case last.T == 3 && last.Partial:
					if last.SteadyTransactions+last.SteadyErrors == 0 {
						t.Errorf("agent %d: the drain's second holds %+v: no transaction of the window", i, last)
					}
				case last.T == 2 && !last.Partial:
					t.Logf("agent %d: the tick of second 2 came after the drain", i)
				default:
					t.Errorf("agent %d: last second t = %d, partial %v; want t = 3, partial", i, last.T, last.Partial)
				}
				if !res[i].Complete {
					t.Errorf("agent %d: run incomplete", i)
				}
			}
			m, err := metrics.Merge(recs[:])
			if err != nil {
				t.Fatal(err)
			}
			checkSeries(t, "merged", m)
		})
	}
}

// TestOpenLoopStartsOnTime: against an idle target (a transaction of 1 ms,
// always a worker free) the open loop starts on time: the generator's own
// lateness, measured apart (StartLag), stays far below the 1 ms the Go
// runtime's timers alone may add.
func TestOpenLoopStartsOnTime(t *testing.T) {
	op := &fakeOp{sleep: time.Millisecond}
	cfg := engine.Config{Load: engine.Load{Concurrency: 64, Rate: 200, Duration: 2 * time.Second}}
	res, err := engine.Run(context.Background(), cfg, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scheduled != 400 || res.Dropped != 0 {
		t.Fatalf("scheduled %d, dropped %d; want 400, 0", res.Scheduled, res.Dropped)
	}
	lag := res.StartLag
	if lag == nil || lag.TotalCount() != 400 {
		t.Fatalf("start lag histogram %v, want 400 values", lag)
	}
	p50, p99 := lag.ValueAtQuantile(50), lag.ValueAtQuantile(99)
	share := float64(res.Late) / float64(res.Scheduled)
	t.Logf("late (>1 ms) %d of %d (%.1f%%); start lag p50 %d µs, p90 %d µs, p99 %d µs, max %d µs",
		res.Late, res.Scheduled, share*100, p50, lag.ValueAtQuantile(90), p99, lag.Max())
	// The median is the test: the earlier pacer's starts came on the
	// runtime's timer, p50 about 740 µs late (23–33% over 1 ms); now it is
	// a few µs. The tail and the late share depend on what else runs on
	// the machine (measured with a load average of 10–19 on 2 cores: 2–19%
	// late, p90 0.2–3.8 ms), so they are logged, not bounded.
	if p50 > 200 {
		t.Errorf("start lag p50 %d µs, want ≤ 200 µs", p50)
	}
}

// gateOp's transactions take 100 ms; started closes at the first.
type gateOp struct {
	started chan struct{}
	once    sync.Once
}

func (o *gateOp) NewWorker(int) (engine.Worker, error) { return o, nil }

func (o *gateOp) Do(ctx context.Context, s *metrics.Sample) {
	o.once.Do(func() { close(o.started) })
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
	}
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// gogc reads the garbage collector's target.
func gogc() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestOverlappingRunsRestoreGC: a run of 1,000 workers or more lowers GOGC
// to 25; of two such runs that overlap, the first to end leaves it lowered
// for the other, and the last restores the setting found before the first.
func TestOverlappingRunsRestoreGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const workers = 1000
	type run struct {
		cancel context.CancelFunc
		done   chan error
	}
	begin := func() run {
		ctx, cancel := context.WithCancel(context.Background())
		r, op := run{cancel, make(chan error, 1)}, &gateOp{started: make(chan struct{})}
		go func() {
			_, err := engine.Run(ctx, engine.Config{Load: engine.Load{Concurrency: workers, Duration: time.Minute}}, op)
			r.done <- err
		}()
		select {
		case <-op.started:
		case err := <-r.done:
			t.Fatalf("the run ended before its first transaction: %v", err)
		}
		return r
	}
	first := begin()
	if p := gogc(); p != 25 {
		t.Errorf("GOGC %d during a run of %d workers, want 25", p, workers)
	}
	second := begin()
	first.cancel()
	if err := <-first.done; err != nil {
		t.Fatal(err)
	}
	if p := gogc(); p != 25 {
		t.Errorf("GOGC %d after the first of two overlapping runs ended, want 25 until the second ends", p)
	}
	second.cancel()
	if err := <-second.done; err != nil {
		t.Fatal(err)
	}
	if p := gogc(); p != 100 {
		t.Errorf("GOGC %d after both runs ended, want 100 (restored)", p)
	}
}

// TestLateAgentKeepsTheAgreedWindow: an agent ready after the agreed start
// (within the tolerance) keeps the agreed window and seconds, with a
// shorter warm-up, and says how late it was; one ready early waits.
func TestLateAgentKeepsTheAgreedWindow(t *testing.T) {
	for _, offset := range []time.Duration{-150 * time.Millisecond, 100 * time.Millisecond} {
		at := time.Now().Add(offset)
		cfg := engine.Config{Load: engine.Load{Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 200 * time.Millisecond},
			StartAt: at, StartTolerance: time.Second}
		res, err := engine.Run(context.Background(), cfg, &fakeOp{sleep: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Started.Equal(at) || !res.SteadyStart.Equal(at.Add(cfg.Warmup)) {
			t.Errorf("start at %+v: started %s, steady %s; want the agreed %s and %s", offset,
				res.Started.Format(time.StampMicro), res.SteadyStart.Format(time.StampMicro), at.Format(time.StampMicro), at.Add(cfg.Warmup).Format(time.StampMicro))
		}
		late := offset < 0
		if late && res.StartSkew < -offset {
			t.Errorf("ready %s after the agreed start, skew %s", -offset, res.StartSkew)
		}
		if !late && (res.StartSkew < 0 || res.StartSkew > 50*time.Millisecond) {
			t.Errorf("waited for the agreed start, skew %s", res.StartSkew)
		}
	}
}

// TestAtWindow: Config.AtWindow is called at the steady window's start and
// end, once each and in that order; a run interrupted during its warm-up
// never reaches the window and calls it not at all.
func TestAtWindow(t *testing.T) {
	var calls []bool
	var at []time.Time
	cfg := engine.Config{Load: engine.Load{Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 200 * time.Millisecond},
		AtWindow: func(end bool) { calls, at = append(calls, end), append(at, time.Now()) }}
	res, err := engine.Run(context.Background(), cfg, &fakeOp{sleep: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0] || !calls[1] {
		t.Fatalf("calls %v, want [false true]", calls)
	}
	// Timers fire late on a busy machine, never early.
	if d := at[0].Sub(res.SteadyStart); d < 0 || d > 500*time.Millisecond {
		t.Errorf("window start sampled %s after the steady start", d)
	}
	if d := at[1].Sub(res.SteadyStart.Add(cfg.Duration)); d < 0 || d > 500*time.Millisecond {
		t.Errorf("window end sampled %s after the window's end", d)
	}

	calls = nil
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	cfg.Warmup, cfg.Duration = 5*time.Second, time.Second
	if _, err := engine.Run(ctx, cfg, &fakeOp{sleep: 2 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 0 {
		t.Errorf("interrupted in its warm-up: calls %v, want none", calls)
	}
}

// drainWorker is a worker with 3 transactions under way after each Do
// (HTTP/2's streams): Drain ends them, one a call.
type drainWorker struct {
	fakeOp
	open, drained int
	steady        bool // a drained sample was in the window
}

func (w *drainWorker) NewWorker(int) (engine.Worker, error) { return w, nil }

func (w *drainWorker) Do(ctx context.Context, s *metrics.Sample) { w.fakeOp.Do(ctx, s); w.open = 3 }

func (w *drainWorker) Drain(ctx context.Context, s *metrics.Sample) bool {
	if w.open == 0 {
		return false
	}
	w.open--
	w.drained++
	w.steady = w.steady || s.Steady
	s.Dur[vocab.PhaseTotal] = time.Millisecond
	return true
}

// TestDrainer: a worker's transactions still under way when it is to run
// no more are drained, each recorded in the whole run (not the window) and
// counted as an attempt.
func TestDrainer(t *testing.T) {
	w := &drainWorker{fakeOp: fakeOp{sleep: time.Millisecond}}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 1,
		Duration: 50 * time.Millisecond}}, w)
	if err != nil {
		t.Fatal(err)
	}
	calls, s := w.calls.Load(), res.Snapshot
	if w.drained != 3 || w.open != 0 || w.steady {
		t.Errorf("drained %d (%d left, in the window: %v), want 3 outside the window", w.drained, w.open, w.steady)
	}
	if s.AllOK != calls+3 || s.OK > calls || res.Attempts != calls+3 {
		t.Errorf("recorded %d (window %d), attempts %d; %d made and 3 drained", s.AllOK, s.OK, res.Attempts, calls)
	}
}
