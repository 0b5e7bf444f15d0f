// Package throughput is the bulk operation: long-lived TLS connections, each
// opened with a full handshake verified against the cipher profile, carrying
// repeated HTTP/1.1 GETs of a large object with keep-alive (and optionally
// pipelining). Bodies are streamed through a reusable buffer, counted and
// optionally verified, never held whole in memory.
//
// A transaction is one request and its complete response; a sample that
// opened its connection also carries the connect and handshake times.
package throughput

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Config is one throughput target and how to load it.
type Config struct {
	tlsconn.Config
	httpreq.Request // the path defaults to /1m
	// Pipeline is the number of requests kept in flight per connection.
	Pipeline int
	// RequestsPerConn closes a connection after that many responses (0:
	// never) and opens a new one.
	RequestsPerConn int
	// Verify, if set, checks every body; see ParseVerify.
	Verify *bodyCheck
	// BufSize is the size of the read buffers (0: 64 KiB).
	BufSize int
	// Trace, if set, is called at the end of every sample that had a
	// connection, with the connection's local port, the sample (phases
	// before the engine's open-loop correction) and its response's first
	// byte. For debugging and for the packet-capture tests; nil costs
	// nothing.
	Trace func(localPort int, s *metrics.Sample, first tlsconn.FirstByte)
}

// Defaults returns the default configuration (no target yet).
func Defaults() Config {
	return Config{
		Config:   tlsconn.Defaults(),
		Request:  httpreq.Defaults(vocab.EngineThroughput.DefaultPath()),
		Pipeline: 1,
	}
}

// bodyCheck says how bodies are verified: against a deterministic pattern
// (byte i is Pattern[i%len(Pattern)]), or by SHA-256.
type bodyCheck struct {
	Pattern []byte
	SHA256  []byte
}

// ParseVerify parses --verify-body: "sha256:HEX"; pattern is used for
// "pattern" (the reference target's objects).
func ParseVerify(spec string, pattern []byte) (*bodyCheck, error) {
	switch {
	case spec == "":
		return nil, nil
	case spec == "pattern":
		return &bodyCheck{Pattern: pattern}, nil
	case strings.HasPrefix(spec, "sha256:"):
		sum, err := hex.DecodeString(spec[len("sha256:"):])
		if err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("bad body check %q: sha256: wants 64 hex digits", spec)
		}
		return &bodyCheck{SHA256: sum}, nil
	}
	return nil, fmt.Errorf("bad body check %q (want pattern or sha256:HEX)", spec)
}

// CheckVerify is ParseVerify's verdict on spec, as a field error.
func CheckVerify(spec string) error {
	if _, err := ParseVerify(spec, nil); err != nil {
		return &vocab.FieldError{Field: "verify_body", Value: spec, Want: "be pattern or sha256: and 64 hex digits"}
	}
	return nil
}

// errBodyMismatch reports a body that failed its check.
var errBodyMismatch = errors.New("body does not match")

// Op is the throughput operation. It is safe for concurrent use by its
// workers. Its endpoint answers what the run negotiated, the leaf
// certificate's fingerprint, the address dialled and the connections open.
type Op struct {
	*tlsconn.Endpoint
	cfg Config
	req *httpreq.Compiled
	// Read buffers are lent to a worker while it reads responses and
	// taken back when its connection is idle: thousands of idle
	// keep-alive connections hold none.
	bufs, readers sync.Pool
	reconnects    atomic.Int64 // Reconnects
}

// Reconnects is how many connections the steady window opened because the
// device closed a kept-alive one (Connection: close, or its FIN between
// responses), not RequestsPerConn's.
func (op *Op) Reconnects() int64 { return op.reconnects.Load() }

var _ engine.Op = (*Op)(nil)

