// Package tlsconn opens the connections of the engines' operations: TCP
// connect from the configured source addresses, a full TLS handshake with the
// profile's configuration, verification against the profile, and byte
// counting at the socket; it reads responses with the first byte's arrival
// time (Reader) and waits for the server's close (Conn.AwaitFIN). It also
// classifies what can go wrong on the way.
package tlsconn

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// Defaults returns the default connect and handshake deadlines of every
// command (no target yet); httpreq.Defaults has the read deadline.
func Defaults() Config {
	return Config{Settings: Settings{ConnectTimeout: 5 * time.Second, HandshakeTimeout: 5 * time.Second}}
}

// Settings are the connection settings of a run. A run spec embeds them (its
// JSON names are the spec's).
type Settings struct {
	// Sources are local addresses to dial from, used in turn.
	Sources          []net.IP      `json:"sources,omitempty"`
	LingerZero       bool          `json:"linger0,omitempty"` // close with RST instead of FIN (no TIME_WAIT)
	ConnectTimeout   time.Duration `json:"connect_timeout"`
	HandshakeTimeout time.Duration `json:"handshake_timeout"`
	// Resume is the share of each worker's connections that resume a
	// session of an earlier handshake of the run (sessions.go); 0: every
	// handshake is full (SR=0).
	Resume float64 `json:"resume,omitempty"`
	// Resumption is how sessions are resumed: ResumeTickets (TLS 1.2) or
	// ResumePSK (TLS 1.3); "" is the profile's version's.
	Resumption string `json:"resumption,omitempty"`
	ClientAuth        // mutual TLS: where the client certificate comes from (clientcert.go)
	// ServerNames, if set, are sent (SNI) and verified in turn, one per
	// connection, instead of the run's one name (names.go).
	ServerNames []string `json:"server_names,omitempty"`
	// EarlyData: a connection that resumes a session sends its request
	// as 0-RTT data when the session allows it (a protocol that can:
	// protocol.Protocol.EarlyData); it needs Resume.
	EarlyData bool `json:"early_data,omitempty"`
}

// Validate reports the first setting out of its domain, a *vocab.FieldError.
func (s *Settings) Validate() error {
	switch {
	case s.ConnectTimeout <= 0:
		return &vocab.FieldError{Field: "connect_timeout", Value: s.ConnectTimeout, Want: "be positive"}
	case s.HandshakeTimeout <= 0:
		return &vocab.FieldError{Field: "handshake_timeout", Value: s.HandshakeTimeout, Want: "be positive"}
	case !(s.Resume >= 0 && s.Resume <= 1): // NaN too
		return &vocab.FieldError{Field: "resume", Value: s.Resume, Want: "be a share from 0 to 1"}
	case s.EarlyData && s.Resume == 0:
		return &vocab.FieldError{Field: "early_data", Value: true,
			Msg: "needs a resume share above 0: 0-RTT data goes with a resumed session"}
	case s.Resume == 0 && s.Resumption != "":
		return &vocab.FieldError{Field: "resumption", Value: s.Resumption,
			Msg: "needs a resume share above 0: without one no connection offers a session"}
	}
	if err := s.ClientAuth.Validate(); err != nil {
		return err
	}
	if err := checkResumption(s.Resumption); err != nil {
		return err
	}
	return s.validateNames()
}

// Config says where and how to connect.
type Config struct {
	Settings
	Profile *profiles.Profile
	Address string // host:port to dial
	// TLS gives the run's ServerName, RootCAs, InsecureSkipVerify and
	// KeyLogWriter (profiles.Profile.ClientConfig); nil: none of them.
	TLS *tls.Config
}

// Validate reports a missing field or a setting out of its domain, or
// one the profile cannot do (a *vocab.FieldError).
func (c *Config) Validate() error {
	switch {
	case c.Profile == nil:
		return errors.New("no profile")
	case c.Address == "":
		return errors.New("no address")
	}
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	_, err := c.ResumptionMode()
	return err
}

// Endpoint is the run's side of the target it dials, shared by the
// workers: the address (resolved once), the TLS configuration (built once
// per run), what the first verified connection negotiated, and the count of
// open connections. It is safe for concurrent use.
type Endpoint struct {
	cfg   Config
	tls   *tls.Config
	mode  string       // resumption: ResumeTickets or ResumePSK; "" with Resume 0
	names *serverNames // nil: the run's one name (tls)

	mu         sync.Mutex
	negotiated *metrics.Negotiated
	leaf       string // SHA-256 of the first verified connection's leaf certificate, hex

	// open counts the run's TCP connections established and not yet
	// closed (handshaking or done); peak is its highest value.
	open, peak atomic.Int64
}

