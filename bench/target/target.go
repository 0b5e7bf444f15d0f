// Package target is the reference TLS target: fasthttp over crypto/tls, one
// listener per cipher profile, each configured exactly as its profile, with
// certificates generated in memory, session cache and tickets off. It serves
// sized objects from preallocated memory over HTTP/1.1, HTTP/2 (h2.go)
// and, for TLS 1.3 profiles, HTTP/3 over QUIC (http3.go), and counts what
// it sees, so that the engines' counts can be tested against it.
package target

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// Config configures a Target.
type Config struct {
	Host     string // address to listen on; default 127.0.0.1
	Port     int    // first port; listeners take consecutive ports; 0: any free port each
	Profiles []*profiles.Profile
	// Hostnames are added to the generated certificates' names (localhost,
	// 127.0.0.1 and ::1 are always there).
	Hostnames []string
	// Cert, if set, is served on every listener instead of generated ones.
	Cert *tls.Certificate
	// Admin, if set, is the address of a plain-HTTP listener for /stats.
	Admin string
	// HandshakeTimeout bounds a client's handshake; default 10s.
	HandshakeTimeout time.Duration
	// OnHandshake, if set, is called after every completed handshake.
	OnHandshake func(l *Listener, cs tls.ConnectionState)
	// Delay is added before the first byte of every object's response, so
	// that a known cost can be measured (A/B impact studies).
	Delay time.Duration
	// DelayRamp, if positive, adds this much more delay for every second
	// since RampStart (the target's start when zero): a device that slows
	// down steadily, to test a method against drift. With Delay 10ms and
	// DelayRamp 2ms, a response 5 s after the start waits 20 ms.
	DelayRamp time.Duration
	RampStart time.Time
	// DelayJitter, if positive, adds a uniformly random extra delay in
	// [0, DelayJitter) to every response, so that the connections of a
	// closed loop do not stay in step (their completions would otherwise
	// come in bursts, and a short window count them by whole bursts).
	DelayJitter time.Duration
	// OnRequest, if set, is called for every HTTP/1.x object request
	// (tests look at the headers a client sent). It must not keep ctx.
	OnRequest func(l *Listener, ctx *fasthttp.RequestCtx)
	// Faults are injected into fractions of the connections (not the
	// admin listener's); SlowDelay is the "slow" fault's delay (default
	// 15 s, above the engines' default read deadline).
	Faults    []Fault
	SlowDelay time.Duration
	// Plain serves one plain-HTTP listener instead (a backend behind a TLS
	// terminator: "client TLS, server plaintext"); Profiles is ignored.
	Plain bool
	// Resumption says which listeners resume sessions (none by default).
	Resumption Resumption
	// ClientAuth and ClientCAs: client certificates (mutual TLS), see
	// clientauth.go.
	ClientAuth tls.ClientAuthType
	ClientCAs  *x509.CertPool
	// Names, if set, are served a certificate each, chosen by the
	// client's server name (names.go).
	Names []string
	// MaxRequestsPerConn, if positive, closes a kept-alive connection
	// after that many responses, the last with Connection: close (Apache's
	// MaxKeepAliveRequests, nginx's keepalive_requests).
	MaxRequestsPerConn int
	// NoHTTP3 serves no HTTP/3 (http3.go): no UDP listener.
	NoHTTP3 bool
}

// Target is a running reference target. Close stops it.
type Target struct {
	// CA issued the generated certificates (nil with Config.Cert).
	CA        *cipher.CA
	Listeners []*Listener
	AdminAddr string

	servers []*fasthttp.Server
	lns     []net.Listener
	closers []func() error // HTTP/3's servers and sockets, closed in reverse
	wg      sync.WaitGroup
	bodies  bodies
	closed  atomic.Bool
	ctx     context.Context       // done at Close: the target's goroutines and HTTP/2 connections end
	stop    context.CancelFunc    // ends ctx
	cfg     Config                // as started, with its defaults
	names   map[string]*nameCerts // Config.Names' certificates, by key type
}

