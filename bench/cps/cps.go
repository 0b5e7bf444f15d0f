// Package cps is the CPS operation: every transaction is a new TCP
// connection, a full TLS handshake verified against the cipher profile, an
// HTTP/1.0 GET, the complete response, and the server's close.
package cps

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/valyala/fasthttp"
)

// Config is one CPS target and how to talk to it.
type Config struct {
	Profile *profiles.Profile
	Address string // host:port to dial
	Host    string // Host header
	Path    string // request path, default /1k
	TLS     profiles.ClientOptions
	Headers [][2]string // extra request headers
	// ExpectSize, if non-negative, is the only acceptable body size.
	ExpectSize int64
	// MaxBody bounds a response body; a larger one is a body_size error.
	MaxBody int
	// Sources are local addresses to dial from, used in turn.
	Sources []net.IP
	// Deadlines of the phases.
	ConnectTimeout   time.Duration
	HandshakeTimeout time.Duration
	ReadTimeout      time.Duration // first byte, and each read after it
	// LingerZero closes with RST instead of FIN (no TIME_WAIT).
	LingerZero bool
	UserAgent  string
}

// Defaults returns the default configuration (no target yet).
func Defaults() Config {
	return Config{
		Path: "/1k", ExpectSize: -1, MaxBody: 16 << 20,
		ConnectTimeout: 5 * time.Second, HandshakeTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		UserAgent: "tlsbench",
	}
}

// Op is the CPS operation. It is safe for concurrent use by its workers.
type Op struct {
	cfg Config
	tls *tls.Config
	req []byte

	mu         sync.Mutex
	negotiated *metrics.Negotiated
}

var _ bench.Op = (*Op)(nil)

// New checks cfg and prepares the operation.
func New(cfg Config) (*Op, error) {
	if cfg.Profile == nil {
		return nil, errors.New("cps: no profile")
	}
	if cfg.Address == "" {
		return nil, errors.New("cps: no address")
	}
	if cfg.Path == "" {
		cfg.Path = "/1k"
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 16 << 20
	}
	op := &Op{cfg: cfg, tls: cfg.Profile.ClientConfig(cfg.TLS)}
	host := cfg.Host
	if host == "" {
		host = cfg.Address
	}
	req := fmt.Appendf(nil, "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n", cfg.Path, host, cfg.UserAgent)
	for _, h := range cfg.Headers {
		req = fmt.Appendf(req, "%s: %s\r\n", h[0], h[1])
	}
	op.req = append(req, "\r\n"...)
	return op, nil
}

// Negotiated returns what the first verified connection negotiated, or nil
// if none was verified.
func (op *Op) Negotiated() *metrics.Negotiated {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.negotiated
}

func (op *Op) observe(cs *tls.ConnectionState) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.negotiated != nil {
		return
	}
	n := &metrics.Negotiated{
		Version:     cipher.Version(cs.Version).Short(),
		CipherSuite: cipher.SuiteName(cs.CipherSuite),
		OpenSSL:     cipher.OpenSSLName(cs.CipherSuite),
		Group:       cipher.GroupName(cs.CurveID),
		SuitePinned: cs.Version != tls.VersionTLS13,
	}
	if len(cs.PeerCertificates) > 0 {
		if kt, ok := cipher.KeyTypeOf(cs.PeerCertificates[0].PublicKey); ok {
			n.CertKey = kt.String()
		}
	}
	op.negotiated = n
}

// NewWorker returns a worker with its own buffers and source address turn.
func (op *Op) NewWorker(id int) (bench.Worker, error) {
	w := &worker{op: op, next: id}
	w.dialer.Timeout = op.cfg.ConnectTimeout
	w.br = bufio.NewReaderSize(&w.fb, 4096)
	return w, nil
}

type worker struct {
	op     *Op
	dialer net.Dialer
	fb     firstByteReader
	br     *bufio.Reader
	resp   fasthttp.Response
	next   int // source address turn
	drain  [512]byte
}

