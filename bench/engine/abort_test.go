package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// breakingOp succeeds (after sleep) until failFrom, then fails at once
// like a refused connection; failFrom zero: always fails.
type breakingOp struct {
	sleep    time.Duration
	failFrom atomic.Int64 // unix nanoseconds; 0: from the start
	calls    atomic.Int64
	failures atomic.Int64
}

func (o *breakingOp) NewWorker(int) (engine.Worker, error) { return o, nil }

func (o *breakingOp) Do(ctx context.Context, s *metrics.Sample) {
	o.calls.Add(1)
	if f := o.failFrom.Load(); f == 0 || time.Now().UnixNano() >= f {
		o.failures.Add(1)
		s.Class, s.Err = vocab.ClassRefused, errors.New("connection refused")
		s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
		return
	}
	time.Sleep(o.sleep)
	s.Handshake, s.Opened = true, true
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// maxAttempts bounds what a worker may try in d when it backs off: the
// failures before the first wait, then one per wait, each at least half
// of BackoffBase doubled per step, plus slack for a busy machine.
func maxAttempts(workers int, d time.Duration) int64 {
	n, sum, step := engine.BackoffAfter, time.Duration(0), engine.BackoffBase
	for sum < d {
		sum += step / 2
		step = min(2*step, engine.BackoffCap)
		n++
	}
	return int64(workers * (n + 3))
}

// TestAbortWhenNothingSucceeds: against a target that refuses everything
// the workers back off and the run ends once nothing has succeeded for
// AbortAfter, with every attempt counted.
func TestAbortWhenNothingSucceeds(t *testing.T) {
	op := &breakingOp{}
	const abort = 300 * time.Millisecond
	begin := time.Now()
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 8, Duration: 20 * time.Second, AbortAfter: abort}}, op)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted == "" || res.Complete {
		t.Fatalf("aborted %q, complete %v", res.Aborted, res.Complete)
	}
	if took < abort || took > abort+2*time.Second {
		t.Errorf("the run took %s, want %s plus at most 2s (a busy machine)", took, abort)
	}
	if res.Attempts != op.calls.Load() || res.Attempts != res.Snapshot.AllErrors {
		t.Errorf("attempts %d, calls %d, recorded errors %d", res.Attempts, op.calls.Load(), res.Snapshot.AllErrors)
	}
	if bound := maxAttempts(8, took); res.Attempts > bound {
		t.Errorf("%d attempts in %s with 8 workers backing off, want at most %d", res.Attempts, took, bound)
	}
	if res.Backoffs == 0 {
		t.Error("no backoff counted")
	}
	t.Logf("aborted after %s, %d attempts, %d backoffs: %s", took.Round(time.Millisecond), res.Attempts, res.Backoffs, res.Aborted)
}

// TestAbortMidRun: a target that stops answering mid-run ends the run
// AbortAfter after its first failure.
func TestAbortMidRun(t *testing.T) {
	op := &breakingOp{sleep: time.Millisecond}
	const abort = 300 * time.Millisecond
	begin := time.Now()
	breaks := begin.Add(400 * time.Millisecond)
	op.failFrom.Store(breaks.UnixNano())
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Duration: 20 * time.Second, Warmup: 100 * time.Millisecond, AbortAfter: abort}}, op)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ended %s after the break (the record ends %s after it): %s", (took - 400*time.Millisecond).Round(time.Millisecond),
		res.Ended.Sub(breaks).Round(time.Millisecond), res.Aborted)
	if res.Aborted == "" {
		t.Fatal("not aborted")
	}
	if after := took - 400*time.Millisecond; after < abort || after > abort+2*time.Second {
		t.Errorf("ended %s after the target broke, want %s plus at most 2s (a busy machine)", after, abort)
	}
	if res.Snapshot.AllOK == 0 {
		t.Error("nothing succeeded before the target broke")
	}
	if f, bound := op.failures.Load(), maxAttempts(4, took-400*time.Millisecond); f > bound {
		t.Errorf("%d failed attempts after the break, want at most %d", f, bound)
	}
	if res.Attempts != res.Snapshot.AllOK+res.Snapshot.AllErrors {
		t.Errorf("attempts %d, recorded %d + %d", res.Attempts, res.Snapshot.AllOK, res.Snapshot.AllErrors)
	}
}

