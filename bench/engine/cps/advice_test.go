package cps_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

func TestDeadlineAdvice(t *testing.T) {
	if w := cps.DeadlineAdvice(32, 2, 5*time.Second, 10*time.Second); w != nil {
		t.Errorf("-c 32 warned: %s", w)
	}
	// 20,000 on 2 cores at 500 handshakes per core per second: 20 s of
	// queue, deadlines of 40 s advised.
	w := cps.DeadlineAdvice(20000, 2, 5*time.Second, 10*time.Second)
	if w == nil || w.Queue != 20*time.Second || w.Suggest != 40*time.Second {
		t.Fatalf("-c 20000: %+v", w)
	}
	if msg := w.String(); !strings.Contains(msg, "about 20s") || !strings.Contains(msg, "at least 40s") {
		t.Errorf("-c 20000: %q", msg)
	}
	if w := cps.DeadlineAdvice(20000, 2, 60*time.Second, 60*time.Second); w != nil {
		t.Errorf("-c 20000 with 60 s deadlines warned: %s", w)
	}
}

func TestTimeoutAdvice(t *testing.T) {
	run := func(conc int, cps float64, timeouts int64) *metrics.Run {
		return &metrics.Run{
			Load:   metrics.Load{Mode: "closed", Concurrency: conc},
			CPS:    new(cps),
			Errors: metrics.Errors{ByClass: map[vocab.Class]int64{vocab.ClassHandshakeTimeout: timeouts}},
		}
	}
	// 20,000 connections at 700 CPS: each transaction about 28.6 s.
	n := cps.TimeoutAdvice(run(20000, 700, 12), 40*time.Second, 40*time.Second)
	if n == nil || n.Timeouts != 12 || n.Suggest != time.Minute {
		t.Fatalf("queue-bound timeouts: %+v", n)
	}
	if msg := n.String(); !strings.Contains(msg, "28.6s") || !strings.Contains(msg, "at least 1m0s") {
		t.Errorf("queue-bound timeouts: %q", msg)
	}
	// No timeouts, or a slow target at low concurrency: nothing to say.
	for _, r := range []*metrics.Run{run(20000, 700, 0), run(16, 700, 5)} {
		if n := cps.TimeoutAdvice(r, 5*time.Second, 10*time.Second); n != nil {
			t.Errorf("-c %d: %s", r.Load.Concurrency, n)
		}
	}
}