// Listener is one profile's listener and its counters.
type Listener struct {
	Profile *profiles.Profile
	Addr    string // host:port
	// QUICAddr is the UDP host:port of its HTTP/3 side ("" without).
	QUICAddr string

	connections     atomic.Int64 // TCP connections accepted, whatever came next
	handshakes      atomic.Int64 // full handshakes (client traffic; /stats connections excluded)
	resumed         atomic.Int64
	requests        atomic.Int64 // HTTP/1.x
	requestsH2      atomic.Int64
	requestsH3      atomic.Int64
	quic            *quicCounts  // nil without HTTP/3
	handshakeErrors atomic.Int64 // failed after the client sent something
	clientCerts     atomic.Int64 // full handshakes with a verified client certificate
	injected        injected
	names           *nameCounts // by server name, with Config.Names
}

// Stats is a listener's counters as served by /stats.
type Stats struct {
	Profile         string `json:"profile"`
	Address         string `json:"address"`
	Handshakes      int64  `json:"handshakes"`
	Resumed         int64  `json:"resumed"`
	Requests        int64  `json:"requests"` // for an object (not /stats), whatever the protocol
	HandshakeErrors int64  `json:"handshake_errors"`
	// Connections counts the TCP connections accepted (those reading
	// /stats on this listener too), whatever followed.
	Connections int64 `json:"connections"`
	// Injected counts the faults applied, per kind.
	Injected map[string]int64 `json:"injected"`
	// ClientCerts counts the handshakes of Handshakes with a client
	// certificate verified (mutual TLS).
	ClientCerts int64 `json:"client_certs,omitempty"`
	// Names counts the handshakes by server name, with Config.Names.
	Names *NameStats `json:"names,omitempty"`
	// ByProtocol splits Requests by protocol, named as the engines name
	// them ("http/1.1": HTTP/1.0 and 1.1; "http/2"; "http/3"), those with
	// none left out.
	ByProtocol map[string]int64 `json:"requests_by_protocol,omitempty"`
	// QUIC is the HTTP/3 side's address and counters, nil without.
	QUIC *QUICStats `json:"quic,omitempty"`
}

// Name is the listener's profile name, or "plain".
func (l *Listener) Name() string {
	if l.Profile == nil {
		return "plain"
	}
	return l.Profile.Name
}

// Stats returns the listener's counters.
func (l *Listener) Stats() Stats {
	h1, h2, h3 := l.requests.Load(), l.requestsH2.Load(), l.requestsH3.Load()
	by := map[string]int64{"http/1.1": h1, "http/2": h2, "http/3": h3}
	maps.DeleteFunc(by, func(_ string, n int64) bool { return n == 0 })
	return Stats{
		Profile: l.Name(), Address: l.Addr, Connections: l.connections.Load(),
		Handshakes: l.handshakes.Load(), Resumed: l.resumed.Load(),
		Requests: h1 + h2 + h3, ByProtocol: by, QUIC: l.quicStats(), HandshakeErrors: l.handshakeErrors.Load(),
		Injected: l.injected.snapshot(), ClientCerts: l.clientCerts.Load(), Names: l.nameStats(),
	}
}

// Start starts a listener per profile and, if configured, the admin listener.
func Start(cfg Config) (*Target, error) {
	if len(cfg.Profiles) == 0 && !cfg.Plain {
		return nil, errors.New("target: no profiles")
	}
	if err := CheckFaults(cfg.Faults); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if err := checkClientAuth(cfg); err != nil {
		return nil, err
	}
	cfg.Host = cmp.Or(cfg.Host, "127.0.0.1")
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.SlowDelay <= 0 {
		cfg.SlowDelay = 15 * time.Second
	}
	if cfg.RampStart.IsZero() {
		cfg.RampStart = time.Now()
	}
	t := newTarget(cfg)
	if cfg.Plain {
		return t, t.startPlain()
	}
	if err := t.checkCert(); err != nil {
		return nil, err
	}
	hosts := append([]string{"localhost", "127.0.0.1", "::1"}, cfg.Hostnames...)
	if cfg.Host != "127.0.0.1" && cfg.Host != "0.0.0.0" && cfg.Host != "::" {
		hosts = append(hosts, cfg.Host)
	}
	certs := map[string]tls.Certificate{} // leaf by key type
	for i, p := range cfg.Profiles {
		if err := t.listenProfile(i, p, hosts, certs); err != nil {
			t.Close()
			return nil, err
		}
	}
	if err := t.startAdmin(cfg.Admin); err != nil {
		return nil, err
	}
	return t, nil
}

