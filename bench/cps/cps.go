// Package cps is the CPS operation: every transaction is a new TCP
// connection, a full TLS handshake verified against the cipher profile, an
// HTTP/1.0 GET, the complete response, and the server's close.
package cps

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/httpreq"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/valyala/fasthttp"

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
type Op struct {
	ep  *tlsconn.Endpoint
	cfg Config
	req *httpreq.Compiled

	// How the run's connections ended (see Closes).
	serverFIN, clientFirst, noCloseNotify, merged atomic.Int64
}

// Closes returns how the run's connections that read a complete response
// ended (whole run).
func (op *Op) Closes() metrics.Closes {
	return metrics.Closes{ServerFirst: op.serverFIN.Load(), ClientFirst: op.clientFirst.Load(), NoCloseNotify: op.noCloseNotify.Load(),
		FirstByteMerged: op.merged.Load()}
}

// Negotiated returns what the first verified connection negotiated, or nil.
func (op *Op) Negotiated() *metrics.Negotiated { return op.ep.Negotiated() }

// LeafSHA256 returns the fingerprint of the first verified connection's
// leaf certificate, or "".
func (op *Op) LeafSHA256() string { return op.ep.LeafSHA256() }

// Address returns the address the run dials.
func (op *Op) Address() string { return op.ep.Address() }

// OpenConns returns how many of the run's connections are open now and the
// most that were open at once.
func (op *Op) OpenConns() (now, peak int64) { return op.ep.OpenConns() }

var _ bench.Op = (*Op)(nil)

// New checks cfg and prepares the operation.
func New(cfg Config) (*Op, error) {
	if cfg.Path == "" {
		cfg.Path = vocab.EngineCPS.DefaultPath()
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 16 << 20
	}
	if err := cfg.Request.Validate(); err != nil {
		return nil, fmt.Errorf("cps: %w", err)
	}
	ep, err := tlsconn.NewEndpoint(cfg.Config)
	if err != nil {
		return nil, fmt.Errorf("cps: %w", err)
	}
	req, err := cfg.Request.Compile("HTTP/1.0", ep.Address())
	if err != nil {
		return nil, fmt.Errorf("cps: %w", err)
	}
	return &Op{ep: ep, cfg: cfg, req: req}, nil
}

// NewWorker returns a worker with its own source address turn.
func (op *Op) NewWorker(id int) (bench.Worker, error) {
	return &worker{op: op, dialer: op.ep.NewDialer(id), gen: httpreq.NewGen(rand.Uint64())}, nil
}

type worker struct {
	op     *Op
	dialer *tlsconn.Dialer
	rd     tlsconn.Reader
	gen    *httpreq.Gen
	req    []byte
	tail   [256]byte // for the wait for the server's close
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
	cfg := &w.op.cfg
	// Connect and handshake (tlsconn times both).
	conn, ph, stage, err := w.dialer.Dial(ctx)
	s.Opened = true
	s.Dur[vocab.PhaseConnect], s.Dur[vocab.PhaseHandshake] = ph.Connect, ph.Handshake
	s.Handshake = ph.HandshakeDone
	s.WireIn, s.WireOut = ph.WireIn, ph.WireOut
	if ph.TCPRead {
		s.TCP.Add(ph.TCP) // a handshake that failed
	}
	if err != nil {
		w.fail(s, stage, err)
		return
	}
	defer closeTCP(s, conn)

	// Request and response. TTFB starts before the request is written
	// (the server may answer before Write returns) and ends when the
	// kernel received the response's first byte (w.rd.First).
	_ = conn.SetDeadline(time.Now().Add(cfg.ReadTimeout))
	w.req = w.op.req.Append(w.req[:0], w.gen)
	w.rd.Reset(conn, cfg.ReadTimeout)
	w.rd.CountSegments() // did more than the first segment come before the first byte's read?
	t3 := time.Now()
	n, err := conn.Write(w.req)
	s.BytesOut = int64(n)
	if err != nil {
		w.finish(s, conn, bench.StageResponse, err)
		return
	}
	r := readings.Get().(*reading)
	r.br.Reset(&w.rd)
	body, err := r.readResponse(cfg.MaxBody)
	// Bytes already buffered after the response are extra bytes; the
	// pooled buffers go back before the wait for the server's close.
	status, extra := r.resp.StatusCode(), r.br.Buffered()
	r.br.Reset(nil)
	readings.Put(r)
	s.Payload = body
	if err != nil {
		w.finish(s, conn, bench.StageResponse, w.rd.Cause(err))
		return
	}
	// HTTP/1.0: the server closes; read to its close so that the TIME_WAIT
	// stays on the server side. Its close is the TCP FIN: the TLS layer
	// ends at the close_notify alert, which comes before it.
	more, err := w.drainToEOF()
	extra += more
	if err == nil {
		closeNotify, fin, _ := conn.AwaitFIN(w.tail[:], cfg.ReadTimeout)
		if !closeNotify {
			w.op.noCloseNotify.Add(1)
		}
		if fin {
			w.op.serverFIN.Add(1)
		} else {
			w.op.clientFirst.Add(1)
		}
	}
	// Transfer: from the first byte to the server's FIN (or the error).
	t4 := time.Now()
	s.Dur[vocab.PhaseTTFB] = w.rd.First.Sub(t3)
	s.Dur[vocab.PhaseTransfer] = t4.Sub(w.rd.First)
	switch {
	case status != fasthttp.StatusOK:
		err = fmt.Errorf("status %d", status)
		s.Class = vocab.ClassStatus
	case cfg.ExpectSize >= 0 && body != cfg.ExpectSize:
		err = fmt.Errorf("body of %d bytes, expected %d", body, cfg.ExpectSize)
		s.Class = vocab.ClassBodySize
	case extra > 0:
		err = fmt.Errorf("%d bytes after the response body", extra)
		s.Class = vocab.ClassBodySize
	case err != nil:
		err = fmt.Errorf("waiting for the server's close: %w", err)
	default:
		w.op.ep.Observe(&conn.State)
		if w.rd.Merged {
			w.op.merged.Add(1)
		}
	}
	w.finish(s, conn, bench.StageResponse, err)
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

// fail records a transaction that ended before it had a connection.
func (w *worker) fail(s *metrics.Sample, stage bench.Stage, err error) {
	s.Class = tlsconn.Class(stage, err)
	s.Err = err
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// finish closes the sample of a transaction that had a connection; err (if
// any) is classified unless a class was already set.
func (w *worker) finish(s *metrics.Sample, conn *tlsconn.Conn, stage bench.Stage, err error) {
	if err != nil {
		if s.Class == "" {
			s.Class = tlsconn.Class(stage, err)
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
	s.WireIn, s.WireOut = conn.WireIn(), conn.WireOut()
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
	if w.op.cfg.Trace != nil {
		w.op.cfg.Trace(conn.LocalPort(), s, w.rd.FirstByte())
	}
}

// closeTCP closes the transaction's connection, noting the kernel's account
// of it in s.
func closeTCP(s *metrics.Sample, conn *tlsconn.Conn) {
	if t, ok := conn.CloseTCP(); ok {
		s.TCP.Add(t)
	}
}
