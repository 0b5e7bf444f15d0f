package http3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

const (
	// maxHeader bounds a response's header section (http3's
	// MaxResponseHeaderBytes), as HTTP/2's header list is bounded.
	maxHeader = 64 << 10
	// readBuf is the body read buffer of a stream.
	readBuf = 32 << 10
	// noApplicationProtocol is the CONNECTION_CLOSE code of the TLS alert
	// no_application_protocol (RFC 9001 §4.8: 0x100 + the alert): the
	// server does not speak h3, or did not select it.
	noApplicationProtocol = 0x100 + 120
)

// base is what both engines' operations share: the endpoint, the request
// (parsed once when it never varies), the QUIC configuration and the run's
// QUIC statistics, summed at each connection's close.
type base struct {
	*tlsconn.Endpoint
	args    protocol.Args
	req     *httpreq.Compiled
	static  *http.Request
	maxBody int64
	addr    *net.UDPAddr
	qconf   *quic.Config
	h3      *http3.Transport
	early   bool // 0-RTT requests (Settings.EarlyData)
	// shared, if set, is the one socket every connection sends from,
	// demultiplexed by connection ID, instead of a socket per connection
	// (dial's comment: measured, not chosen).
	shared *quic.Transport

	mu   sync.Mutex
	acct metrics.QUIC
}

func newBase(e vocab.Engine, a protocol.Args, maxBody int64) (*base, error) {
	if a.Request.Path == "" {
		a.Request.Path = e.DefaultPath()
	}
	b := &base{args: a, maxBody: maxBody, early: a.Conn.EarlyData, h3: &http3.Transport{DisableCompression: true,
		MaxResponseHeaderBytes: maxHeader}}
	// The handshake's deadline is the run's; a connection whose peer is
	// silent longer than a read deadline (and the handshake's) is gone.
	b.qconf = &quic.Config{HandshakeIdleTimeout: a.Conn.HandshakeTimeout,
		MaxIdleTimeout: a.Conn.HandshakeTimeout + a.Request.ReadTimeout}
	var err error
	b.Endpoint, err = tlsconn.Prepare(e, a.Conn, a.Request.Validate, func(addr string) (err error) {
		if b.addr, err = net.ResolveUDPAddr("udp", addr); err != nil {
			return err
		}
		if b.req, err = a.Request.Compile("HTTP/1.1", addr); err == nil && b.req.Static() {
			b.static, err = parse(b.req.Append(nil, nil))
		}
		return err
	})
	return b, err
}

// parse makes an HTTP/3 request of a request head (httpreq's, HTTP/1.1).
func parse(head []byte) (*http.Request, error) {
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return nil, err
	}
	r.URL.Scheme, r.URL.Host, r.RequestURI = "https", r.Host, ""
	return r, nil
}

// next returns the next request, the object it drew (-1: none) and the
// body size it expects (-1: any).
func (b *base) next(g *httpreq.Gen, head []byte) (*http.Request, int, int64, []byte, error) {
	req, obj := b.static, -1
	var err error
	if req == nil {
		head, obj = b.req.AppendObject(head[:0], g)
		req, err = parse(head)
	} else if b.req.Objects() > 0 {
		obj = 0
	}
	want := b.req.ObjectSize(obj)
	if want < 0 {
		want = b.args.Request.ExpectSize
	}
	return req, obj, want, head, err
}

// QUIC returns the run's QUIC statistics, for the record.
func (b *base) QUIC() *metrics.QUIC {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.acct
	q.PTOs = q.PTOs.Add(nil) // a copy
	q.Sockets = "per_connection"
	if b.shared != nil {
		q.Sockets = "shared"
	}
	return &q
}

// conn is one QUIC connection, its HTTP/3 client side and, unless shared,
// its socket.
type conn struct {
	qc      *quic.Conn
	cc      *http3.ClientConn
	udp     *net.UDPConn
	in, out uint64 // wire bytes already given to samples
	// early: dialled for 0-RTT data; pending: its handshake not complete
	// when dialled (its request then goes as 0-RTT data), begun at t0.
	early, pending bool
	t0             time.Time
}

// udpConn is a connected UDP socket as quic-go takes it (its GSO, GRO and
// ECN kept): the address quic-go writes to is the one it is connected to.
// Connected, it reads the ICMP errors of its peer: a closed UDP port
// (ICMP port unreachable) ends the handshake at once with ECONNREFUSED
// instead of its deadline.
type udpConn struct{ *net.UDPConn }

