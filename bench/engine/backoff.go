package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// A worker that fails BackoffAfter times in a row waits before its next
// transaction: BackoffBase, doubled at every further failure up to
// BackoffCap, each wait drawn between half and all of it (jitter, so that
// the workers do not come back together). A success ends the streak. A
// device that fails a few percent of its transactions is measured as it
// is: five failures in a row at 5% happen once in 3 million transactions.
const (
	BackoffAfter = 5
	BackoffBase  = 10 * time.Millisecond
	BackoffCap   = time.Second
)

// DefaultAbortAfter is the abort bound the commands use by default: a run
// in which nothing has succeeded for this long, while transactions failed,
// is stopped (Config.AbortAfter).
const DefaultAbortAfter = 3 * time.Second

// backoff is one worker's consecutive failures.
type backoff struct {
	streak int
	waits  int64
}

// after returns how long the worker waits after a transaction that
// succeeded (ok) or failed; 0 for no wait.
func (b *backoff) after(ok bool) time.Duration {
	if ok {
		b.streak = 0
		return 0
	}
	b.streak++
	if b.streak < BackoffAfter {
		return 0
	}
	d := BackoffCap
	if n := b.streak - BackoffAfter; n < 7 { // 10ms << 7 > 1s
		d = min(BackoffBase<<n, BackoffCap)
	}
	b.waits++
	return d/2 + rand.N(d/2+1)
}

// wait sleeps d, or less if stop closes first.
func wait(d time.Duration, stop <-chan struct{}) {
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-stop:
		t.Stop()
	}
}

// stallWatch ends a run in which nothing has succeeded for a bound while
// transactions failed: the time since the first failure after the last
// success (or the start) is what it bounds, so a slow device whose
// transactions are all still in flight is not stopped, nor is one whose
// failures are mixed with successes.
type stallWatch struct {
	after time.Duration
	base  time.Time
	// failingSince is the time of the first failure since the last
	// success, in nanoseconds since base plus one; 0 when none.
	failingSince atomic.Int64
	failed       atomic.Int64 // failures since then

	mu        sync.Mutex
	lastClass vocab.Class
	lastErr   string
}

func newStallWatch(after time.Duration, base time.Time) *stallWatch {
	return &stallWatch{after: after, base: base}
}

// observe notes a recorded transaction. Successes only read the shared
// word unless a failure came before them.
func (w *stallWatch) observe(s *metrics.Sample) {
	if s.Class == "" {
		if w.failingSince.Load() != 0 {
			w.failingSince.Store(0)
			w.failed.Store(0)
		}
		return
	}
	w.failed.Add(1)
	if w.failingSince.Load() == 0 {
		w.failingSince.CompareAndSwap(0, int64(time.Since(w.base))+1)
	}
	w.mu.Lock()
	w.lastClass = s.Class
	if s.Err != nil {
		w.lastErr = s.Err.Error()
	}
	w.mu.Unlock()
}

// stalled returns the reason to stop at now, or "".
func (w *stallWatch) stalled(now time.Time) string {
	since := w.failingSince.Load()
	if since == 0 {
		return ""
	}
	first := w.base.Add(time.Duration(since - 1))
	if now.Sub(first) < w.after {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	reason := fmt.Sprintf("no transaction succeeded for %s (%d failed since %.1fs into the run); the last failure: %s",
		w.after, w.failed.Load(), first.Sub(w.base).Seconds(), w.lastClass)
	if w.lastErr != "" {
		reason += " (" + w.lastErr + ")"
	}
	return reason
}

// every is how often the stall is checked: a tenth of the bound, between
// 10 ms and 250 ms.
func (w *stallWatch) every() time.Duration {
	return min(max(w.after/10, 10*time.Millisecond), 250*time.Millisecond)
}
