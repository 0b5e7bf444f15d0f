package target

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/tlsbench/tlsbench/profiles"
)

// HTTP/3 (RFC 9114) over QUIC (RFC 9000), with quic-go and its http3
// package, beside the TCP listener of every profile that negotiates TLS
// 1.3 (QUIC carries TLS 1.3 only, RFC 9001 §4.2), on UDP at the same port
// number, ALPN h3 (a profile that expects another ALPN has none; so has a
// TLS 1.2 profile's listener). Its requests go to HTTP/2's handler
// (h2Handler, Target.route): same objects, headers, Server header and
// /stats. Nothing advertises it (no Alt-Svc): a client asks for it.
//
// Counted: a full handshake or a resumption per connection (in Handshakes
// and Resumed, and apart in Stats.QUIC), once it is complete, or at once
// when the client's 0-RTT data is accepted (a resumption); client
// certificates and server names as over TCP. Not applied to QUIC: faults
// (TCP connections only), MaxRequestsPerConn, OnRequest. With PSK
// resumption the listener issues tickets and accepts 0-RTT requests
// (counted in QUIC.EarlyData); without it, neither. Config.NoHTTP3 turns
// the UDP side off.

// QUICStats is a listener's HTTP/3 side in /stats.
type QUICStats struct {
	Address    string `json:"address"`    // UDP host:port
	Handshakes int64  `json:"handshakes"` // full handshakes, of Stats.Handshakes
	Resumed    int64  `json:"resumed"`    // of Stats.Resumed
	// EarlyData counts the resumptions of Resumed whose early data (0-RTT)
	// the listener accepted: the client offered it; whether it sent a
	// request in it is the client's (quic-go's offers it whenever it can).
	EarlyData int64 `json:"early_data"`
}

// quicCounts are a listener's QUIC counters.
type quicCounts struct {
	handshakes, resumed, early atomic.Int64
}

// quicStats is l's HTTP/3 side in /stats, nil without.
func (l *Listener) quicStats() *QUICStats {
	q := l.quic
	if q == nil {
		return nil
	}
	return &QUICStats{Address: l.QUICAddr, Handshakes: q.handshakes.Load(), Resumed: q.resumed.Load(),
		EarlyData: q.early.Load()}
}

// servesH3 reports whether profile p's listener serves HTTP/3.
func (t *Target) servesH3(p *profiles.Profile) bool {
	alpn := p.ExpectedALPN()
	return !t.cfg.NoHTTP3 && p.ExpectedVersion() == tls.VersionTLS13 && (alpn == "" || alpn == http3.NextProtoH3)
}

// listenBoth listens on TCP at the i-th port and, when p's listener serves
// HTTP/3, on UDP at the same port number. On free ports (Config.Port 0) a
// few are tried until one is free for both.
func (t *Target) listenBoth(p *profiles.Profile, i int) (net.Listener, *net.UDPConn, error) {
	for try := 1; ; try++ {
		ln, err := listenNth(t.cfg.Host, t.cfg.Port, i)
		if err != nil || !t.servesH3(p) {
			return ln, nil, err
		}
		a := ln.Addr().(*net.TCPAddr)
		pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: a.IP, Port: a.Port})
		if err == nil {
			t.closers = append(t.closers, pc.Close) // also when Start fails after this
			return ln, pc, nil
		}
		ln.Close()
		if t.cfg.Port != 0 || try == 5 {
			return nil, nil, fmt.Errorf("%w: %w", ErrHTTP3Listen, err)
		}
	}
}

// ErrHTTP3Listen is the error of a listener whose HTTP/3 side (its UDP
// port) could not be opened; Config.NoHTTP3 does without it.
var ErrHTTP3Listen = errors.New("HTTP/3 on UDP")

// h3CloseWait bounds the wait for HTTP/3's handlers at Close, as the TCP
// side's shutdown's.
var h3CloseWait = 5 * time.Second

// serveH3 serves HTTP/3 on pc for tl's listener, with tl's TLS
// configuration (ALPN h3, TLS 1.3), until the target closes (pc is closed
// then, as the target's closers run in reverse).
func (t *Target) serveH3(tl *tlsListener, pc *net.UDPConn) error {
	cfg := http3.ConfigureTLSConfig(tl.cfg) // a clone, ALPN h3
	cfg.MinVersion = tls.VersionTLS13
	if err := t.resume(cfg, tls.VersionTLS13); err != nil { // its own ticket key rotation
		return err
	}
	tr := &quic.Transport{Conn: pc}
	ln, err := tr.ListenEarly(cfg, &quic.Config{
		HandshakeIdleTimeout: t.cfg.HandshakeTimeout,
		MaxIdleTimeout:       60 * time.Second,
		MaxIncomingStreams:   h2MaxStreams,
		Allow0RTT:            t.cfg.Resumption.PSK,
	})
	if err != nil {
		return err
	}
	l := tl.l
	l.QUICAddr, l.quic = pc.LocalAddr().String(), &quicCounts{}
	srv := &http3.Server{
		Handler:     h2Handler{t: t, l: l, n: &l.requestsH3},
		IdleTimeout: 60 * time.Second,
		ConnContext: func(ctx context.Context, qc *quic.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, countQUIC(tl, qc))
		},
	}
	// Not in t.wg: it returns when the target closes, once srv.Close
	// has (which waits for the handlers, h3CloseWait at most for Close).
	go func() { _ = srv.ServeListener(ln) }()
	t.closers = append(t.closers, func() error {
		// Close waits for the handlers, a delayed response's too: at
		// most h3CloseWait.
		done := make(chan struct{})
		go func() { _ = srv.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(h3CloseWait):
		}
		_ = ln.Close()
		return tr.Close()
	})
	return nil
}

// countQUIC counts connection qc's handshake once complete (at once when
// its 0-RTT data was accepted) and returns the connection as the handler
// sees it. An HTTP/3 connection is served from here: a connection whose
// handshake fails has no request.
func countQUIC(tl *tlsListener, qc *quic.Conn) *tlsConn {
	c, l := &tlsConn{tl: tl, done: true, quic: true}, tl.l
	if qc.ConnectionState().Used0RTT {
		l.resumed.Add(1)
		l.quic.resumed.Add(1)
		l.quic.early.Add(1)
		return c
	}
	select {
	case <-qc.HandshakeComplete():
	case <-qc.Context().Done():
		return c
	}
	cs := qc.ConnectionState().TLS
	if cs.DidResume {
		l.resumed.Add(1)
		l.quic.resumed.Add(1)
	} else {
		l.handshakes.Add(1)
		l.quic.handshakes.Add(1)
		c.counted = true
		c.countClientCert(&cs)
	}
	if tl.onHS != nil {
		tl.onHS(l, cs)
	}
	return c
}