func (c udpConn) WriteTo(b []byte, _ net.Addr) (int, error) { return c.Write(b) }
func (c udpConn) WriteMsgUDP(b, oob []byte, _ *net.UDPAddr) (int, int, error) {
	return c.UDPConn.WriteMsgUDP(b, oob, nil)
}

// dial opens a QUIC connection from src (nil: any) with the TLS
// configuration cfg (early: ready for 0-RTT data), within the handshake
// deadline, on a UDP socket of its own connected to the target. A socket
// per connection, not one shared socket demultiplexing by connection ID:
// each connection is its own 4-tuple as a TCP connection is (a device that
// spreads flows by 4-tuple sees as many as there are connections), ICMP
// errors reach it, and its close releases everything; it costs a socket,
// its setup and a reading goroutine per connection (11% more client CPU
// per CPS transaction, docs/HTTP3.md). The socket being the connection's
// alone, the client's connection ID is empty (quic.Dial's single-use
// transport, RFC 9000 §5.1): the client issues no NEW_CONNECTION_ID.
func (b *base) dial(ctx context.Context, src net.IP, cfg *tls.Config, early bool) (*conn, error) {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, lossKey{}, &losses{}), b.args.Conn.HandshakeTimeout)
	defer cancel()
	c := &conn{}
	var err error
	if b.shared != nil {
		dial := (*quic.Transport).Dial
		if early {
			dial = (*quic.Transport).DialEarly
		}
		c.qc, err = dial(b.shared, ctx, b.addr, cfg, b.qconf)
	} else {
		var laddr *net.UDPAddr
		if src != nil {
			laddr = &net.UDPAddr{IP: src}
		}
		if c.udp, err = net.DialUDP("udp", laddr, b.addr); err != nil {
			return nil, err
		}
		dial := quic.Dial
		if early {
			dial = quic.DialEarly
		}
		if c.qc, err = dial(ctx, udpConn{c.udp}, b.addr, cfg, b.qconf); err != nil {
			c.release()
		}
	}
	te, _ := errors.AsType[*quic.TransportError](err)
	switch {
	case err == nil:
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, fmt.Errorf("nothing listens on UDP %s (ICMP port unreachable): %w", b.addr, err)
	case te != nil && te.ErrorCode == noApplicationProtocol:
		return nil, fmt.Errorf("the device does not speak h3 (ALPN): %w", err)
	case ctx.Err() != nil || isType[*quic.IdleTimeoutError](err) || isType[*quic.HandshakeTimeoutError](err):
		return nil, protocol.Fail(vocab.ClassQUICHandshakeTimeout, "no QUIC handshake within %v (%v)",
			b.args.Conn.HandshakeTimeout, err)
	default:
		return nil, err
	}
	c.cc = b.h3.NewClientConn(c.qc)
	return c, nil
}

// open opens a connection for dialer d, noting its opening in s (no
// connect phase: QUIC has none); nil when it failed, s then ended. Dialled
// for 0-RTT data (early), a connection whose handshake is not complete yet
// (its request goes as 0-RTT data) is returned unverified (c.pending):
// confirm verifies it after its request.
func (b *base) open(ctx context.Context, d *tlsconn.Dialer, s *metrics.Sample, early bool) *conn {
	src, cfg := d.Begin()
	t0 := time.Now()
	c, err := b.dial(ctx, src, cfg, early)
	s.Opened = true
	if err == nil && early {
		c.early = true
		select {
		case <-c.qc.HandshakeComplete():
		default:
			c.pending, c.t0 = true, t0
			return c
		}
	}
	if b.confirm(c, d, s, t0, err) {
		return c
	}
	return nil
}

// confirm ends the opening of c (dial's error err) begun at t0: it waits
// for its handshake within the deadline, notes it in s, and verifies it;
// false when it failed, c then closed and s ended.
func (b *base) confirm(c *conn, d *tlsconn.Dialer, s *metrics.Sample, t0 time.Time, err error) bool {
	if c != nil && c.pending {
		select {
		case <-c.qc.HandshakeComplete():
		case <-c.qc.Context().Done():
			// A rejection of 0-RTT may make http3's client close the
			// connection as the handshake completes: the handshake counts.
			select {
			case <-c.qc.HandshakeComplete():
			default:
				err = context.Cause(c.qc.Context())
			}
		case <-time.After(time.Until(t0.Add(b.args.Conn.HandshakeTimeout))):
			err = protocol.Fail(vocab.ClassQUICHandshakeTimeout, "no QUIC handshake within %v", b.args.Conn.HandshakeTimeout)
		}
	}
	s.Dur[vocab.PhaseHandshake] = time.Since(t0)
	var cs *tls.ConnectionState
	if err == nil {
		state := c.qc.ConnectionState().TLS
		cs = &state
		s.Handshake, s.Resumed = true, cs.DidResume
	}
	if err = d.Verified(cs, err); err == nil {
		b.Observe(cs)
		return true
	}
	if c != nil {
		b.close(c, s, false)
	}
	s.Class, s.Err = classOf(err, false), err
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
	return false
}

