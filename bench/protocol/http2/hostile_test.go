package http2_test

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"net"
	"net/textproto"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/internal/rawtls"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// rawH2 is a hostile HTTP/2 server: its framer, over the connection, and
// the client's requests read so far.
type rawH2 struct {
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
}

// headers writes a response's HEADERS for stream id: :status, then the
// fields given as name, value pairs.
func (h *rawH2) headers(id uint32, end bool, status string, kv ...string) {
	h.buf.Reset()
	_ = h.enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
	for i := 0; i+1 < len(kv); i += 2 {
		_ = h.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	_ = h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.buf.Bytes(), EndHeaders: true,
		EndStream: end})
}

// request reads the client's frames up to its next request's HEADERS and
// returns its stream; 0 when the connection ended.
func (h *rawH2) request() uint32 {
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return 0
		}
		if f, ok := f.(*http2.MetaHeadersFrame); ok {
			return f.StreamID
		}
	}
}

// serveRaw starts a server speaking h2 whose every connection is given
// to serve after the preface and the server's SETTINGS (settings).
func serveRaw(t *testing.T, settings []http2.Setting, serve func(h *rawH2)) (string, *cipher.CA) {
	p, _ := profiles.Builtin().Get(testProfile)
	addr, ca := rawtls.ServeWith(t, p.Speaking("h2"), nil, func(c net.Conn, _ *textproto.Reader) {
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
			return
		}
		h := &rawH2{fr: http2.NewFramer(c, c)}
		h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		h.enc = hpack.NewEncoder(&h.buf)
		_ = h.fr.WriteSettings(settings...)
		serve(h)
		for h.request() != 0 { // until the client closes
		}
	})
	return addr, ca
}

