package engine_test

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// rampOp's workers each "open a connection" at their first transaction and
// hold it until closed; it counts them (as tlsconn.Endpoint counts its
// connections) and keeps every start: worker, intended start, steady flag.
type rampOp struct {
	sleep      time.Duration
	open, peak atomic.Int64
	mu         sync.Mutex
	starts     []rampStart
}

type rampStart struct {
	id       int
	intended time.Time
	steady   bool
}

type rampWorker struct {
	op     *rampOp
	id     int
	opened bool
}

func (o *rampOp) NewWorker(id int) (engine.Worker, error) { return &rampWorker{op: o, id: id}, nil }

func (o *rampOp) OpenConns() (now, peak int64) { return o.open.Load(), o.peak.Load() }

func (w *rampWorker) Do(ctx context.Context, s *metrics.Sample) {
	if !w.opened {
		w.opened = true
		n := w.op.open.Add(1)
		for p := w.op.peak.Load(); n > p && !w.op.peak.CompareAndSwap(p, n); p = w.op.peak.Load() {
		}
	}
	w.op.mu.Lock()
	w.op.starts = append(w.op.starts, rampStart{w.id, s.Intended, s.Steady})
	w.op.mu.Unlock()
	if w.op.sleep > 0 {
		time.Sleep(w.op.sleep)
	}
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

func (w *rampWorker) Close() error {
	if w.opened {
		w.op.open.Add(-1)
	}
	return nil
}

// checkSteady checks that exactly the starts intended in the window
// [steadyStart, steadyStart + window) were steady, and that the series'
// steady counts sum to the window's and fall in no second of the ramp-up
// but the one ending at the window's start (whose tick, late on a loaded
// machine, may count the window's first transactions), nor in any after
// the ramp-down's first (a transaction of the window may end just after
// the window).
func checkSteady(t *testing.T, op *rampOp, res *engine.Outcome, window time.Duration) {
	t.Helper()
	end := res.SteadyStart.Add(window)
	var steady int64
	for _, s := range op.starts {
		in := !s.intended.Before(res.SteadyStart) && s.intended.Before(end)
		if s.steady != in {
			t.Fatalf("start of worker %d at %s: steady %v, in the window %v", s.id,
				s.intended.Sub(res.Started), s.steady, in)
		}
		if in {
			steady++
		}
	}
	if got := res.Snapshot.OK; got != steady {
		t.Errorf("window holds %d transactions, %d started in it", got, steady)
	}
	var sum int64
	downs := 0
	lastUp := int(res.SteadyStart.Sub(res.Started) / time.Second)
	for _, s := range res.Series {
		sum += s.SteadyTransactions
		if s.Phase == string(vocab.TimelineRampDown) {
			downs++
		}
		early := s.Phase == string(vocab.TimelineRampUp) && s.T < lastUp
		if s.SteadyTransactions > 0 && (early || downs > 1 || s.Phase == string(vocab.TimelineDrain)) {
			t.Errorf("second %d (%s) holds %d steady transactions", s.T, s.Phase, s.SteadyTransactions)
		}
	}
	if sum != steady {
		t.Errorf("the seconds' steady transactions sum to %d, the window has %d", sum, steady)
	}
}

// checkPhases checks the series' phases, second by second.
func checkPhases(t *testing.T, series []metrics.Second, want []vocab.TimelinePhase) {
	t.Helper()
	for i, s := range series {
		w := vocab.TimelineDrain
		if i < len(want) {
			w = want[i]
		}
		if s.Phase != string(w) {
			t.Errorf("second %d: phase %q, want %q", s.T, s.Phase, w)
		}
	}
	if len(series) < len(want) {
		t.Errorf("%d seconds, want at least %d", len(series), len(want))
	}
}

// TestClosedLoopRamps: C = 20 over a ramp-up of 2 s: worker i takes its
// first start no earlier than i/10 s, so that about half the workers are at
// work after a second; all 20 through the window; in the 2 s ramp-down
// worker i takes no start after 2(1 − i/20) s, and is closed then.
func TestClosedLoopRamps(t *testing.T) {
	t.Parallel()
	const c = 20
	op := &rampOp{sleep: 5 * time.Millisecond}
	cfg := engine.Config{Load: engine.Load{Concurrency: c, Duration: 2 * time.Second, RampUp: 2 * time.Second,
		RampDown: 2 * time.Second}}
	res, err := engine.Run(context.Background(), cfg, op)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.SteadyStart.Sub(res.Started), 2*time.Second; got != want {
		t.Errorf("window starts %s after the start, want %s (the ramp-up)", got, want)
	}
	end := res.SteadyStart.Add(cfg.Duration)
	first, last := map[int]time.Time{}, map[int]time.Time{}
	for _, s := range op.starts {
		if f, ok := first[s.id]; !ok || s.intended.Before(f) {
			first[s.id] = s.intended
		}
		if s.intended.After(last[s.id]) {
			last[s.id] = s.intended
		}
	}
	for i := range c {
		slot := res.Started.Add(time.Duration(i) * 100 * time.Millisecond)
		if first[i].Before(slot) {
			t.Errorf("worker %d began %s after the start, before its slot at %s", i, first[i].Sub(res.Started),
				slot.Sub(res.Started))
		}
		stop := end.Add(2 * time.Second * time.Duration(c-i) / c)
		if !last[i].Before(stop) || last[i].Before(end) {
			t.Errorf("worker %d's last start %s after the window's end, want in [0, %s)", i, last[i].Sub(end),
				stop.Sub(end))
		}
	}
	// The open connections at each second's end: ≈ 10 at 1 s (workers
	// 0–10 have begun), 20 through the window, ≈ 10 after 1 s of the
	// ramp-down (workers 0–9 remain). ±2 for a tick that comes late.
	want := []int64{11, 20, 20, 20, 10, 0}
	for i, w := range want {
		if i >= len(res.Series) {
			break
		}
		if got := res.Series[i].OpenConns; math.Abs(float64(got-w)) > 2 {
			t.Errorf("second %d: %d open connections, want %d ± 2", res.Series[i].T, got, w)
		}
	}
	if res.HeldAtEnd != c {
		t.Errorf("%d connections held at the window's end, want %d", res.HeldAtEnd, c)
	}
	if now, _ := op.OpenConns(); now != 0 {
		t.Errorf("%d connections still open after the run", now)
	}
	checkPhases(t, res.Series, []vocab.TimelinePhase{vocab.TimelineRampUp, vocab.TimelineRampUp,
		vocab.TimelineSustain, vocab.TimelineSustain, vocab.TimelineRampDown, vocab.TimelineRampDown})
	checkSteady(t, op, res, cfg.Duration)
}

// TestOpenLoopRamps: at R = 400/s with 2 s ramps the starts follow the
// integral of the rate: 100 in the first second (R·t²/2U), 300 in the
// second, 400 in each of the window's, then 300 and 100 in the ramp-down.
func TestOpenLoopRamps(t *testing.T) {
	t.Parallel()
	op := &rampOp{sleep: time.Millisecond}
	cfg := engine.Config{Load: engine.Load{Concurrency: 256, Rate: 400, Duration: 2 * time.Second,
		RampUp: 2 * time.Second, RampDown: 2 * time.Second}}
	res, err := engine.Run(context.Background(), cfg, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dropped > 0 {
		t.Logf("%d starts dropped (a loaded machine)", res.Dropped)
	}
	if res.Scheduled < 1599 || res.Scheduled > 1601 {
		t.Errorf("scheduled %d starts, want 1600 (the rate's integral)", res.Scheduled)
	}
	per := make([]int, 7)
	for _, s := range op.starts {
		per[min(int(s.intended.Sub(res.Started)/time.Second), 6)]++
	}
	// ±5% (+1 for a start on a second's boundary); a dropped start, which
	// the operation never sees, may be missing from any second.
	for i, want := range []int{100, 300, 400, 400, 300, 100, 0} {
		tol := 0.05*float64(want) + 1
		if got := float64(per[i]); got > float64(want)+tol || got < float64(want)-tol-float64(res.Dropped) {
			t.Errorf("second %d: %d starts, want %d ± 5%%", i+1, per[i], want)
		}
	}
	if got, want := res.StartLag.TotalCount(), int64(per[2]+per[3]); got != want {
		t.Errorf("start lag holds %d starts, want the window's %d", got, want)
	}
	checkPhases(t, res.Series, []vocab.TimelinePhase{vocab.TimelineRampUp, vocab.TimelineRampUp,
		vocab.TimelineSustain, vocab.TimelineSustain, vocab.TimelineRampDown, vocab.TimelineRampDown})
	checkSteady(t, op, res, cfg.Duration)
}

// TestPause: 4 workers of an instant transaction, each pausing 100 ms after
// every one, make about 40 a second, never more than 4 × (1 + 10) a second
// (a loaded machine's late timers make fewer: 30/s measured at a load
// average of 12 on 2 cores; without the pause they make thousands).
func TestPause(t *testing.T) {
	t.Parallel()
	op := &rampOp{}
	cfg := engine.Config{Load: engine.Load{Concurrency: 4, Duration: 2 * time.Second, Pause: 100 * time.Millisecond}}
	res, err := engine.Run(context.Background(), cfg, op)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Snapshot.OK
	t.Logf("%d transactions in 2 s with a pause of 100 ms: %.1f/s", got, float64(got)/2)
	if got < 40 || got > 88 {
		t.Errorf("%d transactions in 2 s, want about 80 (4 workers, 100 ms pause), at most 88", got)
	}
	for _, s := range res.Series {
		if s.Phase != "" {
			t.Errorf("second %d has phase %q in a run without ramps", s.T, s.Phase)
		}
	}
	if res.Series[0].OpenConns != 4 {
		t.Errorf("first second: %d open connections, want 4", res.Series[0].OpenConns)
	}
	// In open loop the rate paces the starts: a pause is refused.
	cfg.Rate = 10
	if _, err := engine.Run(context.Background(), cfg, op); err == nil {
		t.Error("a pause in open loop: no error")
	}
}

// halfOp's transactions hold a connection for the first half of their
// 20 ms: its workers hold half as many connections as they are, on average.
type halfOp struct{ open atomic.Int64 }

func (o *halfOp) NewWorker(int) (engine.Worker, error) { return o, nil }
func (o *halfOp) OpenConns() (now, peak int64)         { return o.open.Load(), 0 }
func (o *halfOp) Do(_ context.Context, s *metrics.Sample) {
	o.open.Add(1)
	time.Sleep(10 * time.Millisecond)
	o.open.Add(-1)
	time.Sleep(10 * time.Millisecond)
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// TestOpenConnsMean checks a second's concurrent connections: the mean of
// its samples, half the workers here, whatever is open at its very end.
func TestOpenConnsMean(t *testing.T) {
	t.Parallel()
	op := &halfOp{}
	cfg := engine.Config{Load: engine.Load{Concurrency: 8, Duration: 2 * time.Second}}
	res, err := engine.Run(context.Background(), cfg, op)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Series {
		if s.Partial {
			continue
		}
		t.Logf("second %d: mean %.2f open connections, %d at its end", s.T, s.OpenConnsMean, s.OpenConns)
		if s.OpenConnsMean < 2.5 || s.OpenConnsMean > 5.5 {
			t.Errorf("second %d: mean %.2f open connections, want about 4 (8 workers holding one half the time)",
				s.T, s.OpenConnsMean)
		}
	}
}