// newTarget is a target of cfg, not yet listening.
func newTarget(cfg Config) *Target {
	t := &Target{bodies: newBodies(), cfg: cfg}
	t.ctx, t.stop = context.WithCancel(context.Background())
	return t
}

// checkCert makes the CA that issues the profiles' certificates, or checks
// that the given certificate suits every profile.
func (t *Target) checkCert() error {
	cfg := &t.cfg
	if cfg.Cert == nil {
		// The root allows as many intermediate CAs below it as the
		// deepest chain needs, and no more.
		intermediates := 0
		for _, p := range cfg.Profiles {
			intermediates = max(intermediates, p.ServerChainDepth()-2)
		}
		ca, err := cipher.NewRootCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench reference target CA",
			365*24*time.Hour, intermediates)
		if err != nil {
			return err
		}
		t.CA = ca
		return nil
	}
	if cfg.Cert.Leaf == nil {
		return nil
	}
	got, _ := cipher.KeyTypeOf(cfg.Cert.Leaf.PublicKey)
	depth := chainDepth(cfg.Cert.Certificate)
	for _, p := range cfg.Profiles {
		if want := p.ServerCertKey(); !want.Matches(got) {
			return fmt.Errorf("target: profile %s is served with a %s certificate, the given certificate is %s",
				p.Name, want, got)
		}
		if want := p.ExpectedChainDepth(); want != 0 && depth != want {
			return fmt.Errorf("target: profile %s expects a chain of depth %d, the given certificate's is %d",
				p.Name, want, depth)
		}
	}
	return nil
}

// listenNth listens on host at port base+i, or on a free port when base is 0.
func listenNth(host string, base, i int) (net.Listener, error) {
	if base != 0 {
		base += i
	}
	return net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(base)))
}

// listenProfile starts the listener of the i-th profile p, with its
// certificate for hosts (certs: those issued so far, by key type) and,
// with faults, an expired one.
func (t *Target) listenProfile(i int, p *profiles.Profile, hosts []string, certs map[string]tls.Certificate) error {
	cfg := &t.cfg
	cert, err := t.leaf(p, hosts, certs)
	if err != nil {
		return err
	}
	ln, pc, err := t.listenBoth(p, i)
	if err != nil {
		return fmt.Errorf("target: profile %s: %w", p.Name, err)
	}
	l := &Listener{Profile: p, Addr: ln.Addr().String()}
	t.Listeners = append(t.Listeners, l)
	tl := &tlsListener{
		Listener: ln,
		cfg:      t.withClientAuth(p, p.ServerConfig(cert)),
		l:        l,
		timeout:  cfg.HandshakeTimeout,
		onHS:     cfg.OnHandshake,
	}
	if err := t.resume(tl.cfg, uint16(p.ExpectedVersion())); err != nil {
		ln.Close()
		return err
	}
	if err := t.serveNames(tl, cert); err != nil {
		ln.Close()
		return err
	}
	if len(cfg.Faults) > 0 {
		tl.faults = newFaults(cfg.Faults)
		if t.CA != nil {
			exp, err := t.CA.Expired(p.ServerCertKey(), hosts)
			if err != nil {
				return err
			}
			tl.expired = &exp
		}
	}
	if pc != nil {
		if err := t.serveH3(tl, pc); err != nil {
			ln.Close()
			return fmt.Errorf("target: profile %s: HTTP/3: %w", p.Name, err)
		}
	}
	t.serve(tl, t.handler(l), t.serveH2(tl))
	return nil
}

// leaf is the certificate p is served with: the given one, or one the CA
// issues for p's key type and chain depth (once per pair), through as many
// intermediate CAs as the depth asks.
func (t *Target) leaf(p *profiles.Profile, hosts []string, certs map[string]tls.Certificate) (tls.Certificate, error) {
	if t.cfg.Cert != nil {
		return *t.cfg.Cert, nil
	}
	kt, depth := p.ServerCertKey(), p.ServerChainDepth()
	id := kt.String()
	if depth != 2 {
		id += " chain " + strconv.Itoa(depth)
	}
	if c, ok := certs[id]; ok {
		return c, nil
	}
	const validity = 365 * 24 * time.Hour
	issuer := t.CA
	for i := 1; i <= depth-2; i++ {
		var err error
		name := fmt.Sprintf("tlsbench reference target intermediate CA %d", i)
		if issuer, err = issuer.Intermediate(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, name, validity); err != nil {
			return tls.Certificate{}, err
		}
	}
	c, err := issuer.Leaf(kt, hosts, validity)
	if err != nil {
		return tls.Certificate{}, err
	}
	certs[id] = c
	return c, nil
}