// New checks cfg and prepares the operation.
func New(cfg Config) (*Op, error) {
	if cfg.Path == "" {
		cfg.Path = vocab.EngineThroughput.DefaultPath()
	}
	if cfg.Pipeline < 1 {
		return nil, fmt.Errorf("throughput: pipeline must be at least 1, got %d", cfg.Pipeline)
	}
	if cfg.RequestsPerConn < 0 {
		return nil, fmt.Errorf("throughput: requests per connection must not be negative, got %d",
			cfg.RequestsPerConn)
	}
	if cfg.BufSize <= 0 {
		cfg.BufSize = 64 << 10
	}
	op := &Op{cfg: cfg}
	var err error
	op.Endpoint, err = tlsconn.Prepare(vocab.EngineThroughput, cfg.Config, cfg.Request.Validate,
		func(addr string) (err error) {
			op.req, err = cfg.Request.Compile("HTTP/1.1", addr)
			return err
		})
	if err != nil {
		return nil, err
	}
	return op, nil
}

// NewWorker returns a worker that owns one connection at a time.
func (op *Op) NewWorker(id int) (engine.Worker, error) {
	w := &worker{
		op:     op,
		dialer: op.NewDialer(id),
		sent:   make([]time.Time, 0, op.cfg.Pipeline),
		objs:   make([]int, 0, op.cfg.Pipeline),
		gen:    httpreq.NewGen(rand.Uint64()),
	}
	if op.cfg.Verify != nil && op.cfg.Verify.SHA256 != nil {
		w.sum = sha256.New()
	}
	return w, nil
}

type worker struct {
	op      *Op
	dialer  *tlsconn.Dialer
	conn    *tlsconn.Conn
	rd      tlsconn.Reader
	br      *bufio.Reader // lent by the Op while responses are read
	buf     *[]byte       // likewise
	resp    fasthttp.Response
	gen     *httpreq.Gen
	reqs    []byte      // the requests of one write
	sent    []time.Time // write times of the requests in flight, oldest first
	objs    []int       // the objects they drew (-1: none), likewise
	nsent   int         // requests written on this connection
	nrecv   int         // responses read on this connection
	wireIn  int64       // wire bytes already attributed to samples
	wireOut int64
	sum     hash.Hash
	// opened carries a connection opened ahead of the load (Open) into
	// the next sample: connect and handshake times.
	opened       bool
	openedPhases tlsconn.Phases
	openedAt     time.Time // its connect's start
	byDevice     bool      // the device closed the last connection: the next is a reconnection
}

// Server is the last response's Server header (the preflight records it).
func (w *worker) Server() string { return string(w.resp.Header.Server()) }

var _ engine.Opener = (*worker)(nil)

// borrow takes read buffers from the Op for the responses to come.
func (w *worker) borrow() {
	if w.br != nil {
		return
	}
	if v, ok := w.op.readers.Get().(*bufio.Reader); ok {
		w.br = v
		w.br.Reset(&w.rd)
	} else {
		w.br = bufio.NewReaderSize(&w.rd, w.op.cfg.BufSize)
	}
	if v, ok := w.op.bufs.Get().(*[]byte); ok {
		w.buf = v
	} else {
		b := make([]byte, w.op.cfg.BufSize)
		w.buf = &b
	}
}

// giveBack returns the read buffers when nothing is buffered (or the
// connection is gone).
func (w *worker) giveBack() {
	if w.br == nil || (w.conn != nil && w.br.Buffered() > 0) {
		return
	}
	w.br.Reset(nil)
	w.op.readers.Put(w.br)
	w.op.bufs.Put(w.buf)
	w.br, w.buf = nil, nil
}

// Close closes the worker's connection; requests in flight are abandoned.
func (w *worker) Close() error {
	if w.conn == nil {
		return nil
	}
	err := w.conn.Close()
	w.conn = nil
	w.opened = false
	w.giveBack()
	return err
}

// Open opens the worker's connection ahead of the load (engine.Opener); the
// next sample carries its connect and handshake times.
func (w *worker) Open(ctx context.Context, s *metrics.Sample) bool {
	if w.conn != nil {
		return true
	}
	at := time.Now()
	ph, err := w.dial(ctx)
	if !ph.Fill(s, err) {
		return false
	}
	w.opened, w.openedPhases, w.openedAt = true, ph, at
	return true
}

