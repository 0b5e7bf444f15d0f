package http3

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// cpsOp is CPS over HTTP/3: a new QUIC connection and full handshake per
// transaction (or per RequestsPerConn of them), one request stream at a
// time, closed by the client (CONNECTION_CLOSE).
type cpsOp struct {
	*base
	clientFirst atomic.Int64
}

// Closes returns how the connections that carried a complete response
// ended: always by the client's CONNECTION_CLOSE.
func (op *cpsOp) Closes() metrics.Closes { return metrics.Closes{ClientFirst: op.clientFirst.Load()} }

func newCPS(a protocol.Args) (protocol.Op, error) {
	b, err := newBase(vocab.EngineCPS, a, 16<<20)
	if err != nil {
		return nil, err
	}
	b.countPTOs()
	return &cpsOp{base: b}, nil
}

func (op *cpsOp) NewWorker(id int) (engine.Worker, error) {
	return &cpsWorker{op: op, dialer: op.NewDialer(id), gen: httpreq.NewGen(rand.Uint64()),
		buf: make([]byte, readBuf)}, nil
}

type cpsWorker struct {
	op     *cpsOp
	dialer *tlsconn.Dialer
	gen    *httpreq.Gen
	head   []byte
	buf    []byte
	c      *conn // held between the RequestsPerConn transactions of a connection
	nreq   int
	server string
}

// Server is the last response's Server header (the preflight records it).
func (w *cpsWorker) Server() string { return w.server }

// Do is one transaction: a GET on a new request stream of the worker's
// connection, opened first (QUIC handshake) if it has none, and closed
// (CONNECTION_CLOSE) after its RequestsPerConn-th stream or a failure. A
// kept connection the device ended before the request was answered (its
// close, or a GOAWAY) is replaced once, as is one whose 0-RTT request it
// rejected.
func (w *cpsWorker) Do(ctx context.Context, s *metrics.Sample) {
	early := w.op.early
	for try := 0; try < 3; try++ {
		t0 := time.Now() // the transaction's first packet (RFC 9411's TTFB and TTLB)
		reused := w.c != nil
		if !reused {
			if w.c = w.op.open(ctx, w.dialer, s, early); w.c == nil {
				return
			}
			w.nreq = 0
		}
		w.nreq++
		r := result{}
		req, obj, want, head, err := w.op.next(w.gen, w.head)
		w.head, r.obj, r.want = head, obj, want
		if err != nil {
			r.err = err
		} else {
			str, err := w.op.send(w.c, req, &r)
			if w.c.pending && !w.op.confirm(w.c, w.dialer, s, w.c.t0, nil) {
				w.c = nil
				return
			}
			if !w.c.pending || w.c.qc.ConnectionState().Used0RTT { // not a rejected 0-RTT request
				w.op.receive(str, err, &r, w.buf, nil)
			}
			if w.c.early && w.rejected(&r) { // again on a new connection, in 1-RTT
				w.op.close(w.c, nil, true)
				w.c, early = nil, false
				continue
			}
		}
		if reused && w.c.ended(&r) {
			w.op.close(w.c, nil, true)
			w.c = nil
			continue
		}
		if !s.Opened {
			t0 = r.sent
		}
		w.server = r.server
		r.end(s, t0)
		if r.err == nil && w.nreq < max(w.op.args.RequestsPerConn, 1) {
			w.c.account(s)
			return
		}
		if r.err == nil {
			w.op.clientFirst.Add(1)
		}
		w.op.close(w.c, s, true)
		w.c = nil
		s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
		return
	}
}

// rejected counts the 0-RTT data of the worker's connection, dialled for
// it, accepted or rejected (none counted when its session allowed none),
// and reports a rejection: the request r went as 0-RTT data that the
// device refused, or failed unanswered on a connection that a rejection
// broke (quic-go's http3 client cannot go on with a connection whose 0-RTT
// streams were dropped: its control stream's goroutine closes it,
// H3_INTERNAL_ERROR). The request is then made again on a new connection.
func (w *cpsWorker) rejected(r *result) bool {
	c, op := w.c, w.op
	accepted := c.qc.ConnectionState().Used0RTT
	rejected := !accepted && (c.pending || r.err != nil && r.first.IsZero())
	c.early, c.pending = false, false
	op.mu.Lock()
	defer op.mu.Unlock()
	if accepted {
		op.acct.EarlyDataAccepted++
	} else if rejected {
		op.acct.EarlyDataRejected++
	}
	return rejected
}

// Close closes the connection the worker holds, if any.
func (w *cpsWorker) Close() error {
	if w.c != nil {
		w.op.close(w.c, nil, true)
		w.c = nil
	}
	return nil
}