// TestHostileServers: what a hostile HTTP/2 server sends lands in a clear
// class, named by its code, and neither hangs the run nor grows the
// generator's memory.
func TestHostileServers(t *testing.T) {
	chunk := bytes.Repeat([]byte("x"), 16<<10)
	for _, tc := range []struct {
		name     string
		engine   vocab.Engine
		perConn  int // requests per connection
		settings []http2.Setting
		serve    func(h *rawH2)
		class    vocab.Class
		naming   string
	}{
		{name: "malformed frame", class: vocab.ClassH2Protocol, naming: "FRAME_SIZE_ERROR",
			serve: func(h *rawH2) {
				h.request()
				_ = h.fr.WriteRawFrame(http2.FrameSettings, 0, 0, []byte{1, 2, 3}) // not a multiple of 6
			}},
		{name: "huge header block", class: vocab.ClassHeaderSize, naming: "header list",
			serve: func(h *rawH2) {
				id := h.request()
				h.buf.Reset()
				_ = h.enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				for i := 0; i < 400; i++ { // 400 KiB
					_ = h.enc.WriteField(hpack.HeaderField{Name: "x-big-" + strconv.Itoa(i), Value: string(chunk[:1<<10])})
				}
				block := h.buf.Bytes()
				_ = h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block[:16<<10]})
				for block = block[16<<10:]; len(block) > 0; {
					k := min(len(block), 16<<10)
					if h.fr.WriteContinuation(id, k == len(block), block[:k]) != nil {
						return
					}
					block = block[k:]
				}
			}},
		{name: "endless stream", class: vocab.ClassBodySize, naming: "body above",
			serve: func(h *rawH2) {
				id := h.request()
				h.headers(id, false, "200")
				for i := 0; i < 4096; i++ { // 64 MiB at most, above the 16 MiB cap
					if h.fr.WriteData(id, false, chunk) != nil {
						return
					}
				}
			}},
		{name: "window of 0", settings: []http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 0}},
			serve: func(h *rawH2) { // a GET sends no DATA: the server's window of 0 never holds it
				id := h.request()
				h.headers(id, false, "200", "content-length", "1024")
				_ = h.fr.WriteData(id, true, chunk[:1024])
			}},
		{name: "stalled stream", class: vocab.ClassReadTimeout, naming: "stalled",
			serve: func(h *rawH2) {
				id := h.request()
				h.headers(id, false, "200", "content-length", "1024")
				_ = h.fr.WriteData(id, false, chunk[:512])
				time.Sleep(3 * time.Second) // the rest never comes
			}},
		{name: "SETTINGS flood", class: vocab.ClassH2Protocol, naming: "ENHANCE_YOUR_CALM",
			serve: func(h *rawH2) {
				h.request()
				for i := 0; i < 100000 && h.fr.WriteSettings() == nil; i++ {
				}
			}},
		{name: "RST_STREAM", class: vocab.ClassH2StreamReset, naming: "RST_STREAM INTERNAL_ERROR",
			serve: func(h *rawH2) { _ = h.fr.WriteRSTStream(h.request(), http2.ErrCodeInternal) }},
		{name: "GOAWAY", class: vocab.ClassH2GoAway, naming: "GOAWAY ENHANCE_YOUR_CALM",
			serve: func(h *rawH2) { // the stream was taken (last stream), then the connection ended
				_ = h.fr.WriteGoAway(h.request(), http2.ErrCodeEnhanceYourCalm, []byte("calm"))
			}},
		{name: "GOAWAY unanswered", class: vocab.ClassH2GoAway, naming: "GOAWAY NO_ERROR",
			serve: func(h *rawH2) { h.request(); _ = h.fr.WriteGoAway(0, http2.ErrCodeNo, nil) }},
		{name: "GOAWAY after each response, cps 3 per connection", perConn: 3, serve: func(h *rawH2) {
			id := h.request() // the next stream is refused: the client asks again on a new connection
			h.headers(id, false, "200", "content-length", "1024")
			_ = h.fr.WriteData(id, true, chunk[:1024])
			_ = h.fr.WriteGoAway(id, http2.ErrCodeNo, nil)
		}},
		{name: "RST_STREAM, throughput", engine: vocab.EngineThroughput, class: vocab.ClassH2StreamReset,
			naming: "RST_STREAM REFUSED_STREAM", serve: func(h *rawH2) {
				for id := h.request(); id != 0; id = h.request() {
					_ = h.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
				}
			}},
		{name: "body above its content-length, throughput", engine: vocab.EngineThroughput,
			class: vocab.ClassBodySize, naming: "above its content-length", serve: func(h *rawH2) {
				for id := h.request(); id != 0; id = h.request() {
					h.headers(id, false, "200", "content-length", "1024")
					for i := 0; i < 8 && h.fr.WriteData(id, false, chunk) == nil; i++ {
					}
				}
			}},
		{name: "RST_STREAM midway, throughput", engine: vocab.EngineThroughput, class: vocab.ClassH2StreamReset,
			naming: "RST_STREAM INTERNAL_ERROR", serve: func(h *rawH2) {
				// 1 MiB promised, 448 KiB sent: the client's SO_RCVLOWAT
				// (conn.wake) waits for bytes that never come; the reset
				// is read when that wait times out, not as a stall.
				for id := h.request(); id != 0; id = h.request() {
					h.headers(id, false, "200", "content-length", strconv.Itoa(1<<20))
					for i := 0; i < 28 && h.fr.WriteData(id, false, chunk) == nil; i++ {
					}
					_ = h.fr.WriteRSTStream(id, http2.ErrCodeInternal)
				}
			}},
		{name: "GOAWAY after 3 streams, throughput", engine: vocab.EngineThroughput, serve: func(h *rawH2) {
			for i := 0; i < 3; i++ { // as nginx's keepalive_requests does
				id := h.request()
				h.headers(id, false, "200", "content-length", "1024")
				_ = h.fr.WriteData(id, true, chunk[:1024])
				if i == 2 {
					_ = h.fr.WriteGoAway(id, http2.ErrCodeNo, nil)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, ca := serveRaw(t, tc.settings, tc.serve)
			e := cmp.Or(tc.engine, vocab.EngineCPS)
			a := args(e, addr, ca.Pool())
			a.Request.Path, a.RequestsPerConn = "/", tc.perConn
			op := build(t, e, a)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2,
				Duration: 500 * time.Millisecond, Drain: 10 * time.Second}}, op)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("run took %s", took)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 16<<20 {
				t.Errorf("heap grew by %d MiB", grown>>20)
			}
			s := res.Snapshot
			t.Logf("ok %d, errors %v %v", s.AllOK, s.Errors, s.Examples)
			if tc.class == "" {
				if s.AllErrors != 0 || s.AllOK == 0 {
					t.Errorf("ok %d, errors %v", s.AllOK, s.Errors)
				}
				if r, ok := op.(interface{ Reconnects() int64 }); ok && r.Reconnects() < s.AllOK/3-2 {
					t.Errorf("%d reconnections for %d streams, 3 per connection", r.Reconnects(), s.AllOK)
				}
				return
			}
			if s.AllOK != 0 || len(s.Errors) != 1 || s.Errors[tc.class] == 0 ||
				!strings.Contains(s.Examples[tc.class], tc.naming) {
				t.Errorf("errors %v %v, want only %s naming %q", s.Errors, s.Examples, tc.class, tc.naming)
			}
		})
	}
}
