package engine

import (
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestBackoffSteps: no wait before BackoffAfter failures in a row, then a
// wait between half and all of BackoffBase doubled per further failure,
// capped at BackoffCap; a success ends the streak.
func TestBackoffSteps(t *testing.T) {
	var b backoff
	for round := 0; round < 2; round++ {
		for i := 1; i < BackoffAfter; i++ {
			if d := b.after(false); d != 0 {
				t.Fatalf("round %d: wait %s after %d failures", round, d, i)
			}
		}
		full := BackoffBase
		for i := 0; i < 12; i++ {
			d := b.after(false)
			if d < full/2 || d > full {
				t.Fatalf("failure %d in a row: wait %s, want %s to %s", BackoffAfter+i, d, full/2, full)
			}
			full = min(2*full, BackoffCap)
		}
		if d := b.after(true); d != 0 {
			t.Fatalf("wait %s after a success", d)
		}
	}
	if b.waits != 2*12 {
		t.Errorf("%d waits counted, want 24", b.waits)
	}
}

// TestStallWatch: the bound runs from the first failure after the last
// success; a success clears it.
func TestStallWatch(t *testing.T) {
	base := time.Now()
	w := newStallWatch(time.Second, base)
	fail := func() { w.observe(&failed) }
	if w.stalled(base.Add(time.Hour)) != "" {
		t.Fatal("stalled with nothing observed")
	}
	fail()
	first := time.Now()
	if r := w.stalled(first.Add(900 * time.Millisecond)); r != "" {
		t.Fatalf("stalled before the bound: %s", r)
	}
	if r := w.stalled(first.Add(1100 * time.Millisecond)); r == "" {
		t.Fatal("not stalled after the bound")
	}
	w.observe(&succeeded)
	if r := w.stalled(first.Add(time.Hour)); r != "" {
		t.Fatalf("stalled after a success: %s", r)
	}
}

var (
	failed    = metrics.Sample{Class: vocab.ClassRefused}
	succeeded = metrics.Sample{}
)