// account gives s c's wire bytes (UDP payload), packets lost and PTOs
// since the last sample.
func (c *conn) account(s *metrics.Sample) {
	st := c.qc.ConnectionStats()
	s.WireIn += int64(st.BytesReceived - c.in)
	s.WireOut += int64(st.BytesSent - c.out)
	c.in, c.out = st.BytesReceived, st.BytesSent
	lossesOf(c.qc).give(s, st.PacketsLost)
}

// close ends c: a CONNECTION_CLOSE with H3_NO_ERROR, its wire bytes given
// to s, its statistics to the run's. verified: Verified counted it open.
func (b *base) close(c *conn, s *metrics.Sample, verified bool) {
	_ = c.cc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	if s != nil {
		c.account(s)
	}
	st, state := c.qc.ConnectionStats(), c.qc.ConnectionState()
	b.mu.Lock()
	a := &b.acct
	a.Connections++
	a.PacketsSent += int64(st.PacketsSent)
	a.PacketsReceived += int64(st.PacketsReceived)
	a.PacketsLost += int64(st.PacketsLost)
	a.BytesSent += int64(st.BytesSent)
	a.BytesReceived += int64(st.BytesReceived)
	a.BytesLost += int64(st.BytesLost)
	lossesOf(c.qc).addTo(a)
	a.GSO = a.GSO || state.GSO
	if a.Version == "" {
		a.Version = state.Version.String()
	}
	b.mu.Unlock()
	c.release()
	if verified {
		b.Released()
	}
}

// release closes c's own socket, if it has one (quic.Dial's transport
// closes with its connection).
func (c *conn) release() {
	if c.udp != nil {
		_ = c.udp.Close()
	}
}

// result is one request and its response.
type result struct {
	obj               int
	want              int64
	sent, first, last time.Time
	status            int
	body              int64
	server            string
	err               error
}

// exchange makes req on a new stream of c and reads the whole response
// into r (receive).
func (b *base) exchange(c *conn, req *http.Request, r *result, buf []byte, data func(p []byte, off int64)) {
	str, err := b.send(c, req, r)
	b.receive(str, err, r, buf, data)
}

