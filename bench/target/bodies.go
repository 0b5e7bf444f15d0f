package target

import (
	"bytes"
	"fmt"
	"io"

	"github.com/valyala/fasthttp"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
)

// PatternPeriod is the period of the deterministic body pattern: byte i of
// every object is Pattern[i%PatternPeriod]. A prime period makes shifted or
// reordered data visible.
const PatternPeriod = 251

// Pattern is one period of the body pattern (printable ASCII).
var Pattern = func() []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	p := make([]byte, PatternPeriod)
	for i := range p {
		p[i] = alphabet[(i*7)%len(alphabet)]
	}
	return p
}()

// maxPrealloc is the largest object served straight from memory; larger
// ones are streamed from the pattern.
const maxPrealloc = 16 << 20

// bodies is maxPrealloc bytes of the pattern.
type bodies []byte

func newBodies() bodies {
	b := make(bodies, maxPrealloc)
	for i := 0; i < len(b); i += PatternPeriod {
		copy(b[i:], Pattern)
	}
	return b
}

// objectSize returns the size of the object at path.
func objectSize(path []byte) (int64, bool) {
	switch {
	case string(path) == "/1k":
		return 1 << 10, true
	case string(path) == "/1m":
		return 1 << 20, true
	case bytes.HasPrefix(path, []byte("/bytes/")):
		n, err := httpreq.ParseSize(string(path[len("/bytes/"):]))
		return n, err == nil
	}
	return 0, false
}

func (b bodies) serve(r reply, path []byte) {
	size, ok := objectSize(path)
	switch {
	case ok:
		r.object(b, size, "application/octet-stream")
	case bytes.HasPrefix(path, []byte("/bytes/")):
		_, err := httpreq.ParseSize(string(path[len("/bytes/"):]))
		r.fail(err.Error(), fasthttp.StatusBadRequest)
	default:
		r.fail("not found; objects: /1k, /1m, /bytes/N[k|m|g], /stats", fasthttp.StatusNotFound)
	}
}

// reply writes a response over one protocol, HTTP/1.x (h1Reply, fasthttp)
// or HTTP/2 (h2Reply), so that both route requests alike (Target.route).
type reply interface {
	// object answers 200 with the first size bytes of the pattern, from
	// b (streamed above maxPrealloc), of type ctype ("": fasthttp's
	// default, text/plain).
	object(b bodies, size int64, ctype string)
	fail(msg string, status int)
	json(v any)
	// cut answers 200 with body's length, then ends the connection c:
	// after half the body with a FIN, or (rst) after all of it with a RST.
	cut(c *tlsConn, body []byte, rst bool)
}

// h1Reply writes HTTP/1.x responses.
type h1Reply struct{ *fasthttp.RequestCtx }

func (r h1Reply) object(b bodies, size int64, ctype string) {
	if ctype != "" {
		r.SetContentType(ctype)
	}
	if size <= maxPrealloc {
		r.Response.SetBodyRaw(b[:size]) // no copy
		return
	}
	r.Response.SetBodyStream(&patternReader{left: size}, int(size))
}

func (r h1Reply) fail(msg string, status int) { r.Error(msg, status) }

func (r h1Reply) json(v any) { writeJSON(r.RequestCtx, v) }

// cut writes the response straight to the connection and closes it under
// fasthttp: its own write then fails and it drops the connection.
// (fasthttp's Hijack does not run for HTTP/1.0.)
func (r h1Reply) cut(c *tlsConn, body []byte, rst bool) {
	if !rst {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))
		_, _ = c.Write(body[:len(body)/2])
		_ = c.raw.Close() // FIN in the middle of the body
		return
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	_, _ = c.Write(body)
	resetClose(c.raw.Conn) // RST instead of FIN
}

// patternReader yields size bytes of the pattern.
type patternReader struct {
	off, left int64
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		i := int(r.off % PatternPeriod)
		c := copy(p[n:min(len(p), n+int(r.left))], Pattern[i:])
		n += c
		r.off += int64(c)
		r.left -= int64(c)
	}
	return n, nil
}
