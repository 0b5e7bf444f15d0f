package engine

import (
	"context"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// PreflightAttempts bounds the preflight's failed transactions. A device
// that times out or resets a connection now and then is flaky: such a
// failure is tried again, each attempt with its own deadlines, and the
// preflight fails only when PreflightAttempts in a row fail. Any other
// failure (a suite, group or version the profile does not name, a
// certificate that does not verify, a status, a body, a refused port or
// resumption) shows the device is wrong, not flaky, and fails it at once:
// trying again would hide a mistake and cost the device connections.
const PreflightAttempts = 3

// flaky are the failures the preflight tries again.
var flaky = map[vocab.Class]bool{
	vocab.ClassConnectTimeout: true, vocab.ClassHandshakeTimeout: true, vocab.ClassReadTimeout: true,
	vocab.ClassReset: true, vocab.ClassQUICHandshakeTimeout: true, // QUIC's Initial lost (HTTP/3)
}

// preflightResult is what the preflight saw.
type preflightResult struct {
	// Sample is the last transaction: the success, or the last failure.
	Sample metrics.Sample
	// Attempts is how many transactions were made, Handshakes how many of
	// them completed a TLS handshake; Duration the time they all took.
	Attempts, Handshakes, Resumed int
	Duration                      time.Duration
	// Failed are the failed transactions, in order (the last is Sample
	// when the preflight failed).
	Failed []metrics.PreflightAttempt
	// Server is the Server header of the last response, if the worker
	// tells it (the device's software, for the report).
	Server string
}

// OK reports whether the preflight succeeded.
func (p *preflightResult) OK() bool { return p.Attempts > 0 && p.Sample.Class == "" }

// Preflight checks op before any load with transactions made exactly as a
// worker of the load makes them: one worker of op (id 0, the first source
// address) runs Do, then is closed; a worker whose transactions overlap
// (a Single method) is asked to make them one at a time. Nothing is
// recorded. It stops at the first success, at the first failure that is
// not flaky, or after PreflightAttempts flaky ones. An error means no
// worker could be made.
//
// When op resumes sessions (a Resumes method that says so), a success whose
// connection made a full handshake is followed by one more transaction on a
// new connection (the worker's held one closed, whatever its requests per
// connection): a worker's second connection offers a session (tlsconn,
// whatever the share), so that a device
// that does not resume fails the preflight (not_resumed, not retried)
// rather than every resumption of the load.
func Preflight(ctx context.Context, op Op) (preflightResult, error) {
	var res preflightResult
	w, err := op.NewWorker(0)
	if err != nil {
		return res, err
	}
	defer closeWorker(w)
	if d, ok := w.(interface{ Single() }); ok {
		d.Single() // one transaction under way at a time: none is left unread at the close
	}
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
			closeWorker(w) // a full handshake: the next hit opens a connection, which offers its session
			continue
		}
		if s.Class == "" {
			break
		}
		f := metrics.PreflightAttempt{Class: s.Class}
		if s.Err != nil {
			f.Error = s.Err.Error()
		}
		res.Failed = append(res.Failed, f)
		if !flaky[s.Class] || len(res.Failed) == PreflightAttempts || ctx.Err() != nil {
			break
		}
	}
	res.Duration = time.Since(begin)
	// Server() string: the Server header of a response the worker read
	// ("" when none said), read here, never on the load's hot path.
	if sv, ok := w.(interface{ Server() string }); ok {
		res.Server = sv.Server()
	}
	return res, nil
}