// Do runs one transaction; see the package comment.
func (w *worker) Do(ctx context.Context, s *metrics.Sample) {
	cfg := &w.op.cfg
	w.fb.n = 0 // no response bytes yet (fail reports them)
	if n := len(cfg.Sources); n > 0 {
		w.dialer.LocalAddr = &net.TCPAddr{IP: cfg.Sources[w.next%n]}
		w.next++
	}
	t0 := s.Start
	conn, err := w.dialer.DialContext(ctx, "tcp", cfg.Address)
	t1 := time.Now()
	s.Dur[metrics.Connect] = t1.Sub(t0)
	if err != nil {
		w.fail(s, bench.StageConnect, err, t1)
		return
	}
	defer conn.Close()
	if cfg.LingerZero {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}

	// Handshake, verified in VerifyConnection and, once the group is known,
	// again in full (see profiles.Profile.ClientConfig).
	_ = conn.SetDeadline(t1.Add(cfg.HandshakeTimeout))
	tc := tls.Client(conn, w.op.tls)
	err = tc.HandshakeContext(ctx)
	t2 := time.Now()
	s.Dur[metrics.Handshake] = t2.Sub(t1)
	if err != nil {
		w.fail(s, bench.StageHandshake, err, t2)
		return
	}
	s.Handshake = true
	cs := tc.ConnectionState()
	if err := cfg.Profile.Verify(cs); err != nil {
		w.fail(s, bench.StageHandshake, err, t2)
		return
	}

	// Request and response.
	_ = conn.SetDeadline(time.Now().Add(cfg.ReadTimeout))
	n, err := tc.Write(w.op.req)
	s.BytesOut = int64(n)
	if err != nil {
		w.fail(s, bench.StageResponse, err, time.Now())
		return
	}
	t3 := time.Now()
	w.fb.reset(tc, conn, cfg.ReadTimeout)
	w.br.Reset(&w.fb)
	w.resp.Reset()
	err = w.resp.ReadLimitBody(w.br, cfg.MaxBody)
	if err != nil {
		w.fail(s, bench.StageResponse, w.fb.cause(err), time.Now())
		return
	}
	// HTTP/1.0: the server closes; read to its close so that the TIME_WAIT
	// stays on the server side.
	extra, err := w.drainToEOF()
	t4 := time.Now()
	s.BytesIn = w.fb.n
	s.Dur[metrics.TTFB] = w.fb.first.Sub(t3)
	s.Dur[metrics.Transfer] = t4.Sub(w.fb.first)
	s.Dur[metrics.Total] = t4.Sub(t0)
	switch {
	case w.resp.StatusCode() != fasthttp.StatusOK:
		s.Class = bench.ClassStatus
		s.Err = fmt.Errorf("status %d", w.resp.StatusCode())
	case cfg.ExpectSize >= 0 && int64(len(w.resp.Body())) != cfg.ExpectSize:
		s.Class = bench.ClassBodySize
		s.Err = fmt.Errorf("body of %d bytes, expected %d", len(w.resp.Body()), cfg.ExpectSize)
	case extra > 0:
		s.Class = bench.ClassBodySize
		s.Err = fmt.Errorf("%d bytes after the response body", extra)
	case err != nil:
		s.Class = bench.Classify(bench.StageResponse, err)
		s.Err = fmt.Errorf("waiting for the server's close: %w", err)
	default:
		w.op.observe(&cs)
	}
}

// drainToEOF reads until the server closes; it returns how many bytes came
// after the response.
func (w *worker) drainToEOF() (int, error) {
	extra := 0
	for {
		n, err := w.br.Read(w.drain[:])
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

// fail classifies err and closes the sample at end.
func (w *worker) fail(s *metrics.Sample, stage bench.Stage, err error, end time.Time) {
	var me *profiles.MismatchError
	switch {
	case errors.Is(err, profiles.ErrResumed):
		s.Class = bench.ClassResumed
	case errors.As(err, &me):
		s.Class = bench.ClassMismatch
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		s.Class = bench.ClassBodySize
	default:
		s.Class = bench.Classify(stage, err)
	}
	s.Err = err
	s.Dur[metrics.Total] = end.Sub(s.Start)
	s.BytesIn = w.fb.n
}

// firstByteReader times the first response byte, counts bytes, keeps the
// underlying read error (fasthttp reports any error on the first byte as
// io.EOF) and pushes the read deadline forward on every read.
type firstByteReader struct {
	r       io.Reader
	conn    net.Conn
	timeout time.Duration
	first   time.Time
	n       int64
	err     error
}

func (f *firstByteReader) reset(r io.Reader, conn net.Conn, timeout time.Duration) {
	*f = firstByteReader{r: r, conn: conn, timeout: timeout}
}

func (f *firstByteReader) Read(p []byte) (int, error) {
	if f.n > 0 {
		_ = f.conn.SetReadDeadline(time.Now().Add(f.timeout))
	}
	n, err := f.r.Read(p)
	if n > 0 && f.n == 0 {
		f.first = time.Now()
	}
	f.n += int64(n)
	if err != nil {
		f.err = err
	}
	return n, err
}

// cause prefers the transport's error over fasthttp's summary of it.
func (f *firstByteReader) cause(err error) error {
	if f.err != nil && f.err != io.EOF {
		return f.err
	}
	return err
}
