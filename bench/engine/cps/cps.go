// Package cps is the CPS operation: every transaction is a new TCP
// connection, a full TLS handshake verified against the cipher profile, an
// HTTP/1.0 GET, the complete response, and the server's close. With
// Config.RequestsPerConn M above 1, a connection carries M HTTP/1.1
// transactions (keep-alive), of which only the first opens it.
package cps

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Config is one CPS target and how to talk to it.
type Config struct {
	tlsconn.Config
	// Request's path defaults to /1k; its ReadTimeout also bounds the wait
	// for the server's close.
	httpreq.Request
	// MaxBody bounds a response body; a larger one is a body_size error
	// (0: 16 MiB).
	MaxBody int
	// RequestsPerConn is how many transactions a connection carries: 0 or
	// 1, one HTTP/1.0 request and the server's close; M above 1, HTTP/1.1
	// keep-alive, the worker holding its connection across transactions
	// and the M-th request asking the server to close (Connection: close).
	RequestsPerConn int
	// Trace, if set, is called at the end of every transaction that had a
	// connection, with the connection's local port, the sample (phases
	// before the engine's open-loop correction) and its first byte. For
	// debugging and for the packet-capture tests; nil costs nothing.
	Trace func(localPort int, s *metrics.Sample, first tlsconn.FirstByte)
}

// Defaults returns the default configuration (no target yet).
func Defaults() Config {
	return Config{Config: tlsconn.Defaults(), Request: httpreq.Defaults(vocab.EngineCPS.DefaultPath())}
}

// Op is the CPS operation. It is safe for concurrent use by its workers.
// Its endpoint answers what the run negotiated, the leaf certificate's
// fingerprint, the address dialled and the connections open.
type Op struct {
	*tlsconn.Endpoint
	cfg Config
	req *httpreq.Compiled

	// How the run's connections ended (see Closes).
	serverFIN, clientFirst, noCloseNotify, merged atomic.Int64
}

// Closes returns how the run's connections that read a complete response
// ended (whole run).
func (op *Op) Closes() metrics.Closes {
	return metrics.Closes{
		ServerFirst:     op.serverFIN.Load(),
		ClientFirst:     op.clientFirst.Load(),
		NoCloseNotify:   op.noCloseNotify.Load(),
		FirstByteMerged: op.merged.Load(),
	}
}

var _ engine.Op = (*Op)(nil)

// New checks cfg and prepares the operation.
func New(cfg Config) (*Op, error) {
	if cfg.Path == "" {
		cfg.Path = vocab.EngineCPS.DefaultPath()
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 16 << 20
	}
	if cfg.RequestsPerConn < 0 {
		return nil, fmt.Errorf("cps: requests per connection must not be negative, got %d", cfg.RequestsPerConn)
	}
	op := &Op{cfg: cfg}
	var err error
	op.Endpoint, err = tlsconn.Prepare(vocab.EngineCPS, cfg.Config, cfg.Request.Validate, func(addr string) (err error) {
		proto := "HTTP/1.0"
		if cfg.RequestsPerConn > 1 {
			proto = "HTTP/1.1"
		}
		op.req, err = cfg.Request.Compile(proto, addr)
		return err
	})
	if err != nil {
		return nil, err
	}
	return op, nil
}

// NewWorker returns a worker with its own source address turn.
func (op *Op) NewWorker(id int) (engine.Worker, error) {
	return &worker{op: op, dialer: op.NewDialer(id), gen: httpreq.NewGen(rand.Uint64())}, nil
}

type worker struct {
	op     *Op
	dialer *tlsconn.Dialer
	rd     tlsconn.Reader
	gen    *httpreq.Gen
	req    []byte
	tail   [256]byte // for the wait for the server's close
	// With RequestsPerConn above 1, the connection held between
	// transactions, the requests made on it, and its wire bytes already
	// counted in samples.
	conn            *tlsconn.Conn
	nreq            int
	wireIn, wireOut int64
	server          []byte // the first response's Server header (nil before it)
}

// Server is the Server header of the worker's first response: the
// preflight's worker records it (the device's name); the others copy it
// once, not on every transaction.
func (w *worker) Server() string { return string(w.server) }

var _ io.Closer = (*worker)(nil)

// Close closes the connection the worker holds, if any.
func (w *worker) Close() error {
	if w.conn == nil {
		return nil
	}
	err := w.conn.Close()
	w.conn = nil
	return err
}

// CloseTCP closes the connection the worker holds when it will run no more,
// with the kernel's account of it (the engine's tcpCloser): a kept-alive
// connection held to the end of the run is measured like one a transaction
// closed.
func (w *worker) CloseTCP() (metrics.TCPConn, bool) {
	t, ok := w.conn.CloseTCP()
	w.conn = nil
	return t, ok
}

