package http2

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// base is what both engines' operations share: the endpoint, the request
// (its header fields parsed once when it never varies), and the SETTINGS
// of the run's first connection that answered.
type base struct {
	*tlsconn.Endpoint
	args    protocol.Args
	req     *httpreq.Compiled
	static  []hpack.HeaderField
	maxBody int64

	seen atomic.Bool
	mu   sync.Mutex
	info *metrics.HTTP2
}

func newBase(e vocab.Engine, a protocol.Args, maxBody int64) (*base, error) {
	if a.Request.Path == "" {
		a.Request.Path = e.DefaultPath()
	}
	b := &base{args: a, maxBody: maxBody}
	var err error
	b.Endpoint, err = tlsconn.Prepare(e, a.Conn, a.Request.Validate, func(addr string) (err error) {
		if b.req, err = a.Request.Compile("HTTP/2", addr); err == nil && b.req.Static() {
			b.static = fields(nil, b.req.Append(nil, nil))
		}
		return err
	})
	return b, err
}

// HTTP2 returns the SETTINGS of the run's first connection that answered
// a request (nil before one did), for the record.
func (b *base) HTTP2() *metrics.HTTP2 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.info
}

// observe keeps c's SETTINGS, and its TLS parameters, if it is the run's
// first connection to answer.
func (b *base) observe(c *conn) {
	if b.seen.Load() {
		return
	}
	b.Observe(&c.tc.State)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.info != nil {
		return
	}
	names := func(ss []http2.Setting) map[string]uint32 {
		m := make(map[string]uint32, len(ss))
		for _, s := range ss {
			m[s.ID.String()] = s.Val
		}
		return m
	}
	b.info = &metrics.HTTP2{ServerSettings: names(c.settings), SettingsAcked: c.acked,
		ClientSettings: names(clientSettings), ConnectionWindow: connWindow}
	b.seen.Store(true)
}

// requester is a worker's request side: its random source and buffers.
type requester struct {
	gen    *httpreq.Gen
	head   []byte
	fields []hpack.HeaderField
}

// request buffers the next request on c as stream st (its object drawn).
func (r *requester) request(b *base, c *conn, st *stream) error {
	f := b.static
	obj := -1
	if f == nil {
		r.head, obj = b.req.AppendObject(r.head[:0], r.gen)
		r.fields = fields(r.fields[:0], r.head)
		f = r.fields
	} else if b.req.Objects() > 0 {
		obj = 0
	}
	st.obj, st.want = obj, b.req.ObjectSize(obj)
	if st.want < 0 {
		st.want = b.args.Request.ExpectSize
	}
	return c.request(f, st)
}

// counts are a connection's byte counts already given to samples.
type counts struct{ in, out, wireIn, wireOut int64 }