// startAdmin starts the admin listener, if addr is set.
func (t *Target) startAdmin(addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Close()
		return fmt.Errorf("target: admin listener: %w", err)
	}
	t.AdminAddr = ln.Addr().String()
	t.serveAdmin(ln) // bounded: see admin.go
	return nil
}

// startPlain starts the plain-HTTP listener and the admin listener.
func (t *Target) startPlain() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(t.cfg.Host, strconv.Itoa(t.cfg.Port)))
	if err != nil {
		return fmt.Errorf("target: plain listener: %w", err)
	}
	l := &Listener{Addr: ln.Addr().String()}
	t.Listeners = append(t.Listeners, l)
	t.serve(&countingListener{Listener: ln, n: &l.connections}, t.handler(l), nil)
	return t.startAdmin(t.cfg.Admin)
}

// serve serves ln with h, and hands the connections that negotiate h2 to
// h2 when set (h2.go).
func (t *Target) serve(ln net.Listener, h fasthttp.RequestHandler, h2 fasthttp.ServeHandler) {
	srv := &fasthttp.Server{
		Handler:                      h,
		Name:                         "tlsbench",
		ReadTimeout:                  30 * time.Second,
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  60 * time.Second,
		Logger:                       quiet,
		CloseOnShutdown:              true,
		DisablePreParseMultipartForm: true,
		MaxRequestsPerConn:           t.cfg.MaxRequestsPerConn,
	}
	if h2 != nil {
		srv.NextProto("h2", h2)
	}
	t.run(srv, ln)
}

// run serves ln with srv until the listener closes (Close).
func (t *Target) run(srv *fasthttp.Server, ln net.Listener) {
	t.servers = append(t.servers, srv)
	t.lns = append(t.lns, ln)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		_ = srv.Serve(ln) // returns when the listener closes
	}()
}

// Close stops the listeners and closes open connections.
func (t *Target) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range t.servers {
		_ = s.ShutdownWithContext(ctx)
	}
	for _, ln := range t.lns {
		ln.Close()
	}
	for i := len(t.closers) - 1; i >= 0; i-- { // in reverse: a socket after its server
		_ = t.closers[i]()
	}
	t.wg.Wait()
	return nil
}

// Stats returns every listener's counters.
func (t *Target) Stats() []Stats {
	out := make([]Stats, len(t.Listeners))
	for i, l := range t.Listeners {
		out[i] = l.Stats()
	}
	return out
}

// Listener returns the listener of the named profile, or nil.
func (t *Target) Listener(profile string) *Listener {
	for _, l := range t.Listeners {
		if l.Name() == profile {
			return l
		}
	}
	return nil
}

// handler serves listener l's HTTP/1.x requests.
func (t *Target) handler(l *Listener) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		c, _ := ctx.Conn().(*tlsConn)
		t.route(h1Reply{ctx}, l, c, ctx.Path(), &l.requests)
	}
}

// route answers a request for path on listener l's connection c (nil
// without TLS) over either protocol, r writing the response; n counts the
// protocol's requests.
func (t *Target) route(r reply, l *Listener, c *tlsConn, path []byte, n *atomic.Int64) {
	if string(path) == "/stats" {
		if c != nil && c.counted && c.stats.CompareAndSwap(false, true) {
			// This connection came to read the counters: it is not
			// client traffic.
			l.handshakes.Add(-1)
			if c.quic {
				l.quic.handshakes.Add(-1)
			}
			c.uncountClientCert()
		}
		r.json(l.Stats())
		return
	}
	n.Add(1)
	if h, ok := r.(h1Reply); ok && t.cfg.OnRequest != nil {
		t.cfg.OnRequest(l, h.RequestCtx)
	}
	if c != nil && c.fault != "" && t.responseFault(r, l, c, path) {
		return
	}
	d := t.Delay()
	if t.cfg.DelayJitter > 0 {
		d += rand.N(t.cfg.DelayJitter)
	}
	if d > 0 {
		time.Sleep(d)
	}
	t.bodies.serve(r, path)
}