// reading is what a worker needs from its request to the end of the
// response: lent by a pool for that time only, so that the many workers
// waiting for a connection or a handshake hold no buffers.
type reading struct {
	br    *bufio.Reader
	resp  fasthttp.Response
	drain [1 << 10]byte
}

var readings = sync.Pool{New: func() any {
	return &reading{br: bufio.NewReaderSize(nil, 4096)}
}}

// Do runs one transaction (see the package comment); every phase it times
// is set here, in order.
func (w *worker) Do(ctx context.Context, s *metrics.Sample) {
	if w.op.cfg.RequestsPerConn > 1 {
		w.doKeepAlive(ctx, s)
		return
	}
	// Connect and handshake (tlsconn times both).
	t0 := time.Now() // the transaction's first packet (RFC 9411's TTFB and TTLB)
	conn, ph, err := w.dialer.Dial(ctx)
	if !ph.Fill(s, err) {
		return
	}
	defer conn.CloseIn(s) // with the kernel's account of it (TCP_INFO)
	w.wireIn, w.wireOut = 0, 0
	w.exchange(s, conn, t0, true)
}

// exchange writes the request and reads its response; last: the server is
// to close the connection after it (HTTP/1.0, or Connection: close), and
// its close is awaited. It returns whether the connection may carry the
// next request. t0 is the transaction's first packet.
func (w *worker) exchange(s *metrics.Sample, conn *tlsconn.Conn, t0 time.Time, last bool) bool {
	cfg := &w.op.cfg
	// Request and response. TTFB starts before the request is written
	// (the server may answer before Write returns) and ends when the
	// kernel received the response's first byte (w.rd.First).
	_ = conn.SetDeadline(time.Now().Add(cfg.ReadTimeout))
	var obj int
	w.req, obj = w.op.req.AppendObject(w.req[:0], w.gen)
	if last && cfg.RequestsPerConn > 1 {
		w.req = append(w.req[:len(w.req)-2], "Connection: close\r\n\r\n"...)
	}
	s.Object = uint16(obj + 1)
	w.rd.Reset(conn, cfg.ReadTimeout)
	w.rd.CountSegments() // did more than the first segment come before the first byte's read?
	t3 := time.Now()
	if !s.Opened {
		t0 = t3
	}
	n, err := conn.Write(w.req)
	s.BytesOut = int64(n)
	if err != nil {
		w.finish(s, conn, err)
		return false
	}
	r := readings.Get().(*reading)
	r.br.Reset(&w.rd)
	body, err := r.readResponse(cfg.MaxBody)
	tl := time.Now()
	// Bytes already buffered after the response are extra bytes; the
	// pooled buffers go back before the wait for the server's close.
	status, extra, closing := r.resp.StatusCode(), r.br.Buffered(), r.resp.ConnectionClose()
	if w.server == nil && err == nil {
		w.server = append([]byte{}, r.resp.Header.Server()...)
	}
	r.br.Reset(nil)
	readings.Put(r)
	s.Payload = body
	if !w.rd.First.IsZero() {
		s.RFCTTFB = w.rd.First.Sub(t0)
	}
	if err != nil {
		w.finish(s, conn, w.rd.Cause(err))
		return false
	}
	// The first byte's time is the kernel's (wall clock): the last byte's
	// is measured from it, on the same clock.
	s.RFCTTLB = s.RFCTTFB + tl.Sub(w.rd.First)
	if last = last || closing; last {
		var more int
		more, err = w.awaitClose(conn)
		extra += more
	}
	// Transfer: from the first byte to the server's FIN (or the error),
	// or to the body's last byte on a connection kept open.
	t4 := time.Now()
	s.Dur[vocab.PhaseTTFB] = w.rd.First.Sub(t3)
	s.Dur[vocab.PhaseTransfer] = t4.Sub(w.rd.First)
	err = w.judge(s, conn, status, body, w.op.req.ObjectSize(obj), extra, err)
	w.finish(s, conn, err)
	return err == nil && !last
}

// doKeepAlive is a transaction on the worker's held connection (HTTP/1.1
// keep-alive), opened first if it has none: the RequestsPerConn-th request
// on a connection asks the server to close it. A connection is dropped
// after an error, a response with Connection: close, or its last request.
func (w *worker) doKeepAlive(ctx context.Context, s *metrics.Sample) {
	t0 := time.Now()
	for try := 0; try < 2; try++ {
		conn := w.conn
		if conn == nil {
			t0 = time.Now()
			c, ph, err := w.dialer.Dial(ctx)
			if !ph.Fill(s, err) {
				return
			}
			w.conn, w.nreq, w.wireIn, w.wireOut = c, 0, 0, 0
			conn = c
		}
		w.nreq++
		reused := w.nreq > 1
		if w.exchange(s, conn, t0, w.nreq >= w.op.cfg.RequestsPerConn) {
			return
		}
		w.conn = nil
		conn.CloseIn(s)
		if !reused || s.BytesIn > 0 || !closedUnder(s.Err) {
			return
		}
		// The server closed the kept-alive connection before this
		// request was answered: open a new one and ask again (once).
		*s = metrics.Sample{Intended: s.Intended, Start: s.Start, Steady: s.Steady, TCP: s.TCP}
	}
}

