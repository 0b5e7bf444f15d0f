package cps

import (
	"fmt"
	"math"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// handshakesPerCore is a prudent number of full handshakes one generator
// core completes per second when the target shares the machine: 20,000
// connections on loopback against nginx made 350–700 per second on two
// cores (docs/PERFORMANCE.md).
const handshakesPerCore = 500

// DeadlineWarning is DeadlineAdvice's warning: Conc connections would
// queue each handshake about Queue on Cores cores at PerCore handshakes per
// second each, against the Handshake and Read deadlines; Suggest is the
// deadline advised for both.
type DeadlineWarning struct {
	Conc, Cores, PerCore            int
	Queue, Handshake, Read, Suggest time.Duration
}

func (w *DeadlineWarning) String() string {
	return fmt.Sprintf("at concurrency %d each handshake queues behind thousands of others: "+
		"at %d handshakes per second on each of %d cores that is about %s, "+
		"against the handshake deadline %s and the read deadline %s; "+
		"set both to at least %s, or expect handshake_timeout and read_timeout errors",
		w.Conc, w.PerCore, w.Cores, w.Queue, w.Handshake, w.Read, w.Suggest)
}

// DeadlineAdvice returns a warning, or nil, when conc connections in flight
// would queue their handshakes beyond the deadline on cores generator cores:
// each handshake waits behind up to conc others, about conc ÷ rate seconds.
// A warning suggests deadlines twice that at handshakesPerCore per core.
func DeadlineAdvice(conc, cores int, handshake, read time.Duration) *DeadlineWarning {
	queue := time.Duration(float64(conc) / float64(handshakesPerCore*max(cores, 1)) * float64(time.Second))
	if queue <= min(handshake, read)/2 {
		return nil
	}
	return &DeadlineWarning{Conc: conc, Cores: cores, PerCore: handshakesPerCore, Queue: queue.Round(time.Second),
		Handshake: handshake, Read: read, Suggest: roundUp(2 * queue)}
}

// TimeoutNote is TimeoutAdvice's note: Timeouts transactions timed out, at
// concurrency Conc and CPS each took about Each, near the Handshake and
// Read deadlines; Suggest is the deadline advised.
type TimeoutNote struct {
	Timeouts                       int64
	Conc                           int
	CPS                            float64
	Each, Handshake, Read, Suggest time.Duration
}

func (n *TimeoutNote) String() string {
	return fmt.Sprintf("%d transactions timed out; at concurrency %d and %.0f CPS "+
		"each transaction took about %s (concurrency ÷ CPS), near the deadlines "+
		"(handshake %s, read %s): set them to at least %s, or lower the concurrency",
		n.Timeouts, n.Conc, n.CPS, n.Each, n.Handshake, n.Read, n.Suggest)
}

// TimeoutAdvice returns a note, or nil, on a run whose transactions timed
// out because of their own number: by Little's law each lasted about
// concurrency ÷ CPS, which came near the deadline.
func TimeoutAdvice(r *metrics.Run, handshake, read time.Duration) *TimeoutNote {
	byClass := r.Errors.ByClass
	timeouts := byClass[vocab.ClassHandshakeTimeout] + byClass[vocab.ClassReadTimeout] + byClass[vocab.ClassConnectTimeout]
	if timeouts == 0 || r.CPS == nil || *r.CPS <= 0 || r.Load.Mode != "closed" {
		return nil
	}
	cps := *r.CPS
	each := time.Duration(float64(r.Load.Concurrency) / cps * float64(time.Second))
	if each < min(handshake, read)/2 {
		return nil // the target's own slowness, not the queue
	}
	return &TimeoutNote{Timeouts: timeouts, Conc: r.Load.Concurrency, CPS: cps, Each: each.Round(100 * time.Millisecond),
		Handshake: handshake, Read: read, Suggest: roundUp(2 * each)}
}

// roundUp rounds d up to 10 s.
func roundUp(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds()/10)) * 10 * time.Second
}