// Delay is the delay a response gets now: Config.Delay, plus DelayRamp for
// every second since RampStart (DelayJitter aside).
func (t *Target) Delay() time.Duration {
	d := t.cfg.Delay
	if t.cfg.DelayRamp > 0 {
		d += time.Duration(float64(t.cfg.DelayRamp) * time.Since(t.cfg.RampStart).Seconds())
	}
	return d
}

func (t *Target) adminHandler(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/stats" {
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	writeJSON(ctx, struct {
		Listeners []Stats `json:"listeners"`
	}{t.Stats()})
}

func writeJSON(ctx *fasthttp.RequestCtx, v any) {
	ctx.SetContentType("application/json")
	ctx.SetBody(jsonBody(v))
}

// jsonBody is v in JSON, a line.
func jsonBody(v any) []byte {
	data, _ := json.Marshal(v)
	return append(data, '\n')
}

// quiet drops fasthttp's log lines.
var quiet = log.New(io.Discard, "", 0)

// tlsListener wraps accepted connections in TLS and counts handshakes.
type tlsListener struct {
	net.Listener
	cfg     *tls.Config
	l       *Listener
	timeout time.Duration
	onHS    func(*Listener, tls.ConnectionState)
	faults  *faults
	expired *tls.Certificate // for the expired-cert fault
}

func (tl *tlsListener) Accept() (net.Conn, error) {
	c, err := tl.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tl.l.connections.Add(1)
	raw := &countingConn{Conn: c}
	fault := tl.faults.pick()
	if fault == "expired-cert" && tl.expired == nil {
		fault = "" // the user's own certificate: nothing to expire
	}
	return &tlsConn{Conn: tls.Server(raw, tl.faultConfig(fault)), raw: raw, tl: tl, fault: fault}, nil
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (cl *countingListener) Accept() (net.Conn, error) {
	c, err := cl.Listener.Accept()
	if err == nil {
		cl.n.Add(1)
	}
	return c, err
}

// countingConn counts the bytes a client sent, to tell a failed handshake
// from a connection that closed without a ClientHello (a reachability probe).
type countingConn struct {
	net.Conn
	n int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n += int64(n)
	return n, err
}

// tlsConn completes the handshake on first use, under its own deadline, and
// counts it. The handshake runs in one fasthttp worker goroutine; after
// it, an HTTP/2 connection's streams use the connection at once (stats,
// cut and wrote are theirs).
type tlsConn struct {
	*tls.Conn
	raw     *countingConn
	tl      *tlsListener
	done    bool
	counted bool // counted in handshakes
	client  bool // counted in clientCerts
	stats   atomic.Bool
	hsErr   error
	fault   string      // the fault injected into this connection, if any
	cut     atomic.Bool // an HTTP/2 stream is ending the connection (h2Reply.cut)
	wrote   atomic.Int64
	served  atomic.Int64 // HTTP/2 requests, for MaxRequestsPerConn
	quic    bool         // an HTTP/3 connection (countQUIC): no *tls.Conn
}

// Handshake runs the counted handshake (fasthttp calls it directly).
func (c *tlsConn) Handshake() error {
	if c.done {
		return c.hsErr
	}
	c.done = true
	if c.handshakeFault() {
		c.hsErr = errInjected
		return c.hsErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.tl.timeout)
	defer cancel()
	if err := c.Conn.HandshakeContext(ctx); err != nil {
		if c.raw.n > 0 {
			c.tl.l.handshakeErrors.Add(1)
		}
		c.hsErr = err
		return err
	}
	cs := c.Conn.ConnectionState()
	if cs.DidResume {
		c.tl.l.resumed.Add(1)
		if c.fault == "accept-resumption" {
			c.tl.l.injected.add(c.fault)
		}
	} else {
		c.tl.l.handshakes.Add(1)
		c.counted = true
		c.countClientCert(&cs)
	}
	if c.tl.onHS != nil {
		c.tl.onHS(c.tl.l, cs)
	}
	return nil
}

func (c *tlsConn) Read(p []byte) (int, error) {
	if err := c.Handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *tlsConn) Write(p []byte) (int, error) {
	if err := c.Handshake(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	if c.fault != "" {
		c.wrote.Add(1) // the writes, for a fault that ends the connection after them (endAfterWrites)
	}
	return n, err
}