// closedUnder reports whether err is a kept-alive connection's closing by
// the server.
func closedUnder(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// awaitClose reads to the server's close: HTTP/1.0, the server closes, so
// that the TIME_WAIT stays on its side. Its close is the TCP FIN: the TLS
// layer ends at the close_notify alert, which comes before it. It returns
// how many bytes came after the response, and counts how the connection
// ended.
func (w *worker) awaitClose(conn *tlsconn.Conn) (int, error) {
	extra, err := w.drainToEOF()
	if err != nil {
		return extra, err
	}
	closeNotify, fin, _ := conn.AwaitFIN(w.tail[:], w.op.cfg.ReadTimeout)
	if !closeNotify {
		w.op.noCloseNotify.Add(1)
	}
	if fin {
		w.op.serverFIN.Add(1)
	} else {
		w.op.clientFirst.Add(1)
	}
	return extra, nil
}

// judge returns what is wrong with a response read to the server's close
// (err: the wait for the close), its class set in s; a good response's
// connection is the run's negotiated parameters if it is the first.
// want is the drawn object's size (-1: none, ExpectSize applies).
func (w *worker) judge(s *metrics.Sample, conn *tlsconn.Conn, status int, body, want int64, extra int,
	err error) error {
	if want < 0 {
		want = w.op.cfg.ExpectSize
	}
	switch {
	case status != fasthttp.StatusOK:
		s.Class = vocab.ClassStatus
		_, line, _ := bytes.Cut(w.req, []byte(" ")) // GET PATH HTTP/1.x
		path, _, _ := bytes.Cut(line, []byte(" "))
		return fmt.Errorf("status %d for %s", status, path)
	case want >= 0 && body != want:
		s.Class = vocab.ClassBodySize
		return fmt.Errorf("body of %d bytes, expected %d", body, want)
	case extra > 0:
		s.Class = vocab.ClassBodySize
		return fmt.Errorf("%d bytes after the response body", extra)
	case err != nil:
		return fmt.Errorf("waiting for the server's close: %w", err)
	}
	w.op.Observe(&conn.State)
	if w.rd.Merged {
		w.op.merged.Add(1)
	}
	return nil
}

// readResponse reads the response head and streams its body through the
// small buffer, counting it: memory stays bounded whatever the server
// sends, and a body above maxBody is an error.
func (r *reading) readResponse(maxBody int) (int64, error) {
	r.resp.Reset()
	r.resp.StreamBody = true
	if err := r.resp.Header.Read(r.br); err != nil {
		return 0, err
	}
	if r.resp.Header.ContentLength() > maxBody {
		return 0, fasthttp.ErrBodyTooLarge // refused before reading it
	}
	if err := r.resp.ReadBody(r.br, 0); err != nil {
		return 0, err
	}
	defer r.resp.CloseBodyStream()
	bs := r.resp.BodyStream()
	if bs == nil {
		return 0, nil
	}
	var n int64
	for {
		k, err := bs.Read(r.drain[:])
		n += int64(k)
		if n > int64(maxBody) {
			return n, fasthttp.ErrBodyTooLarge
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// drainToEOF reads until the server closes, through the worker's small
// buffer; it returns how many bytes came after the response.
func (w *worker) drainToEOF() (int, error) {
	extra := 0
	for {
		n, err := w.rd.Read(w.tail[:])
		extra += n
		if err == io.EOF {
			return extra, nil
		}
		if err != nil {
			return extra, err
		}
		if extra > 1<<20 {
			return extra, nil
		}
	}
}

// finish closes the sample of a transaction that had a connection; err (if
// any) is classified unless a class was already set.
func (w *worker) finish(s *metrics.Sample, conn *tlsconn.Conn, err error) {
	if err != nil {
		if s.Class == "" {
			s.Class = tlsconn.Class(err)
			var small *fasthttp.ErrSmallBuffer
			switch {
			case errors.Is(err, fasthttp.ErrBodyTooLarge):
				s.Class = vocab.ClassBodySize
			case errors.As(err, &small):
				s.Class = vocab.ClassHeaderSize
			}
		}
		s.Err = err
	}
	s.BytesIn = w.rd.N
	in, out := conn.WireIn(), conn.WireOut()
	s.WireIn, s.WireOut = in-w.wireIn, out-w.wireOut
	w.wireIn, w.wireOut = in, out
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
	if w.op.cfg.Trace != nil {
		w.op.cfg.Trace(conn.LocalPort(), s, w.rd.FirstByte())
	}
}