// OpenConns returns how many of the run's connections are open now (TCP
// established, whether handshaking or verified, not yet closed) and the most
// that were open at once.
func (e *Endpoint) OpenConns() (now, peak int64) { return e.open.Load(), e.peak.Load() }

// opened counts a new connection.
func (e *Endpoint) opened() {
	n := e.open.Add(1)
	for {
		p := e.peak.Load()
		if n <= p || e.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// NewEndpoint checks cfg, resolves its address and builds the run's TLS
// configuration.
func NewEndpoint(cfg Config) (*Endpoint, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr, err := resolveOnce(cfg.Address, cfg.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	cfg.Address = addr
	e := &Endpoint{cfg: cfg, tls: cfg.Profile.ClientConfig(cfg.TLS),
		names: newServerNames(cfg.Profile, cfg.TLS, cfg.ServerNames)}
	e.mode, _ = cfg.ResumptionMode() // checked by Validate
	return e, nil
}

// Prepare is the operations' common prologue: the request's own checks
// (check), the endpoint (NewEndpoint), then the request compiled for the
// address the run dials (compile). The caller names the operation (the
// command, or the campaign's run) in its message, once.
func Prepare(_ vocab.Engine, cfg Config, check func() error, compile func(addr string) error) (*Endpoint, error) {
	if err := check(); err != nil {
		return nil, err
	}
	ep, err := NewEndpoint(cfg)
	if err != nil {
		return nil, err
	}
	return ep, compile(ep.Address())
}

// resolveOnce turns a host name into its first address (IPv4 first), once
// for the run: a name lookup per connection cost about 1% of a CPS
// transaction's CPU (0.06 of 7.9 s in a profile against "localhost") and
// would time DNS as "connect". A name with several addresses gets one.
func resolveOnce(addr string, timeout time.Duration) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || net.ParseIP(host) != nil {
		return addr, nil // an address already, or let the dial report it
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s: %w", host, err)
	}
	best := ips[0].IP
	for _, ip := range ips {
		if ip.IP.To4() != nil {
			best = ip.IP
			break
		}
	}
	return net.JoinHostPort(best.String(), port), nil
}

// Negotiated returns what the first verified connection negotiated, or nil.
func (e *Endpoint) Negotiated() *metrics.Negotiated {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.negotiated
}

// LeafSHA256 returns the SHA-256 fingerprint (lowercase hex) of the leaf
// certificate the first verified connection was presented, or "".
func (e *Endpoint) LeafSHA256() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leaf
}

// Address returns the address the run dials: the configured one, its host
// name resolved once (NewEndpoint).
func (e *Endpoint) Address() string { return e.cfg.Address }

// LeafFingerprint returns the SHA-256 of cs's leaf certificate (its DER
// encoding), lowercase hex; "" when cs has no certificate.
func LeafFingerprint(cs *tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return ""
	}
	sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
	return hex.EncodeToString(sum[:])
}

// Observe keeps cs as the run's negotiated parameters, and its leaf
// certificate's fingerprint, if it is the first.
func (e *Endpoint) Observe(cs *tls.ConnectionState) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.negotiated != nil {
		return
	}
	e.leaf = LeafFingerprint(cs)
	n := &metrics.Negotiated{
		Version:     cipher.Version(cs.Version).Short(),
		CipherSuite: cipher.SuiteName(cs.CipherSuite),
		OpenSSL:     cipher.OpenSSLName(cs.CipherSuite),
		Group:       cipher.GroupName(cs.CurveID),
		SuitePinned: cs.Version != tls.VersionTLS13,
		ALPN:        cs.NegotiatedProtocol,
	}
	if len(cs.PeerCertificates) > 0 {
		if kt, ok := cipher.KeyTypeOf(cs.PeerCertificates[0].PublicKey); ok {
			n.CertKey = kt.String()
		}
	}
	e.negotiated = n
}

// Dialer opens connections for one worker; it is not safe for concurrent use.
type Dialer struct {
	c      *Endpoint
	dialer net.Dialer
	next   int       // source address turn
	name   int       // the connection's server name, when the run has several (names.go)
	tcp    tcpDialer // a failed connect's socket, for its TCP_INFO
	// With resumption: the worker's sessions and the turn of its
	// connections (sessions.go); nil without.
	sess *sessions
}

