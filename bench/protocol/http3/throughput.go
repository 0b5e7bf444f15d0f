package http3

import (
	"cmp"
	"context"
	"hash"
	"math/rand/v2"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// tputOp is throughput over HTTP/3: each worker's QUIC connection carries
// Streams concurrent request streams of repeated GETs, each read by a
// goroutine of its own (quic-go's streams are read apart); a sample is a
// stream, from its request to its end, as over HTTP/2.
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
	w := &tputWorker{op: op, dialer: op.NewDialer(id), gen: httpreq.NewGen(rand.Uint64()), streams: op.Streams,
		done: make(chan *tstream, op.Streams), free: make(chan *tstream, op.Streams)}
	for range op.Streams {
		w.free <- &tstream{buf: make([]byte, readBuf)}
	}
	return w, nil
}

// tstream is a stream's request, response and reading buffer.
type tstream struct {
	result
	buf      []byte
	sum      hash.Hash
	mismatch bool
}

type tputWorker struct {
	op         *tputOp
	dialer     *tlsconn.Dialer
	gen        *httpreq.Gen
	head       []byte
	c          *conn
	done, free chan *tstream // streams ended, and free
	inflight   int
	nsent      int // requests made on the connection
	server     string
	opened     *metrics.Sample // a connection's opening ahead of the load (Open), for the next sample
	streams    int             // open at once: Streams, or 1 (Single)
}

var (
	_ engine.Opener  = (*tputWorker)(nil)
	_ engine.Drainer = (*tputWorker)(nil)
)

// Server is the last response's Server header (the preflight records it).
func (w *tputWorker) Server() string { return w.server }

// Open opens the worker's connection ahead of the load (engine.Opener); the
// next sample carries its handshake.
func (w *tputWorker) Open(ctx context.Context, s *metrics.Sample) bool {
	if w.c != nil {
		return true
	}
	if w.c = w.op.open(ctx, w.dialer, s, false); w.c == nil {
		return false
	}
	w.opened, w.nsent = &metrics.Sample{Start: time.Now()}, 0
	*w.opened = *s
	return true
}

// Do reads one stream's response, the worker's connection kept full of
// streams (opened first if it has none). When the device ended a kept
// connection before answering (its close, or a GOAWAY), it opens a new one
// and asks again, at most twice (a new connection is not retried).
func (w *tputWorker) Do(ctx context.Context, s *metrics.Sample) {
	for try := 0; ; try++ {
		t0, dialed, ok := w.connect(ctx, s)
		if !ok {
			return
		}
		per := w.op.args.RequestsPerConn
		for w.inflight < w.streams && (per == 0 || w.nsent < per) {
			w.start()
		}
		st := w.next(ctx)
		if st == nil {
			return // abandoned: every stream ends within its deadlines
		}
		if !dialed && try < 2 && w.c.ended(&st.result) {
			w.closeConn(s)
			if s.Steady {
				w.op.Reconnections.Add(1)
			}
			continue
		}
		w.ended(s, st, cmp.Or(t0, st.sent))
		return
	}
}

// Drain reads one of the streams still open when the worker is to run no
// more (engine.Drainer): the device answers them, so they are read to the
// end and counted, as samples outside the window. False when none is left
// (or the device ended the connection before answering it).
func (w *tputWorker) Drain(ctx context.Context, s *metrics.Sample) bool {
	if w.c == nil || w.inflight == 0 {
		return false
	}
	st := w.next(ctx)
	if st == nil || w.c.ended(&st.result) {
		return false
	}
	w.ended(s, st, st.sent)
	return true
}

// Single makes the worker keep one stream open, not Streams: the
// preflight's, which reads one response and closes.
func (w *tputWorker) Single() { w.streams = 1 }

// next is the next stream to end, back among the free ones (read before
// the next start); nil if ctx is done first.
func (w *tputWorker) next(ctx context.Context) *tstream {
	select {
	case st := <-w.done:
		w.inflight--
		w.free <- st
		return st
	case <-ctx.Done():
		return nil
	}
}

// ended closes sample s with stream st, t0 its transaction's first packet.
func (w *tputWorker) ended(s *metrics.Sample, st *tstream, t0 time.Time) {
	st.end(s, t0)
	w.server = st.server
	w.op.Ended(s, st.mismatch, st.sum, nil)
	w.c.account(s)
	per := w.op.args.RequestsPerConn
	if st.err != nil && w.c.qc.Context().Err() != nil || per > 0 && w.nsent >= per && w.inflight == 0 {
		w.closeConn(s)
	}
}

// connect gives the worker a connection if it has none, or carries the one
// Open opened into s; t0 is the first packet of a transaction that opened
// its connection (zero: none did), dialed whether this one dialled now.
// False: the dial failed and s is ended.
func (w *tputWorker) connect(ctx context.Context, s *metrics.Sample) (t0 time.Time, dialed, ok bool) {
	switch {
	case w.opened != nil:
		o := w.opened
		w.opened = nil
		s.Opened, s.Handshake, s.Resumed = true, o.Handshake, o.Resumed
		s.Dur[vocab.PhaseHandshake], s.WireIn, s.WireOut = o.Dur[vocab.PhaseHandshake], o.WireIn, o.WireOut
		return o.Start, false, true // opened ahead: the device may have ended it since
	case w.c == nil:
		t0 = time.Now()
		if w.c = w.op.open(ctx, w.dialer, s, false); w.c == nil {
			return t0, true, false
		}
		w.nsent = 0
		return t0, true, true
	}
	return t0, false, true
}

// start makes the next request on a stream of its own, read by a
// goroutine that hands it to done.
func (w *tputWorker) start() {
	st := <-w.free
	st.result, st.mismatch = result{}, false
	req, obj, want, head, err := w.op.next(w.gen, w.head)
	w.head, st.obj, st.want = head, obj, want
	var data func([]byte, int64)
	if w.op.Pattern != nil || w.op.SHA256 != nil {
		st.sum = w.op.Sum(st.sum)
		data = func(p []byte, off int64) { st.mismatch = w.op.Feed(st.sum, p, off, st.mismatch) }
	}
	w.inflight++
	w.nsent++
	c := w.c
	go func() {
		if err != nil {
			st.sent, st.last, st.err = time.Now(), time.Now(), err
		} else {
			w.op.exchange(c, req, &st.result, st.buf, data)
		}
		w.done <- st
	}()
}

// closeConn closes the worker's connection (CONNECTION_CLOSE) within
// sample s, once its streams have ended (the close ends them at once).
func (w *tputWorker) closeConn(s *metrics.Sample) {
	c := w.c
	w.c = nil
	w.op.close(c, s, true)
	for ; w.inflight > 0; w.inflight-- {
		w.free <- <-w.done
	}
}

// Close closes the worker's connection; streams open are abandoned (the
// engine drains them first).
func (w *tputWorker) Close() error {
	if w.c != nil {
		w.closeConn(nil)
	}
	return nil
}
