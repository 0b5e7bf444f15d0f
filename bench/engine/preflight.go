package engine

import (
	"context"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// The preflight makes up to PreflightAttempts transactions: it stops at the
// first success, and after a failure once PreflightRetryWithin has passed
// since it began. A mistake (port, profile, certificate, path) fails every
// time and costs the device that many connections within milliseconds; a
// device that fails a few percent of its transactions passes (three
// failures in a row at 5% happen once in 8,000 runs).
const (
	PreflightAttempts    = 3
	preflightRetryWithin = time.Second
)

// preflightResult is what the preflight saw.
type preflightResult struct {
	// Sample is the last transaction: the success, or the last failure.
	Sample metrics.Sample
	// Attempts is how many transactions were made, Handshakes how many of
	// them completed a TLS handshake; Duration the time they all took.
	Attempts, Handshakes, Resumed int
	Duration                      time.Duration
}

// OK reports whether the preflight succeeded.
func (p *preflightResult) OK() bool { return p.Attempts > 0 && p.Sample.Class == "" }

// Preflight checks op before any load with transactions made exactly as a
// worker of the load makes them: one worker of op (id 0, the first source
// address) runs Do, then is closed. Nothing is recorded. An error means no
// worker could be made.
//
// When op resumes sessions (a Resumes method that says so), a success whose
// connection made a full handshake is followed by one more transaction: a
// worker's second connection offers a session (tlsconn), so that a device
// that does not resume fails the preflight (not_resumed, not retried)
// rather than every resumption of the load.
func Preflight(ctx context.Context, op Op) (preflightResult, error) {
	var res preflightResult
	w, err := op.NewWorker(0)
	if err != nil {
		return res, err
	}
	defer closeWorker(w)
	r, ok := op.(interface{ Resumes() bool })
	resumes := ok && r.Resumes()
	begin := time.Now()
	limit := PreflightAttempts
	if resumes {
		limit++
	}
	for res.Attempts < limit {
		s := &res.Sample
		now := time.Now()
		hit(ctx, w, s, now, now, false)
		res.Attempts++
		if s.Handshake {
			res.Handshakes++
		}
		if s.Resumed {
			res.Resumed++
		}
		if s.Class == "" && ctx.Err() != nil {
			s.Class, s.Err = vocab.ClassOther, ctx.Err()
		}
		if s.Class == "" && resumes && s.Opened && !s.Resumed {
			continue // a full handshake: the next connection offers its session
		}
		if s.Class == "" || s.Class == vocab.ClassNotResumed || ctx.Err() != nil ||
			time.Since(begin) >= preflightRetryWithin {
			break
		}
	}
	res.Duration = time.Since(begin)
	return res, nil
}