// NewDialer returns a worker's dialer; id staggers the source addresses.
func (e *Endpoint) NewDialer(id int) *Dialer {
	d := &Dialer{c: e, next: id}
	d.dialer.Timeout = e.cfg.ConnectTimeout
	// No TCP keep-alive: every operation on a connection has its own
	// deadline, so the probes (after 15 s idle) would never matter, and
	// turning them on costs four setsockopt calls per connection (SO_KEEPALIVE,
	// TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT), an eighth of a CPS
	// transaction's system calls.
	d.dialer.KeepAlive = -1
	d.tcp.setup(&d.dialer)
	if e.mode != "" {
		d.sess = newSessions(e.cfg.Resume, e.mode == ResumePSK)
	}
	return d
}

// Conn is a verified TLS connection that counts its wire bytes. It is used
// by one goroutine.
type Conn struct {
	*tls.Conn
	raw    *countingConn
	State  tls.ConnectionState
	ep     *Endpoint
	closed bool
}

// WireIn and WireOut return the TLS bytes read and written so far.
func (c *Conn) WireIn() int64  { return c.raw.in }
func (c *Conn) WireOut() int64 { return c.raw.out }

// Close closes the TCP connection without a close_notify: the peer has
// usually closed already (HTTP/1.0), and the alert would only draw a RST.
// Closing twice is harmless.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.ep.open.Add(-1)
	return c.raw.Close()
}

// CloseTCP is Close, having first read the kernel's account of the
// connection (TCP_INFO: retransmissions, SYNs among them, a reset
// received, smoothed RTT); ok is false where it is not read (not Linux) or
// when the connection was already closed (or c is nil).
func (c *Conn) CloseTCP() (t metrics.TCPConn, ok bool) {
	if c == nil || c.closed {
		return t, false
	}
	t, ok = c.raw.tcpAtClose()
	_ = c.Close()
	return t, ok
}

// CloseIn is CloseTCP, noting the kernel's account of the connection in
// the sample of the transaction that closes it.
func (c *Conn) CloseIn(s *metrics.Sample) {
	if t, ok := c.CloseTCP(); ok {
		s.TCP.Add(t)
	}
}

// SetDeadline sets the deadline of the underlying TCP connection.
func (c *Conn) SetDeadline(t time.Time) error { return c.raw.SetDeadline(t) }