// dial opens a connection and makes it the worker's.
func (w *worker) dial(ctx context.Context) (tlsconn.Phases, error) {
	conn, ph, err := w.dialer.Dial(ctx)
	if err != nil {
		return ph, err
	}
	w.op.Observe(&conn.State)
	w.conn, w.nsent, w.nrecv, w.sent, w.objs = conn, 0, 0, w.sent[:0], w.objs[:0]
	w.wireIn, w.wireOut = 0, 0
	w.rd.Reset(conn, w.op.cfg.ReadTimeout)
	return ph, nil
}

// Do reads one response, opening a connection first if the worker has none;
// every phase it times is set here, in order. When the server has closed a
// kept-alive connection before the response, it opens a new one and asks
// again (at most once: the new connection is not retried).
func (w *worker) Do(ctx context.Context, s *metrics.Sample) {
	cfg := &w.op.cfg
	// Wire bytes on a connection the server closed under this sample stay
	// counted in it.
	var oldIn, oldOut int64
	defer func() { s.WireIn, s.WireOut = s.WireIn+oldIn, s.WireOut+oldOut }()
	for {
		// Connect and handshake: now, or carried from Open. t0 is the
		// first packet of a transaction that opens its connection.
		dialed, carried := w.conn == nil, w.opened
		var t0 time.Time
		if dialed {
			t0 = time.Now()
		} else if carried {
			t0 = w.openedAt
		}
		if !w.connect(ctx, s) || !w.send(s) {
			return
		}
		if len(w.sent) == 0 {
			// The budget is spent and every response read: start afresh.
			w.closeIn(s)
			continue
		}
		// TTFB: from the oldest request in flight to its first byte.
		started, obj := w.sent[0], w.objs[0]
		s.Object = uint16(obj + 1)
		if t0.IsZero() {
			t0 = started
		}
		if err := w.readHead(); err != nil {
			if !dialed && (w.nrecv > 0 || carried) && w.rd.N == 0 &&
				(errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed)) {
				// The server closed a kept-alive connection between
				// responses (or one opened ahead, before its first):
				// open a new one and ask again.
				oldIn += w.conn.WireIn() - w.wireIn
				oldOut += w.conn.WireOut() - w.wireOut
				w.closeIn(s)
				w.byDevice = true
				continue
			}
			w.fail(s, err)
			return
		}
		// Transfer: from the first byte to the body's last.
		first := w.rd.First
		body, err := w.readBody(s)
		end := time.Now()
		s.Dur[vocab.PhaseTTFB] = first.Sub(started)
		s.Dur[vocab.PhaseTransfer] = end.Sub(first)
		s.RFCTTFB = first.Sub(t0)
		s.Payload = body
		if err != nil {
			w.fail(s, err)
			return
		}
		s.RFCTTLB = s.RFCTTFB + end.Sub(first) // on the first byte's clock
		w.sent = w.sent[:copy(w.sent, w.sent[1:])]
		w.objs = w.objs[:copy(w.objs, w.objs[1:])]
		w.nrecv++
		want := w.op.req.ObjectSize(obj) // the object this response answers (FIFO)
		if want < 0 {
			want = cfg.ExpectSize
		}
		switch {
		case w.resp.StatusCode() != fasthttp.StatusOK:
			s.Class, s.Err = vocab.ClassStatus, fmt.Errorf("status %d", w.resp.StatusCode())
		case want >= 0 && body != want:
			s.Class, s.Err = vocab.ClassBodySize, fmt.Errorf("body of %d bytes, expected %d", body, want)
		}
		w.account(s)
		if w.resp.ConnectionClose() || (cfg.RequestsPerConn > 0 && w.nrecv >= cfg.RequestsPerConn) {
			w.closeIn(s)
		} else if len(w.sent) == 0 {
			w.giveBack() // idle until the next request
		}
		return
	}
}

