package target

import (
	"bytes"
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

func (b bodies) serve(ctx *fasthttp.RequestCtx, path []byte) {
	size, ok := objectSize(path)
	if !ok {
		if bytes.HasPrefix(path, []byte("/bytes/")) {
			_, err := httpreq.ParseSize(string(path[len("/bytes/"):]))
			ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			return
		}
		ctx.Error("not found; objects: /1k, /1m, /bytes/N[k|m|g], /stats", fasthttp.StatusNotFound)
		return
	}
	ctx.SetContentType("application/octet-stream")
	if size <= maxPrealloc {
		ctx.Response.SetBodyRaw(b[:size]) // no copy
		return
	}
	ctx.Response.SetBodyStream(&patternReader{left: size}, int(size))
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
