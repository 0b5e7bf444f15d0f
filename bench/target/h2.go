package target

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
)

// HTTP/2 (RFC 9113) on the TLS listeners. A listener offers h2, then
// http/1.1, by ALPN (a profile that expects one alpn offers that one
// only; one that cannot negotiate TLS 1.2 offers none, as before: RFC
// 9113 §9.2), so a client that offers no ALPN gets HTTP/1.1 as ever. fasthttp
// hands the connections that negotiated h2 (Server.NextProto, after the
// counted handshake) to golang.org/x/net/http2's Server, whose handler
// routes the requests as HTTP/1's does (Target.route): same objects,
// counters and faults. The plain listeners (Config.Plain, Backends) speak
// HTTP/1.x only.
//
// The settings (h2Base.HTTP2, which x/net's Server reads):
//   - 1024 concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS),
//     so that a client's streams, not the target, bound a run;
//   - receive windows of 1 MiB per stream and per connection (x/net's
//     defaults: a GET has no body, and the connection's window bounds the
//     memory a client's bodies can take);
//   - sending goes as fast as the client's windows let it (its
//     SETTINGS_INITIAL_WINDOW_SIZE and WINDOW_UPDATEs), in DATA frames of
//     its SETTINGS_MAX_FRAME_SIZE (16 KiB by default): a client that opens
//     1 MiB per stream, and streams × 1 MiB on the connection, gets 1 MiB
//     objects without waiting for a WINDOW_UPDATE;
//   - HTTP/1's timeouts: a connection idle 60 s gets a GOAWAY (h2Server);
//     a response not written in 30 s (flow control stalled) is reset, the
//     30 s counted from its HEADERS when the target delays it; a write
//     that makes no progress for 30 s ends the connection;
//   - the suites RFC 9113 Appendix A prohibits are served (the RFC's MAY):
//     the profile chooses the suite, as over HTTP/1.1.
//
// No log lines: they would go to the standard logger. No ReadTimeout: it
// would arm a timer per stream for request bodies, which are never read.
var h2Base = &http.Server{WriteTimeout: 30 * time.Second, ErrorLog: quiet,
	HTTP2: &http.HTTP2Config{
		MaxConcurrentStreams:          h2MaxStreams,
		MaxReceiveBufferPerConnection: 1 << 20,
		MaxReceiveBufferPerStream:     1 << 20,
		WriteByteTimeout:              30 * time.Second,
		PermitProhibitedCipherSuites:  true,
	}}

// h2MaxStreams is the concurrent streams a connection may open.
const h2MaxStreams = 1024

// h2Server serves the connections that negotiate h2. x/net deprecates its
// Server for net/http's, which cannot be handed one connection (fasthttp
// accepted it, and its wrapper counted the handshake); from Go 1.27,
// x/net's ServeConn serves with net/http's. Its idle timeout is its own.
//
//lint:ignore SA1019 see above
var h2Server = &http2.Server{IdleTimeout: 60 * time.Second}

// connKey is the context key of an HTTP/2 request's *tlsConn.
type connKey struct{}

// serveH2 makes tl offer h2 by ALPN and returns the server of the
// connections that negotiate it; nil when tl does not offer it.
func (t *Target) serveH2(tl *tlsListener) fasthttp.ServeHandler {
	switch {
	case len(tl.cfg.NextProtos) == 0 && (tl.cfg.MaxVersion == 0 || tl.cfg.MaxVersion >= tls.VersionTLS12):
		tl.cfg.NextProtos = []string{"h2", "http/1.1"}
	case len(tl.cfg.NextProtos) == 0 || tl.cfg.NextProtos[0] != "h2":
		return nil
	}
	h := h2Handler{t: t, l: tl.l, n: &tl.l.requestsH2}
	return func(nc net.Conn) error {
		c := nc.(*tlsConn)
		stop := context.AfterFunc(t.ctx, func() { _ = c.raw.Close() }) // Close ends the connection
		defer stop()
		//lint:ignore SA1019 see h2Server
		h2Server.ServeConn(c, &http2.ServeConnOpts{Context: context.WithValue(t.ctx, connKey{}, c),
			BaseConfig: h2Base, Handler: h})
		return nil
	}
}