// connect gives the worker a connection if it has none, or carries the
// one Open opened ahead into s (its connect and handshake times). False:
// the dial failed and s is ended.
func (w *worker) connect(ctx context.Context, s *metrics.Sample) bool {
	switch {
	case w.conn == nil:
		if w.byDevice && s.Steady {
			w.op.reconnects.Add(1)
		}
		w.byDevice = false
		ph, err := w.dial(ctx)
		return ph.Fill(s, err)
	case w.opened:
		w.opened = false
		w.openedPhases.Fill(s, nil)
	}
	return true
}

// send keeps the pipeline full, within the connection's request budget.
// False: the write failed and s is ended.
func (w *worker) send(s *metrics.Sample) bool {
	cfg := &w.op.cfg
	n := cfg.Pipeline - len(w.sent)
	if cfg.RequestsPerConn > 0 {
		n = min(n, cfg.RequestsPerConn-w.nsent)
	}
	if n <= 0 {
		return true
	}
	_ = w.conn.SetDeadline(time.Now().Add(cfg.ReadTimeout))
	w.reqs = w.reqs[:0]
	for i := 0; i < n; i++ {
		var obj int
		w.reqs, obj = w.op.req.AppendObject(w.reqs, w.gen)
		w.objs = append(w.objs, obj)
	}
	// A request's TTFB starts before it is written: the server may answer
	// before Write returns.
	now := time.Now()
	wrote, err := w.conn.Write(w.reqs)
	s.BytesOut = int64(wrote)
	for i := 0; i < n; i++ {
		w.sent = append(w.sent, now)
	}
	w.nsent += n
	if err != nil {
		w.fail(s, err)
		return false
	}
	return true
}

// readHead reads the head of the oldest response in flight into w.resp,
// with the read buffers borrowed; its body is left to stream.
func (w *worker) readHead() error {
	w.borrow()
	w.rd.Mark()
	if w.br.Buffered() > 0 {
		w.rd.First = time.Now() // pipelined: already here
	}
	w.resp.Reset()
	w.resp.StreamBody = true
	if err := w.resp.Header.Read(w.br); err != nil {
		return w.rd.Cause(err)
	}
	return nil
}

// readBody streams the body through the worker's buffer, counting and
// checking it.
func (w *worker) readBody(s *metrics.Sample) (int64, error) {
	if err := w.resp.ReadBody(w.br, 0); err != nil {
		return 0, w.rd.Cause(err)
	}
	defer w.resp.CloseBodyStream()
	bs := w.resp.BodyStream()
	if bs == nil {
		return 0, nil
	}
	check := w.op.cfg.Verify
	if w.sum != nil {
		w.sum.Reset()
	}
	var n int64
	mismatch := false
	for {
		buf := *w.buf
		k, err := bs.Read(buf)
		if k > 0 {
			if check != nil && check.Pattern != nil && !mismatch {
				mismatch = !MatchesPattern(buf[:k], check.Pattern, n)
			}
			if w.sum != nil {
				w.sum.Write(buf[:k])
			}
			n += int64(k)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, w.rd.Cause(err)
		}
	}
	if w.sum != nil && !bytes.Equal(w.sum.Sum((*w.buf)[:0]), check.SHA256) {
		mismatch = true
	}
	if mismatch {
		s.Class = vocab.ClassBodyMismatch
		return n, errBodyMismatch
	}
	return n, nil
}

// MatchesPattern checks p, which starts at body offset off, against the
// pattern (ParseVerify's; the HTTP/2 engine's too).
func MatchesPattern(p, pattern []byte, off int64) bool {
	period := int64(len(pattern))
	i := int(off % period)
	for len(p) > 0 {
		k := min(len(p), len(pattern)-i)
		if !bytes.Equal(p[:k], pattern[i:i+k]) {
			return false
		}
		p, i = p[k:], 0
	}
	return true
}

