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

// DeadlineAdvice returns a warning, or "", when conc connections in flight
// would queue their handshakes beyond the deadline on cores generator cores:
// each handshake waits behind up to conc others, about conc ÷ rate seconds.
// A warning suggests deadlines twice that at handshakesPerCore per core.
func DeadlineAdvice(conc, cores int, handshake, read time.Duration) string {
	queue := time.Duration(float64(conc) / float64(handshakesPerCore*max(cores, 1)) * float64(time.Second))
	if queue <= min(handshake, read)/2 {
		return ""
	}
	return fmt.Sprintf("at -c %d each handshake queues behind thousands of others: at %d handshakes per second on each of %d cores that is about %s, "+
		"against --handshake-timeout %s and --read-timeout %s; pass both of at least %s, or expect handshake_timeout and read_timeout errors",
		conc, handshakesPerCore, cores, queue.Round(time.Second), handshake, read, roundUp(2*queue))
}

// TimeoutAdvice returns a note, or "", on a run whose transactions timed
// out because of their own number: by Little's law each lasted about
// concurrency ÷ CPS, which came near the deadline.
func TimeoutAdvice(r *metrics.Run, handshake, read time.Duration) string {
	timeouts := r.Errors.ByClass[vocab.ClassHandshakeTimeout] + r.Errors.ByClass[vocab.ClassReadTimeout] + r.Errors.ByClass[vocab.ClassConnectTimeout]
	if timeouts == 0 || r.CPS == nil || *r.CPS <= 0 || r.Load.Mode != "closed" {
		return ""
	}
	cps := *r.CPS
	each := time.Duration(float64(r.Load.Concurrency) / cps * float64(time.Second))
	if each < min(handshake, read)/2 {
		return "" // the target's own slowness, not the queue
	}
	return fmt.Sprintf("%d transactions timed out; at -c %d and %.0f CPS each transaction took about %s (concurrency ÷ CPS), near the deadlines "+
		"(--handshake-timeout %s, --read-timeout %s): pass at least %s, or lower -c", timeouts, r.Load.Concurrency, cps,
		each.Round(100*time.Millisecond), handshake, read, roundUp(2*each))
}

// roundUp rounds d up to 10 s.
func roundUp(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds()/10)) * 10 * time.Second
}