// account gives s c's bytes since the last sample, and ends it.
func (n *counts) account(s *metrics.Sample, c *conn) {
	in, out := c.tc.WireIn(), c.tc.WireOut()
	s.BytesIn, s.BytesOut = c.in-n.in, c.out-n.out
	s.WireIn, s.WireOut = in-n.wireIn, out-n.wireOut
	*n = counts{c.in, c.out, in, out}
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// end fills s from its stream's end: the phases from the request to the
// first frame (ttfb) and on to the last (transfer), RFC 9411's TTFB and TTLB
// from t0 (the transaction's first packet), the body, and the failure.
func end(s *metrics.Sample, st *stream, t0, last time.Time) {
	s.Object = uint16(st.obj + 1)
	s.Payload = st.body
	if !st.first.IsZero() {
		s.Dur[vocab.PhaseTTFB] = st.first.Sub(st.sent)
		s.Dur[vocab.PhaseTransfer] = last.Sub(st.first)
		s.RFCTTFB = st.first.Sub(t0)
		if st.err == nil {
			s.RFCTTLB = s.RFCTTFB + last.Sub(st.first)
		}
	}
	if st.err != nil && s.Class == "" {
		s.Class, s.Err = classOf(st.err), st.err
	}
}

// failed ends s with the connection's error.
func failed(s *metrics.Sample, err error) {
	s.Class, s.Err = classOf(err), err
}

// cpsOp is CPS over HTTP/2: a new connection and full handshake per
// transaction (or per RequestsPerConn of them), one stream at a time.
type cpsOp struct {
	*base
	serverFirst, clientFirst atomic.Int64
}

// Closes returns how the connections that carried a complete response
// ended: by the client's GOAWAY and close, or the server's close before it.
func (op *cpsOp) Closes() metrics.Closes {
	return metrics.Closes{ServerFirst: op.serverFirst.Load(), ClientFirst: op.clientFirst.Load()}
}

func newCPS(a protocol.Args) (protocol.Op, error) {
	b, err := newBase(vocab.EngineCPS, a, 16<<20)
	if err != nil {
		return nil, err
	}
	return &cpsOp{base: b}, nil
}

func (op *cpsOp) NewWorker(id int) (engine.Worker, error) {
	return &cpsWorker{op: op, dialer: op.NewDialer(id), requester: requester{gen: httpreq.NewGen(rand.Uint64())}}, nil
}

type cpsWorker struct {
	requester
	op     *cpsOp
	dialer *tlsconn.Dialer
	c      *conn // held between the RequestsPerConn transactions of a connection
	nreq   int
	n      counts
	server string
}

// Server is the last response's Server header (the preflight records it).
func (w *cpsWorker) Server() string { return w.server }

// Do is one transaction: a GET on a new stream of the worker's connection,
// opened first (connect, handshake, preface) if it has none, and closed
// (GOAWAY) after its RequestsPerConn-th stream or a failure. A reused
// connection the server ended (GOAWAY) before the stream is replaced once.
func (w *cpsWorker) Do(ctx context.Context, s *metrics.Sample) {
	perConn := max(w.op.args.RequestsPerConn, 1)
	for try := 0; try < 2; try++ {
		t0 := time.Now() // the transaction's first packet (RFC 9411's TTFB and TTLB)
		reused := w.c != nil
		if !reused {
			tc, ph, err := w.dialer.Dial(ctx)
			if !ph.Fill(s, err) {
				return
			}
			w.c, w.nreq, w.n = open(tc, w.op.args.Request.ReadTimeout), 0, counts{}
		}
		w.nreq++
		ok, err := w.exchange(s, t0)
		if ok && w.nreq < perConn && w.c.goaway == nil && !w.c.eof {
			w.n.account(s, w.c)
			return
		}
		var g *goAway
		refused := errors.As(err, &g) && g.Code == http2.ErrCodeNo
		w.close(s, ok)
		if !refused || !reused {
			return
		}
		*s = metrics.Sample{Intended: s.Intended, Start: s.Start, Steady: s.Steady, TCP: s.TCP}
	}
}

// exchange makes the stream and reads its response; ok: it was complete
// and good. err is the connection's error, if any.
func (w *cpsWorker) exchange(s *metrics.Sample, t0 time.Time) (bool, error) {
	c := w.c
	st := &stream{}
	err := w.request(w.op.base, c, st)
	st.sent = time.Now()
	if !s.Opened {
		t0 = st.sent
	}
	if err == nil {
		err = c.flush()
	}
	var done *stream
	for err == nil && done == nil {
		done, err = c.step(w.op.maxBody, nil)
	}
	end(s, st, t0, time.Now())
	w.server = c.server
	if err != nil {
		if _, refused := err.(*goAway); refused {
			err = protocol.Fail(classGoAway, "%w before stream %d was answered", err, st.id)
		}
		failed(s, err)
		return false, err
	}
	if s.Class != "" {
		return false, nil
	}
	w.op.observe(c)
	return true, nil
}

// close ends the worker's connection: a GOAWAY first after a complete
// response (the client closes first, unless the server already had).
func (w *cpsWorker) close(s *metrics.Sample, complete bool) {
	c := w.c
	w.c = nil
	if complete {
		_ = c.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		_ = c.flush()
		if c.eof {
			w.op.serverFirst.Add(1)
		} else {
			w.op.clientFirst.Add(1)
		}
	}
	w.n.account(s, c)
	c.tc.CloseIn(s)
}

// Close closes the connection the worker holds, if any.
func (w *cpsWorker) Close() error {
	if w.c == nil {
		return nil
	}
	err := w.c.tc.Close()
	w.c = nil
	return err
}

// CloseTCP closes the connection the worker holds when it will run no more,
// with the kernel's account of it (the engine's tcpCloser).
func (w *cpsWorker) CloseTCP() (metrics.TCPConn, bool) {
	if w.c == nil {
		return metrics.TCPConn{}, false
	}
	t, ok := w.c.tc.CloseTCP()
	w.c = nil
	return t, ok
}
