package http2

import (
	"cmp"
	"context"
	"math/rand/v2"
	"time"

	"golang.org/x/net/http2"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// tputOp is throughput over HTTP/2: each worker's connection, opened with
// a full handshake, carries Streams concurrent streams of repeated GETs; a
// sample is a stream, from its request to its END_STREAM, as a sample of
// HTTP/1.1 is a response of its pipeline.
type tputOp struct {
	*base
	*throughput.Streamed
}

func newThroughput(a protocol.Args) (protocol.Op, error) {
	st, err := throughput.NewStreamed(cmp.Or(a.Streams, DefaultStreams), a.VerifyBody, target.Pattern)
	if err != nil {
		return nil, err
	}
	b, err := newBase(vocab.EngineThroughput, a, 1<<30)
	if err != nil {
		return nil, err
	}
	return &tputOp{base: b, Streamed: st}, nil
}

func (op *tputOp) NewWorker(id int) (engine.Worker, error) {
	w := &tputWorker{op: op, dialer: op.NewDialer(id), requester: requester{gen: httpreq.NewGen(rand.Uint64())}}
	if op.Pattern != nil || op.SHA256 != nil {
		w.data = w.check
	}
	return w, nil
}

type tputWorker struct {
	requester
	op     *tputOp
	dialer *tlsconn.Dialer
	c      *conn
	n      counts
	nsent  int       // requests made on the connection
	free   []*stream // ended streams, for reuse
	data   func(*stream, []byte)
	sum    []byte
	server string
	// opened carries a connection opened ahead of the load (Open) into
	// the next sample: connect and handshake times.
	opened       bool
	openedPhases tlsconn.Phases // the last connection's opening
	openedAt     time.Time      // its connect's start
	byDevice     bool           // the device ended the last connection: the next is a reconnection
	single       bool           // one stream at a time (Single)
}

var (
	_ engine.Opener  = (*tputWorker)(nil)
	_ engine.Drainer = (*tputWorker)(nil)
)

// Server is the last response's Server header (the preflight records it).
func (w *tputWorker) Server() string { return w.server }

// Open opens the worker's connection ahead of the load (engine.Opener); the
// next sample carries its connect and handshake times.
func (w *tputWorker) Open(ctx context.Context, s *metrics.Sample) bool {
	at, fresh := time.Now(), w.c == nil
	ok := w.connect(ctx, s)
	if fresh && ok {
		w.opened, w.openedAt = true, at
	}
	return ok
}

// Do reads one stream's response, the worker's connection kept full of
// streams (opened first if it has none). When the device ended a
// kept-alive connection before answering (a GOAWAY, or its close), it
// opens a new one and asks again (a new connection is not retried).
// Every way out of the loop ends s; it goes round at most three times.
func (w *tputWorker) Do(ctx context.Context, s *metrics.Sample) {
	for try := 0; ; try++ {
		dialed, carried := w.c == nil, w.opened
		var t0 time.Time // the first packet of a transaction that opened its connection
		if dialed {
			t0 = time.Now()
		} else if carried {
			t0 = w.openedAt
		}
		if !w.connect(ctx, s) {
			return
		}
		err := w.fill()
		if err == nil && len(w.c.ss) == 0 { // the budget is spent and every response read: start afresh
			w.closeIn(s, true)
			continue
		}
		var st *stream
		if err == nil {
			st, err = w.wait()
		}
		_, refused := err.(*goAway)
		if closed := classOf(err); !dialed && try < 2 && (refused || w.c.in == w.n.in &&
			(closed == vocab.ClassEOF || closed == vocab.ClassReset)) {
			// The device ended a kept-alive connection (GOAWAY, or
			// its close) before answering: ask again on a new one.
			in, out := w.c.tc.WireIn()-w.n.wireIn, w.c.tc.WireOut()-w.n.wireOut
			w.closeIn(s, false)
			s.WireIn, s.WireOut, w.byDevice = s.WireIn+in, s.WireOut+out, true
			continue
		}
		if err != nil {
			w.fail(s, err)
			return
		}
		w.ended(s, st, cmp.Or(t0, st.sent))
		return
	}
}

// Drain reads one of the streams still open when the worker is to run no
// more (engine.Drainer): the device answers them, so they are read to the
// end and counted, as samples outside the window. False when none is left
// (or the server will not answer them: a GOAWAY below them).
func (w *tputWorker) Drain(ctx context.Context, s *metrics.Sample) bool {
	if w.c == nil || len(w.c.ss) == 0 || ctx.Err() != nil {
		return false
	}
	st, err := w.wait()
	switch _, refused := err.(*goAway); {
	case refused:
		return false
	case err != nil:
		w.fail(s, err)
	default:
		w.ended(s, st, st.sent)
	}
	return true
}

// Single makes the worker keep one stream open, not Streams: the
// preflight's, which reads one response and closes.
func (w *tputWorker) Single() { w.single = true }

// ended closes sample s with its stream st.
func (w *tputWorker) ended(s *metrics.Sample, st *stream, t0 time.Time) {
	c := w.c
	end(s, st, t0, time.Now())
	w.server = c.server
	w.sum = w.op.Ended(s, st.mismatch, st.sum, w.sum)
	if s.Class == "" {
		w.op.observe(c)
	}
	w.n.account(s, c)
	w.free = append(w.free, st)
	switch per := w.op.args.RequestsPerConn; {
	case len(c.ss) > 0:
	case c.goaway != nil || c.eof: // the device ends it
		w.closeIn(s, false)
		w.byDevice = true
	case per > 0 && w.nsent >= per:
		w.closeIn(s, true)
	}
}

// check is the body check of a DATA frame's payload p.
func (w *tputWorker) check(st *stream, p []byte) {
	st.mismatch = w.op.Feed(st.sum, p, st.body, st.mismatch)
}

// connect gives the worker a connection if it has none, or carries the
// one Open opened ahead into s (its connect and handshake times). False:
// the dial failed and s is ended.
func (w *tputWorker) connect(ctx context.Context, s *metrics.Sample) bool {
	switch {
	case w.c == nil:
		if w.byDevice && s.Steady {
			w.op.Reconnections.Add(1)
		}
		w.byDevice = false
		tc, ph, err := w.dialer.Dial(ctx)
		if err == nil {
			w.c, w.n, w.nsent, w.openedPhases = open(tc, w.op.args.Request.ReadTimeout), counts{}, 0, ph
		}
		return ph.Fill(s, err)
	case w.opened:
		w.opened = false
		w.openedPhases.Fill(s, nil)
	}
	return true
}

// fill keeps the connection's streams at Streams (or the server's
// MAX_CONCURRENT_STREAMS), within its request budget, in one write.
func (w *tputWorker) fill() error {
	c := w.c
	n := w.op.Streams - len(c.ss)
	if w.single {
		n = 1 - len(c.ss)
	}
	if c.maxStreams > 0 {
		n = min(n, int(c.maxStreams)-len(c.ss))
	}
	if per := w.op.args.RequestsPerConn; per > 0 {
		n = min(n, per-w.nsent)
	}
	if n <= 0 || c.goaway != nil || c.eof {
		return nil
	}
	for i := 0; i < n; i++ {
		st := &stream{}
		if k := len(w.free); k > 0 {
			st, w.free = w.free[k-1], w.free[:k-1]
			*st = stream{sum: st.sum}
		}
		st.sum = w.op.Sum(st.sum)
		if err := w.request(w.op.base, c, st); err != nil {
			return err
		}
	}
	now := time.Now() // a stream's TTFB starts before its request is written
	for _, st := range c.ss[len(c.ss)-n:] {
		st.sent = now
	}
	w.nsent += n
	return c.flush()
}

// wait reads frames until a stream ends. A GOAWAY without an error drops
// the streams the server will not answer (asked again on the next
// connection); when none is left, it is the error.
func (w *tputWorker) wait() (*stream, error) {
	for {
		st, err := w.c.step(w.op.maxBody, w.data)
		if g, ok := err.(*goAway); ok {
			kept := w.c.ss[:0]
			for _, st := range w.c.ss {
				if st.id <= g.Last {
					kept = append(kept, st)
				}
			}
			if w.c.ss = kept; len(kept) > 0 {
				continue
			}
			return nil, g
		}
		if st != nil || err != nil {
			return st, err
		}
	}
}

// fail ends s with the connection's error and drops the connection: the
// streams open on it are abandoned.
func (w *tputWorker) fail(s *metrics.Sample, err error) {
	if _, refused := err.(*goAway); refused {
		err = protocol.Fail(classGoAway, "%w before any stream was answered", err)
	}
	if len(w.c.ss) > 0 {
		st := w.c.ss[0]
		s.Object, s.Payload = uint16(st.obj+1), st.body
	}
	failed(s, err)
	w.n.account(s, w.c)
	w.closeIn(s, false)
}

// closeIn closes the worker's connection within sample s (a GOAWAY first
// when it is healthy), noting the kernel's account of it in s.
func (w *tputWorker) closeIn(s *metrics.Sample, goaway bool) {
	if goaway {
		_ = w.c.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		_ = w.c.flush()
	}
	w.c.tc.CloseIn(s)
	w.c, w.opened = nil, false
}

// Close closes the worker's connection; streams open are abandoned (the
// engine drains them first).
func (w *tputWorker) Close() error {
	if w.c == nil {
		return nil
	}
	err := w.c.tc.Close()
	w.c, w.opened = nil, false
	return err
}

// CloseTCP closes the worker's connection when it will run no more
// (engine.TCPCloser), with the kernel's account of it.
func (w *tputWorker) CloseTCP() (metrics.TCPConn, bool) {
	if w.c == nil {
		return metrics.TCPConn{}, false
	}
	t, ok := w.c.tc.CloseTCP()
	w.c, w.opened = nil, false
	return t, ok
}