// fail ends the sample with err and drops the connection: after a broken
// response the stream cannot be trusted.
func (w *worker) fail(s *metrics.Sample, err error) {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case s.Class != "":
	case errors.As(err, &small):
		s.Class = vocab.ClassHeaderSize
	default:
		s.Class = tlsconn.Class(err)
	}
	s.Err = err
	w.account(s)
	w.closeIn(s)
}

// account closes the sample: wire bytes since the last sample (the
// handshake's included when this sample opened the connection), total time.
func (w *worker) account(s *metrics.Sample) {
	if w.conn != nil {
		in, out := w.conn.WireIn(), w.conn.WireOut()
		s.WireIn, s.WireOut = in-w.wireIn, out-w.wireOut
		w.wireIn, w.wireOut = in, out
	}
	s.BytesIn = w.rd.N
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
	if w.op.cfg.Trace != nil && w.conn != nil {
		w.op.cfg.Trace(w.conn.LocalPort(), s, w.rd.FirstByte())
	}
}

// closeIn closes the worker's connection within sample s, noting the
// kernel's account of it (TCP_INFO) in s.
func (w *worker) closeIn(s *metrics.Sample) {
	if w.conn != nil {
		w.conn.CloseIn(s)
	}
	w.Close()
	w.byDevice = w.resp.ConnectionClose() // the device said it closes
}

// CloseTCP closes the worker's connection when it will run no more
// (engine.TCPCloser), with the kernel's account of it.
func (w *worker) CloseTCP() (metrics.TCPConn, bool) {
	if w.conn == nil {
		return metrics.TCPConn{}, false
	}
	t, ok := w.conn.CloseTCP()
	w.Close()
	return t, ok
}

// Streamed is what throughput over a protocol that multiplexes streams
// (HTTP/2, HTTP/3) keeps beside its connections: the streams a connection,
// the body check (Pattern, SHA256: none if both are nil), the connections
// the steady window opened because the device ended one (its close, or a
// GOAWAY), not RequestsPerConn's.
type Streamed struct {
	Streams int
	bodyCheck
	Reconnections atomic.Int64
}

// NewStreamed is the throughput of streams a connection, with the body
// check verify (ParseVerify's, of pattern).
func NewStreamed(streams int, verify string, pattern []byte) (*Streamed, error) {
	check, err := ParseVerify(verify, pattern)
	if err != nil {
		return nil, err
	}
	s := &Streamed{Streams: streams}
	if check != nil {
		s.bodyCheck = *check
	}
	return s, nil
}

func (s *Streamed) Reconnects() int64 { return s.Reconnections.Load() }

// Sum is sum (made if nil) reset for a new body; nil without a SHA-256.
func (s *Streamed) Sum(sum hash.Hash) hash.Hash {
	switch {
	case s.SHA256 == nil:
		return nil
	case sum == nil:
		return sha256.New()
	}
	sum.Reset()
	return sum
}

// Feed checks p, a body's bytes from offset off: sum (if any) takes them;
// mismatch, whether the body broke the pattern before, is returned with p.
func (s *Streamed) Feed(sum hash.Hash, p []byte, off int64, mismatch bool) bool {
	if sum != nil {
		sum.Write(p)
	}
	if s.Pattern != nil && !mismatch {
		mismatch = !MatchesPattern(p, s.Pattern, off)
	}
	return mismatch
}

// Ended fails sample m, unless it failed already, if its body broke the
// pattern (mismatch) or sum's SHA-256 is not the one expected; buf takes
// the sum and is returned, for reuse.
func (s *Streamed) Ended(m *metrics.Sample, mismatch bool, sum hash.Hash, buf []byte) []byte {
	if m.Class != "" {
		return buf
	}
	if !mismatch && s.SHA256 != nil {
		buf = sum.Sum(buf[:0])
		mismatch = !bytes.Equal(buf, s.SHA256)
	}
	if mismatch {
		m.Class, m.Err = vocab.ClassBodyMismatch, errBodyMismatch
	}
	return buf
}