// LocalPort returns the connection's local TCP port (0 if it has none).
func (c *Conn) LocalPort() int {
	if a, ok := c.raw.LocalAddr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// AwaitFIN is called once the TLS layer has returned EOF: it reports whether
// that EOF was the server's close_notify alert (the TCP connection still
// open) and, if so, waits for the server's TCP FIN, reading the socket until
// it ends, each read within timeout. Closing only then leaves the TIME_WAIT
// state with the server, which closed first. fin is false when the deadline
// came first (the client then closes first) or the connection failed; extra
// counts bytes the server sent after its close_notify.
func (c *Conn) AwaitFIN(buf []byte, timeout time.Duration) (closeNotify, fin bool, extra int) {
	if c.raw.eof {
		return false, true, 0 // the TCP EOF ended the TLS stream: no close_notify
	}
	for {
		_ = c.raw.SetReadDeadline(time.Now().Add(timeout))
		n, err := c.raw.Read(buf)
		extra += n
		if err == io.EOF {
			return true, true, extra
		}
		if err != nil || extra > 1<<20 {
			return true, false, extra
		}
	}
}

// Phases are the durations of a connection's opening: TCP connect (from
// before connect(2) until the socket is connected) and the TLS handshake
// (from then until it returns). Handshake is zero when connect failed.
type Phases struct {
	Connect, Handshake time.Duration
	// HandshakeDone: the TLS handshake completed (whatever came next).
	HandshakeDone bool
	// Resumed: the handshake resumed a session (it was offered one and
	// the server took it).
	Resumed bool
	// Wire bytes of the handshake, read and written.
	WireIn, WireOut int64
	// TCP is the kernel's account of a connection that failed its
	// handshake, read before it was closed, when TCPRead (Linux).
	TCP     metrics.TCPConn
	TCPRead bool
}

// Dial connects and handshakes, and returns the phases' durations with the
// connection. On failure the connection is closed and the error is a
// *DialError, which knows its stage (Class classifies it); when the stage is
// StageHandshake, the TCP connection was opened.
func (d *Dialer) Dial(ctx context.Context) (*Conn, Phases, error) {
	var phases Phases
	cfg := &d.c.cfg
	if n := len(cfg.Sources); n > 0 {
		d.dialer.LocalAddr = &net.TCPAddr{IP: cfg.Sources[d.next%n]}
		d.next++
	}
	t0 := time.Now()
	raw, err := d.dialer.DialContext(ctx, "tcp", cfg.Address)
	t1 := time.Now()
	phases.Connect = t1.Sub(t0)
	if err != nil {
		phases.TCP, phases.TCPRead = d.tcp.failed()
		return nil, phases, &DialError{Stage: engine.StageConnect, Err: err}
	}
	d.tcp.release()
	d.c.opened()
	if cfg.LingerZero {
		if tc, ok := raw.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
	cc := &countingConn{Conn: raw}
	cc.stamps = cc.arr.enable(raw)
	cc.noteConnect()
	_ = raw.SetDeadline(t1.Add(cfg.HandshakeTimeout))
	d.sess.turn()
	tc := tls.Client(cc, d.sess.config(d.clientConfig()))
	err = tc.HandshakeContext(ctx)
	phases.Handshake = time.Since(t1)
	phases.WireIn, phases.WireOut = cc.in, cc.out
	var cs tls.ConnectionState
	if err == nil {
		phases.HandshakeDone = true
		// VerifyConnection checked all but the group of a TLS 1.2 full
		// handshake, and whether a session might be resumed; now that
		// they are known, check everything.
		cs = tc.ConnectionState()
		phases.Resumed = cs.DidResume
		if err = cfg.Profile.VerifyResumption(cs, d.sess.offered()); err == nil {
			err = d.sess.missing()
		}
	}
	if err != nil {
		phases.TCP, phases.TCPRead = cc.tcpAtClose()
		d.drop(raw)
		return nil, phases, &DialError{Stage: engine.StageHandshake, Err: err}
	}
	_ = raw.SetDeadline(time.Time{})
	return &Conn{Conn: tc, raw: cc, State: cs, ep: d.c}, phases, nil
}

// DialError is a failed Dial: the stage it failed at (connect or handshake)
// and the cause. Its message is the cause's.
type DialError struct {
	Stage engine.Stage
	Err   error
}

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// Fill notes the opening of a connection in s: the connect and handshake
// times, whether the handshake completed, its wire bytes and, for a
// handshake that failed, the kernel's account of the connection. When err
// (Dial's) is not nil it also ends s, classified, and Fill returns false.
func (ph *Phases) Fill(s *metrics.Sample, err error) bool {
	s.Opened = true
	s.Dur[vocab.PhaseConnect], s.Dur[vocab.PhaseHandshake] = ph.Connect, ph.Handshake
	s.Handshake, s.Resumed = ph.HandshakeDone, ph.Resumed
	s.WireIn, s.WireOut = ph.WireIn, ph.WireOut
	if ph.TCPRead {
		s.TCP.Add(ph.TCP) // a handshake that failed
	}
	if err == nil {
		return true
	}
	s.Class = Class(err)
	s.Err = err
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
	return false
}

// drop closes a connection that failed its handshake.
func (d *Dialer) drop(raw net.Conn) {
	d.nameFailed()
	d.c.open.Add(-1)
	raw.Close()
}

// Class maps an error to its class: a profile mismatch or a resumed
// session first, then engine.Classify at the error's stage: a *DialError's,
// else StageResponse.
func Class(err error) vocab.Class {
	var me *profiles.MismatchError
	switch {
	case errors.Is(err, profiles.ErrResumed):
		return vocab.ClassResumed
	case errors.Is(err, profiles.ErrNotResumed):
		return vocab.ClassNotResumed
	case errors.As(err, &me):
		return vocab.ClassMismatch
	}
	stage := engine.StageResponse
	var de *DialError
	if errors.As(err, &de) {
		stage = de.Stage
	}
	return engine.Classify(stage, err)
}

// countingConn counts the bytes crossing the socket. It also notes when the
// TCP stream ended (eof: the peer's FIN was read) and, while stamp is set,
// when the kernel received the data its next read returns (arr.at, the
// first such time since it was last cleared; Linux only: stamps is false
// elsewhere).
type countingConn struct {
	net.Conn
	in, out int64
	eof     bool
	stamp   bool
	stamps  bool
	arr     arrival
	syn     uint32 // SYNs retransmitted before connect returned (Linux)
}

func (c *countingConn) Read(p []byte) (int, error) {
	if c.stamp && c.stamps && c.arr.at.IsZero() {
		c.arr.peek()
	}
	n, err := c.Conn.Read(p)
	c.in += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out += int64(n)
	return n, err
}

// Reader reads a response: it pushes the read deadline forward before each
// read (unless it did less than readSlack ago), notes when the first byte came, counts bytes, and keeps the
// transport's own error (fasthttp reports any error on a response's first
// byte as io.EOF). Reset it before each response.
//
// First is when the kernel received the packet that carried the response's
// first byte (its receive timestamp, SO_TIMESTAMPNS, on Linux), not when the
// client woke up to read it: the wake-up belongs to the transfer, which is
// when it happens. Where no timestamp is available it is the time of the
// read that returned the byte.
//
// The kernel stamps what it queues, and it merges a segment that arrives
// while the one before it is still unread into that one: the merged data
// carries the later segment's time. After CountSegments, Merged says
// whether that may have happened to the first byte: First is then an upper
// bound of its arrival.
type Reader struct {
	r       io.Reader
	conn    *Conn
	timeout time.Duration
	First   time.Time // when the first byte arrived
	// FirstRead is when the read that returned the first byte returned.
	FirstRead time.Time
	// Merged: the first byte's stamp may be a later segment's (see
	// CountSegments).
	Merged bool
	N      int64 // bytes read since Reset
	err    error
	// armed is when the read deadline was last pushed forward (zero:
	// not since Reset).
	armed time.Time
}

// readSlack is how stale a read deadline may be: a read starts with
// between timeout − readSlack and timeout to wait. Pushing the deadline
// forward costs a timer update in the runtime (4.6% of a bulk run's CPU
// when done before every 16 KiB record, in a CPU profile of throughput
// against nginx); a body's reads come microseconds apart, so most need
// none.
func readSlack(timeout time.Duration) time.Duration { return min(timeout/64, time.Millisecond) }

// FirstByte is what a Reader knows of a response's first byte.
type FirstByte struct {
	// Arrived is when the kernel received it (Reader.First).
	Arrived time.Time
	// Read is when the client's read that returned it returned.
	Read time.Time
	// Merged: Arrived may be a later segment's (Reader.Merged).
	Merged bool
}

// FirstByte returns what the reader knows of the response's first byte.
func (r *Reader) FirstByte() FirstByte {
	return FirstByte{Arrived: r.First, Read: r.FirstRead, Merged: r.Merged}
}

// Reset starts a new response on conn.
func (r *Reader) Reset(conn *Conn, timeout time.Duration) {
	*r = Reader{r: conn.Conn, conn: conn, timeout: timeout}
	conn.raw.arr.reset()
}

// CountSegments notes the data segments the connection has received so far
// (one system call, Linux only), so that the first byte's read sets Merged
// if more than one data segment, or the FIN, came before it. Call it after
// Reset and before the request is written.
func (r *Reader) CountSegments() {
	r.conn.raw.arr.countSegments()
}

// Mark starts a new response on the same connection, keeping the reader.
func (r *Reader) Mark() {
	r.First, r.FirstRead, r.Merged, r.N, r.err = time.Time{}, time.Time{}, false, 0, nil
	r.conn.raw.arr.at = time.Time{}
}

func (r *Reader) Read(p []byte) (int, error) {
	raw := r.conn.raw
	if now := time.Now(); now.Sub(r.armed) >= readSlack(r.timeout) {
		_ = raw.SetReadDeadline(now.Add(r.timeout))
		r.armed = now
	}
	raw.stamp = r.First.IsZero()
	n, err := r.r.Read(p)
	raw.stamp = false
	if n > 0 && r.First.IsZero() {
		now := time.Now()
		r.First, r.FirstRead = now, now
		if a := raw.arr.at; !a.IsZero() && !a.After(now) {
			r.First, r.Merged = a, raw.arr.merged
		}
	}
	r.N += int64(n)
	if err != nil {
		r.err = err
	}
	return n, err
}

// Cause prefers the transport's error over a parser's summary of it.
func (r *Reader) Cause(err error) error {
	if r.err != nil && r.err != io.EOF {
		return r.err
	}
	return err
}