// send makes req on a new stream of c, within the read deadline.
func (b *base) send(c *conn, req *http.Request, r *result) (*http3.RequestStream, error) {
	r.sent = time.Now()
	deadline := r.sent.Add(b.args.Request.ReadTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	str, err := c.cc.OpenRequestStream(ctx)
	cancel()
	if err != nil {
		return nil, err
	}
	_ = str.SetDeadline(deadline)
	// The request has no body: FIN after its header section. A server
	// that answered already may have stopped the request side
	// (STOP_SENDING), which fails the FIN but not the response.
	if err = str.SendRequestHeader(req); err == nil {
		_ = str.Close()
	}
	return str, err
}

// receive reads the whole response to the request send made on str (err:
// send's) into r, each read within the read deadline and the body within
// the size expected (else maxBody); data, if set, sees the body.
func (b *base) receive(str *http3.RequestStream, err error, r *result, buf []byte, data func(p []byte, off int64)) {
	rt := b.args.Request.ReadTimeout
	var rsp *http.Response
	if err == nil {
		rsp, err = str.ReadResponse()
	}
	if err != nil {
		r.last, r.err = time.Now(), err
		if str != nil {
			str.CancelRead(quic.StreamErrorCode(http3.ErrCodeRequestCanceled))
		}
		return
	}
	defer rsp.Body.Close() // a body not read to its end is cancelled (H3_REQUEST_CANCELLED)
	r.first, r.status, r.server = time.Now(), rsp.StatusCode, rsp.Header.Get("Server")
	limit := b.maxBody
	if r.want >= 0 {
		limit = r.want
	}
	for {
		_ = str.SetReadDeadline(time.Now().Add(rt))
		n, err := rsp.Body.Read(buf)
		if n > 0 && data != nil {
			data(buf[:n], r.body)
		}
		r.body += int64(n)
		switch {
		case r.body > limit:
			r.err = protocol.Fail(vocab.ClassBodySize, "body above the %d bytes expected", limit)
		case err == io.ErrUnexpectedEOF && rsp.ContentLength > r.body: // http3's check
			r.err = protocol.Fail(vocab.ClassBodySize, "body of %d bytes, content-length %d", r.body, rsp.ContentLength)
		case err != nil && err != io.EOF:
			r.err = err
		}
		if r.err != nil || err != nil {
			break
		}
	}
	r.last = time.Now()
	switch {
	case r.err != nil:
	case r.status != http.StatusOK:
		r.err = protocol.Fail(vocab.ClassStatus, "status %d", r.status)
	case rsp.ContentLength >= 0 && r.body != rsp.ContentLength:
		r.err = protocol.Fail(vocab.ClassBodySize, "body of %d bytes, content-length %d", r.body, rsp.ContentLength)
	case r.want >= 0 && r.body != r.want:
		r.err = protocol.Fail(vocab.ClassBodySize, "body of %d bytes, expected %d", r.body, r.want)
	}
}

// ended reports whether the device ended c before answering r: it closed
// the connection, or sent a GOAWAY (http3's unexported errGoAway, known by
// its message) before r's stream was opened.
func (c *conn) ended(r *result) bool {
	return r.err != nil && r.first.IsZero() &&
		(c.qc.Context().Err() != nil || r.err.Error() == "connection in graceful shutdown")
}

// end fills s from r: the phases from the request to the response's
// header section (ttfb) and on to its end (transfer), RFC 9411's TTFB and
// TTLB from t0 (the transaction's first packet), the body, the failure.
func (r *result) end(s *metrics.Sample, t0 time.Time) {
	s.Object, s.Payload = uint16(r.obj+1), r.body
	if !r.first.IsZero() {
		s.Dur[vocab.PhaseTTFB] = r.first.Sub(r.sent)
		s.Dur[vocab.PhaseTransfer] = r.last.Sub(r.first)
		s.RFCTTFB = r.first.Sub(t0)
		if r.err == nil {
			s.RFCTTLB = r.last.Sub(t0)
		}
	}
	if r.err != nil && s.Class == "" {
		s.Class, s.Err = classOf(r.err, true), r.err
	}
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// classOf is err's class: a verification's (tlsconn's), QUIC's and
// HTTP/3's own, a TLS alert the server sent, a closed port (refused), a
// deadline; response: err came after the handshake (an error of no other
// class is then HTTP/3's).
func classOf(err error, response bool) vocab.Class {
	if ce, ok := errors.AsType[*protocol.Classed](err); ok {
		return ce.Class
	}
	var me *profiles.MismatchError
	if errors.As(err, &me) || errors.Is(err, profiles.ErrResumed) || errors.Is(err, profiles.ErrNotResumed) {
		return tlsconn.Class(err)
	}
	if te, ok := errors.AsType[*quic.TransportError](err); ok {
		return transportClass(te)
	}
	stage := engine.StageHandshake
	if response {
		stage = engine.StageResponse
	}
	switch c := engine.Classify(stage, err); {
	case isType[*quic.VersionNegotiationError](err):
		return vocab.ClassQUICVersion
	case isType[*quic.StatelessResetError](err):
		return vocab.ClassQUICStatelessReset
	case isType[*quic.HandshakeTimeoutError](err):
		return vocab.ClassQUICHandshakeTimeout
	case isType[*quic.IdleTimeoutError](err):
		if response {
			return vocab.ClassReadTimeout
		}
		return vocab.ClassQUICHandshakeTimeout
	case isType[*http3.Error](err), isType[*quic.ApplicationError](err), isType[*quic.StreamError](err):
		return vocab.ClassH3
	case c == vocab.ClassOther && response:
		return vocab.ClassH3
	default:
		return c
	}
}

func isType[T error](err error) bool {
	_, ok := errors.AsType[T](err)
	return ok
}

// transportClass is the class of a CONNECTION_CLOSE with a transport
// error code: no_application_protocol is a mismatch (the server does not
// speak h3), another TLS alert the server sent its tls_alert class, the
// client's own TLS failure (a certificate) its class, else
// quic_transport_error.
func transportClass(te *quic.TransportError) vocab.Class {
	code := uint64(te.ErrorCode)
	switch {
	case code == noApplicationProtocol:
		return vocab.ClassMismatch
	case code >= 0x100 && code < 0x200 && te.Remote:
		return engine.Classify(engine.StageHandshake, tls.AlertError(code-0x100))
	case code >= 0x100 && code < 0x200:
		for _, e := range te.Unwrap() {
			if e != nil && e != net.ErrClosed {
				if c := tlsconn.Class(e); c != vocab.ClassOther {
					return c
				}
			}
		}
	}
	return vocab.ClassQUICTransport
}