// h2Handler serves listener l's HTTP/2 (and HTTP/3) requests, counted in n.
type h2Handler struct {
	t *Target
	l *Listener
	n *atomic.Int64
}

func (h h2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := r.Context().Value(connKey{}).(*tlsConn)
	if m := h.t.cfg.MaxRequestsPerConn; m > 0 && !c.quic && c.served.Add(1) == int64(m) {
		// x/net's server sends a GOAWAY for it, and closes the
		// connection once the streams opened before it are done.
		w.Header().Set("Connection", "close")
	}
	var rc *http.ResponseController
	if cfg := &h.t.cfg; cfg.Delay > 0 || cfg.DelayRamp > 0 || cfg.DelayJitter > 0 || c.fault == "slow" {
		// The delay is not the write's, as over HTTP/1 (x/net's write
		// deadline runs from the stream's start): head sets it.
		rc = http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
	}
	h.t.route(h2Reply{w, r, rc}, h.l, c, []byte(r.URL.Path), h.n)
}

// h2Reply writes HTTP/2 responses, with the headers HTTP/1's carry.
type h2Reply struct {
	w  http.ResponseWriter
	r  *http.Request
	rc *http.ResponseController // with a delay: the write deadline to set
}

// head writes the response's HEADERS.
func (r h2Reply) head(status int, ctype string, size int64) {
	if r.rc != nil {
		_ = r.rc.SetWriteDeadline(time.Now().Add(h2Base.WriteTimeout))
	}
	h := r.w.Header()
	h["Server"] = []string{"tlsbench"}
	h["Content-Type"] = []string{ctype}
	h["Content-Length"] = []string{strconv.FormatInt(size, 10)}
	r.w.WriteHeader(status)
}

func (r h2Reply) object(b bodies, size int64, ctype string) {
	if ctype == "" {
		ctype = "text/plain; charset=utf-8"
	}
	r.head(http.StatusOK, ctype, size)
	if size <= maxPrealloc {
		_, _ = r.w.Write(b[:size])
		return
	}
	_, _ = io.Copy(r.w, &patternReader{left: size})
}

func (r h2Reply) fail(msg string, status int) {
	r.head(status, "text/plain; charset=utf-8", int64(len(msg)))
	_, _ = io.WriteString(r.w, msg)
}

func (r h2Reply) json(v any) {
	b := jsonBody(v)
	r.head(http.StatusOK, "application/json", int64(len(b)))
	_, _ = r.w.Write(b)
}

// cut ends the connection as HTTP/1's cut does: the response's HEADERS
// and half its DATA then a FIN, or the whole response (END_STREAM) then a
// RST. The connection's other streams end with it, without a response:
// the fault is the connection's.
func (r h2Reply) cut(c *tlsConn, body []byte, rst bool) {
	if c.cut.Swap(true) {
		<-r.r.Context().Done() // done when the connection ends
		return
	}
	r.head(http.StatusOK, "application/octet-stream", int64(len(body)))
	if !rst {
		body = body[:len(body)/2]
	}
	_, _ = r.w.Write(body)
	r.w.(http.Flusher).Flush()
	if rst {
		go c.endAfterWrites(true) // after END_STREAM, written once ServeHTTP returns
		return
	}
	c.endAfterWrites(false)
}

// endAfterWrites closes c's TCP connection (rst: with a RST) once its
// writes have stopped for cutQuiet, at most cutMax after the call: x/net's
// server writes and flushes the frames a handler wrote from its own
// goroutine, soon after.
func (c *tlsConn) endAfterWrites(rst bool) {
	last := c.wrote.Load()
	for i := 0; i < int(cutMax/cutQuiet); i++ {
		if time.Sleep(cutQuiet); c.wrote.Load() == last {
			break
		}
		last = c.wrote.Load()
	}
	if rst {
		resetClose(c.raw.Conn)
		return
	}
	_ = c.raw.Close()
}

const (
	cutQuiet = 50 * time.Millisecond
	cutMax   = time.Second
)