// TestFailuresUnderLoadAreData: 5% of transactions failing, never five in
// a row, is measured: no wait, no abort.
func TestFailuresUnderLoadAreData(t *testing.T) {
	op := &fakeOp{sleep: time.Millisecond, failNth: 20}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Duration: 600 * time.Millisecond, AbortAfter: 50 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted != "" || !res.Complete || res.Backoffs != 0 {
		t.Fatalf("aborted %q, complete %v, %d backoffs", res.Aborted, res.Complete, res.Backoffs)
	}
	s := res.Snapshot
	if s.AllErrors == 0 || s.AllOK < 15*s.AllErrors {
		t.Errorf("%d ok, %d errors; want 5%% errors", s.AllOK, s.AllErrors)
	}
}

// TestSlowIsNotStalled: transactions longer than AbortAfter that succeed
// do not stop the run.
func TestSlowIsNotStalled(t *testing.T) {
	op := &fakeOp{sleep: 300 * time.Millisecond}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2, Duration: 500 * time.Millisecond, AbortAfter: 50 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted != "" || !res.Complete {
		t.Fatalf("aborted %q, complete %v", res.Aborted, res.Complete)
	}
}

// TestOpenLoopBacksOff: an open loop against a refusing target takes far
// fewer starts than its rate (the rest are dropped); AbortAfter 0 never
// stops it.
func TestOpenLoopBacksOff(t *testing.T) {
	op := &breakingOp{}
	const d = 800 * time.Millisecond
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Rate: 2000, Duration: d}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted != "" || !res.Complete {
		t.Fatalf("aborted %q, complete %v with AbortAfter 0", res.Aborted, res.Complete)
	}
	if bound := maxAttempts(4, d); res.Attempts > bound {
		t.Errorf("%d attempts at 2000/s for %s, want at most %d (backing off)", res.Attempts, d, bound)
	}
	if res.Dropped == 0 {
		t.Error("no start dropped while the workers backed off")
	}
}

// flakyOp fails its first n transactions with class.
type flakyOp struct {
	n     int64
	class vocab.Class
	calls atomic.Int64
}

func (o *flakyOp) NewWorker(int) (engine.Worker, error) { return o, nil }

func (o *flakyOp) Do(_ context.Context, s *metrics.Sample) {
	s.Handshake = true
	if n := o.calls.Add(1); n <= o.n {
		s.Class, s.Err = o.class, fmt.Errorf("failure %d", n)
	}
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// TestPreflight: it stops at the first success; a timeout or a reset is
// tried again up to PreflightAttempts in all, any other failure is not;
// each failed attempt is in the result, in order.
func TestPreflight(t *testing.T) {
	for _, tc := range []struct {
		class    vocab.Class
		fail     int64
		attempts int
		ok       bool
	}{
		{vocab.ClassReset, 0, 1, true},
		{vocab.ClassHandshakeTimeout, 1, 2, true},
		{vocab.ClassConnectTimeout, 2, 3, true},
		{vocab.ClassReadTimeout, engine.PreflightAttempts, engine.PreflightAttempts, false},
		{vocab.ClassReset, 100, engine.PreflightAttempts, false},
		// The device is wrong, not flaky: one attempt.
		{vocab.ClassMismatch, 1, 1, false},
		{vocab.ClassStatus, 100, 1, false},
		{vocab.ClassCertificate, 1, 1, false},
		{vocab.TLSAlert("handshake_failure"), 1, 1, false},
		{vocab.ClassRefused, 1, 1, false},
		{vocab.ClassBodySize, 1, 1, false},
	} {
		op := &flakyOp{n: tc.fail, class: tc.class}
		res, err := engine.Preflight(context.Background(), op)
		if err != nil {
			t.Fatal(err)
		}
		if res.OK() != tc.ok || res.Attempts != tc.attempts || res.Handshakes != tc.attempts || op.calls.Load() != int64(tc.attempts) {
			t.Errorf("first %d failing with %s: ok %v, %d attempts, %d handshakes, %d calls; want ok %v, %d",
				tc.fail, tc.class, res.OK(), res.Attempts, res.Handshakes, op.calls.Load(), tc.ok, tc.attempts)
		}
		failed := min(tc.attempts, int(tc.fail))
		if len(res.Failed) != failed {
			t.Fatalf("%s: %d failed attempts recorded, want %d", tc.class, len(res.Failed), failed)
		}
		for i, f := range res.Failed {
			if f.Class != tc.class || f.Error != fmt.Sprintf("failure %d", i+1) {
				t.Errorf("%s: failed attempt %d is %+v", tc.class, i+1, f)
			}
		}
		if !tc.ok && (res.Sample.Class != tc.class || res.Sample.Err == nil || res.Sample.Err.Error() != res.Failed[failed-1].Error) {
			t.Errorf("failed preflight's sample: class %q, err %v", res.Sample.Class, res.Sample.Err)
		}
	}
}
