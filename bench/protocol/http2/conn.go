package http2

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// The flow-control windows the client opens to the server (RFC 9113 §6.9):
// 2^30−1 bytes for each stream (SETTINGS_INITIAL_WINDOW_SIZE) and for the
// connection (a WINDOW_UPDATE after the preface), h2load's defaults (its
// -w 30 -W 30). A 1 MiB object fits its stream's window a thousand times,
// so no server ever waits for a WINDOW_UPDATE: the windows are given back
// (WINDOW_UPDATE) whenever half of one has been consumed.
const (
	streamWindow = 1<<30 - 1
	connWindow   = 1<<30 - 1
	// maxHeaderList bounds a response's header list (decoded, as
	// SETTINGS_MAX_HEADER_LIST_SIZE counts it) and each of its strings:
	// above it, the response is a header_size error.
	maxHeaderList = 64 << 10
	// maxFrame is the largest frame read or written (the protocol's
	// default SETTINGS_MAX_FRAME_SIZE, which the client does not raise):
	// the framer's one read buffer.
	maxFrame = 16 << 10
	// maxIdleFrames bounds the frames in a row that bring no response
	// data (SETTINGS, PING, WINDOW_UPDATE, empty DATA, 1xx HEADERS…): a
	// flood of them would hold a transaction forever, each within its
	// deadline, and the ACKs the client owes pile up.
	maxIdleFrames = 1000
	// readAhead bounds the response bytes the socket may already have
	// given up while a read waits: a partial record in crypto/tls's
	// buffer (16 KiB and its overhead) and the frame under way (maxFrame).
	readAhead = 48 << 10
)

// lowats are the levels of SO_RCVLOWAT the client sets (conn.wake), from
// the highest; below them, the kernel's default (a byte).
var lowats = [...]int{256 << 10, 64 << 10}

// clientSettings are the SETTINGS the client sends after the preface.
var clientSettings = []http2.Setting{{ID: http2.SettingEnablePush, Val: 0},
	{ID: http2.SettingInitialWindowSize, Val: streamWindow}, {ID: http2.SettingMaxHeaderListSize, Val: maxHeaderList}}

// The classes of HTTP/2's own failures; the error names the code
// (http2.ErrCode's name, e.g. PROTOCOL_ERROR).
const (
	classReset    = vocab.ClassH2StreamReset
	classGoAway   = vocab.ClassH2GoAway
	classProtocol = vocab.ClassH2Protocol
)

// classOf is err's class: HTTP/2's own, else the connection's (tlsconn).
func classOf(err error) vocab.Class {
	if ce, ok := errors.AsType[*protocol.Classed](err); ok {
		return ce.Class
	}
	return tlsconn.Class(err)
}

// goAway is a GOAWAY the server sent: streams above Last were not
// processed.
type goAway struct {
	Code  http2.ErrCode
	Last  uint32
	Debug string
}

func (g *goAway) Error() string {
	return fmt.Sprintf("GOAWAY %s (last stream %d)%s", g.Code, g.Last, g.Debug)
}

// stream is one request and its response.
type stream struct {
	id          uint32
	obj         int   // the object it drew (-1: none)
	want        int64 // the body size it expects (-1: any)
	clen        int64 // the response's content-length (-1: none)
	sent, first time.Time
	status      int // the final status (0: not yet)
	body        int64
	unacked     int64 // window consumed and not given back
	err         error // how it ended, if not well
	sum         hash.Hash
	mismatch    bool // the body failed its check
}

// conn is one HTTP/2 connection over a verified TLS connection: a framer
// writing into a buffer that flush sends in one write, and reading through
// the connection's tlsconn.Reader (deadlines, the first byte's arrival).
type conn struct {
	tc      *tlsconn.Conn
	rd      tlsconn.Reader
	timeout time.Duration
	in, out int64 // application bytes read and written on the connection
	wbuf    bytes.Buffer
	hbuf    bytes.Buffer
	fr      *http2.Framer
	enc     *hpack.Encoder
	next    uint32    // the next stream's ID
	ss      []*stream // the streams open
	unacked int64     // connection window consumed and not given back
	idle    int       // frames in a row without response data (maxIdleFrames)
	lowat   int       // the socket's SO_RCVLOWAT (0: the default)
	arrived time.Time // the last socket read's first byte's arrival, if the level was raised (stamp)
	// What the server said: its SETTINGS, whether it acknowledged the
	// client's, its concurrent streams' limit (0: none), its GOAWAY.
	settings   []http2.Setting
	acked      bool
	maxStreams uint32
	goaway     *goAway
	eof        bool   // the server closed the connection
	server     string // the last response's Server header
}

// open starts HTTP/2 on tc: the preface, the client's SETTINGS and the
// connection window's WINDOW_UPDATE are buffered, sent with the first
// request.
func open(tc *tlsconn.Conn, timeout time.Duration) *conn {
	c := &conn{tc: tc, timeout: timeout, next: 1}
	c.rd.Reset(tc, timeout)
	c.fr = http2.NewFramer(&c.wbuf, (*frameReader)(c))
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(maxFrame)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = maxHeaderList
	c.enc = hpack.NewEncoder(&c.hbuf)
	c.wbuf.WriteString(http2.ClientPreface)
	_ = c.fr.WriteSettings(clientSettings...)
	_ = c.fr.WriteWindowUpdate(0, connWindow-65535)
	return c
}

// frameReader is what the framer reads: the connection's Reader, counted.
type frameReader conn

func (r *frameReader) Read(p []byte) (int, error) {
	n, err := r.rd.Read(p)
	if n == 0 && r.lowat > 0 && errors.Is(err, os.ErrDeadlineExceeded) && r.tc.Queued() > 0 {
		// Bytes came, fewer than the server promised (a stream reset
		// midway, a short body): read them (crypto/tls goes on after a
		// timeout).
		(*conn)(r).setLowat(0)
		n, err = r.rd.Read(p)
	}
	r.in += int64(n)
	if errors.Is(err, io.EOF) {
		r.eof = true
	}
	return n, err
}

// flush sends what the framer wrote, within the read timeout.
func (c *conn) flush() error {
	if c.wbuf.Len() == 0 {
		return nil
	}
	_ = c.tc.SetDeadline(time.Now().Add(c.timeout))
	n, err := c.tc.Write(c.wbuf.Bytes())
	c.out += int64(n)
	c.wbuf.Reset()
	return err
}

// request buffers a GET's HEADERS (and CONTINUATIONs), its header block
// encoded from fields, and opens its stream.
func (c *conn) request(fields []hpack.HeaderField, st *stream) error {
	c.hbuf.Reset()
	for _, f := range fields {
		if err := c.enc.WriteField(f); err != nil {
			return err
		}
	}
	st.id, c.next = c.next, c.next+2
	block := c.hbuf.Bytes()
	k := min(len(block), maxFrame)
	err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: block[:k], EndStream: true,
		EndHeaders: k == len(block)})
	for block = block[k:]; len(block) > 0 && err == nil; block = block[k:] {
		k = min(len(block), maxFrame)
		err = c.fr.WriteContinuation(st.id, k == len(block), block[:k])
	}
	c.ss = append(c.ss, st)
	return err
}

// waiting reports whether a stream open has not had its first frame.
func (c *conn) waiting() bool {
	for _, st := range c.ss {
		if st.first.IsZero() {
			return true
		}
	}
	return false
}

// step reads one frame and applies it: the connection's own frames are
// answered (SETTINGS, PING) or noted (GOAWAY), a stream's go to it. It
// returns the stream the frame ended (END_STREAM, RST_STREAM, or a
// response the client refuses), taken out of the open ones, if any. An
// error is the connection's (a *goAway among them: c.goaway).
func (c *conn) step(maxBody int64, data func(*stream, []byte)) (*stream, error) {
	waiting := c.waiting()
	if waiting {
		c.rd.Mark() // the next frame's first byte's arrival
	}
	c.wake()
	raised := c.lowat > 0
	f, err := c.fr.ReadFrame()
	if a := c.rd.First; waiting && !a.IsZero() { // a socket read
		c.arrived = time.Time{}
		if raised {
			c.arrived = a
		}
	}
	if err != nil {
		return nil, c.readError(f, err)
	}
	st, err := c.apply(f, maxBody, data)
	if h := f.Header(); st != nil || h.Type == http2.FrameData && h.Length > 0 {
		c.idle = 0
	} else if c.idle++; c.idle > maxIdleFrames && err == nil {
		err = protocol.Fail(classProtocol, "%d frames in a row without a response's data (ENHANCE_YOUR_CALM)", c.idle)
	}
	return st, err
}

// wake sets how many bytes the kernel queues before it wakes the reader
// (SO_RCVLOWAT). Woken at each record the server writes (16 KiB from
// nginx), the client paid a wake-up per record (a context switch, an epoll
// wait, a read that finds nothing): 40% of its CPU per GB. The level never
// exceeds what the server has promised and not yet sent: the open streams'
// bodies still to come (content-length), less what the socket may already
// have given up (readAhead); the kernel also wakes the reader when the
// server closes. A stream that waits for its first frame promises nothing,
// so with one stream the level is the default (a byte) until its HEADERS;
// with more, the others' bodies keep it raised, and the waiting stream's
// first frame is stamped with the kernel's receive time of the read that
// brought it (stamp), not with the wake-up. A server that breaks its
// promise is read when the read times out with bytes queued (frameReader).
func (c *conn) wake() {
	if level := c.level(); level != c.lowat {
		c.setLowat(level)
	}
}

// level is wake's level for the streams open.
func (c *conn) level() int {
	var promised int64
	for _, st := range c.ss {
		if st.status != 0 && st.clen >= 0 {
			promised += st.clen - st.body
		}
	}
	for _, l := range lowats {
		if promised-readAhead >= int64(l) {
			return l
		}
	}
	return 0
}

func (c *conn) setLowat(n int) {
	c.tc.SetRcvLowat(n)
	c.lowat = n
}

// apply applies frame f (step's).
func (c *conn) apply(f http2.Frame, maxBody int64, data func(*stream, []byte)) (*stream, error) {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		return nil, c.settingsFrame(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			_ = c.fr.WritePing(true, f.Data)
			return nil, c.flush()
		}
	case *http2.GoAwayFrame:
		g := &goAway{Code: f.ErrCode, Last: f.LastStreamID}
		if d := f.DebugData(); len(d) > 0 {
			g.Debug = ": " + strconv.Quote(string(d[:min(len(d), 128)]))
		}
		c.goaway = g
		if g.Code != http2.ErrCodeNo {
			return nil, &protocol.Classed{Class: classGoAway, Err: g}
		}
		for _, st := range c.ss {
			if st.id > g.Last {
				return nil, g
			}
		}
	case *http2.PushPromiseFrame:
		return nil, protocol.Fail(classProtocol, "PUSH_PROMISE with push disabled (PROTOCOL_ERROR)")
	case *http2.RSTStreamFrame:
		if st := c.find(f.StreamID); st != nil {
			return c.end(st, protocol.Fail(classReset, "RST_STREAM %s on stream %d", f.ErrCode, st.id)), nil
		}
	case *http2.MetaHeadersFrame:
		return c.headers(f)
	case *http2.DataFrame:
		return c.data(f, maxBody, data)
	}
	return nil, nil
}

// readError is the connection's error for ReadFrame's.
func (c *conn) readError(f http2.Frame, err error) error {
	var ce http2.ConnectionError
	var se http2.StreamError
	detail := ""
	if d := c.fr.ErrorDetail(); d != nil {
		detail = ": " + d.Error()
	}
	switch {
	case errors.As(err, &ce):
		if mh, ok := f.(*http2.MetaHeadersFrame); ok && mh.Truncated {
			return protocol.Fail(vocab.ClassHeaderSize, "response header list above %d bytes", maxHeaderList)
		}
		return protocol.Fail(classProtocol, "malformed frame: %s%s", http2.ErrCode(ce), detail)
	case errors.As(err, &se):
		return protocol.Fail(classProtocol, "malformed response on stream %d: %s%s", se.StreamID, se.Code, detail)
	case errors.Is(err, http2.ErrFrameTooLarge):
		return protocol.Fail(classProtocol, "frame above %d bytes (FRAME_SIZE_ERROR)", maxFrame)
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() && len(c.ss) > 0 {
		// Stalled: its windows are the client's to open, and they are.
		return fmt.Errorf("stream %d stalled: no frame for %s, %d bytes of the connection's window open: %w",
			c.ss[0].id, c.timeout, connWindow-c.unacked, err)
	}
	return err
}

// settingsFrame notes the server's SETTINGS and acknowledges them.
func (c *conn) settingsFrame(f *http2.SettingsFrame) error {
	if f.IsAck() {
		c.acked = true
		return nil
	}
	_ = f.ForeachSetting(func(s http2.Setting) error {
		i := 0
		for i < len(c.settings) && c.settings[i].ID != s.ID {
			i++
		}
		if i == len(c.settings) {
			c.settings = append(c.settings, s)
		}
		c.settings[i] = s
		switch s.ID {
		case http2.SettingHeaderTableSize:
			c.enc.SetMaxDynamicTableSizeLimit(s.Val)
		case http2.SettingMaxConcurrentStreams:
			c.maxStreams = max(s.Val, 1)
		}
		return nil
	})
	// The ACK goes with the client's next write (a request, a
	// WINDOW_UPDATE, the GOAWAY): a write of its own cost 5% of a CPS
	// transaction's CPU.
	return c.fr.WriteSettingsAck()
}

// find returns the open stream id, or nil.
func (c *conn) find(id uint32) *stream {
	for _, st := range c.ss {
		if st.id == id {
			return st
		}
	}
	return nil
}

// end takes st out of the open streams, ended with err (nil: well).
func (c *conn) end(st *stream, err error) *stream {
	for i, o := range c.ss {
		if o == st {
			c.ss = append(c.ss[:i], c.ss[i+1:]...)
			break
		}
	}
	st.err = err
	return st
}

// abort ends st with err, resetting it (CANCEL) so that the server stops.
func (c *conn) abort(st *stream, err error) (*stream, error) {
	_ = c.fr.WriteRSTStream(st.id, http2.ErrCodeCancel)
	return c.end(st, err), c.flush()
}

// headers applies a response's HEADERS (or trailers) to its stream.
func (c *conn) headers(f *http2.MetaHeadersFrame) (*stream, error) {
	st := c.find(f.StreamID)
	if st == nil {
		return nil, c.unknown(f.StreamID, "HEADERS")
	}
	c.stamp(st)
	switch {
	case f.Truncated:
		return c.abort(st, protocol.Fail(vocab.ClassHeaderSize, "response header list above %d bytes", maxHeaderList))
	case st.status == 0:
		code, err := strconv.Atoi(f.PseudoValue("status"))
		if err != nil || code < 100 || code > 999 {
			return c.abort(st, protocol.Fail(classProtocol, "bad :status %q on stream %d (PROTOCOL_ERROR)",
				f.PseudoValue("status"), st.id))
		}
		if code < 200 {
			return nil, nil // informational: the final response comes next
		}
		st.status, st.clen = code, -1
		c.server = ""
		for _, h := range f.RegularFields() {
			switch h.Name {
			case "server":
				c.server = h.Value
			case "content-length":
				if st.clen, err = strconv.ParseInt(h.Value, 10, 64); err != nil || st.clen < 0 {
					return c.abort(st, protocol.Fail(classProtocol, "bad content-length %q (PROTOCOL_ERROR)", h.Value))
				}
			}
		}
	case !f.StreamEnded():
		return c.abort(st, protocol.Fail(classProtocol, "trailers without END_STREAM on stream %d (PROTOCOL_ERROR)", st.id))
	}
	if f.StreamEnded() {
		return c.ended(st), nil
	}
	return nil, nil
}

// unknown is a frame for a stream that is not open: one the client reset
// or the server ended (ignored), or one the client never opened.
func (c *conn) unknown(id uint32, what string) error {
	if id%2 == 1 && id < c.next {
		return nil
	}
	return protocol.Fail(classProtocol, "%s on stream %d, which the client did not open (PROTOCOL_ERROR)", what, id)
}

// stamp notes when st's first frame came: when the kernel received the
// first byte of the socket read that brought it. A frame crypto/tls had
// already read is stamped now, unless the level was raised (wake) when it
// was read: it came with that read, and the wake-up was put off by design.
func (c *conn) stamp(st *stream) {
	if st.first.IsZero() {
		st.first = cmp.Or(c.rd.First, c.arrived, time.Now())
		if st.first.Before(st.sent) {
			st.first = st.sent // the read began with bytes queued before the request
		}
	}
}

// data applies a DATA frame: the body counted (and given to data, if
// set), the windows given back as they are consumed.
func (c *conn) data(f *http2.DataFrame, maxBody int64, data func(*stream, []byte)) (*stream, error) {
	n := int64(f.Length) // padding included: flow control counts it
	if c.unacked += n; c.unacked >= connWindow/2 {
		_ = c.fr.WriteWindowUpdate(0, uint32(c.unacked))
		c.unacked = 0
		if err := c.flush(); err != nil {
			return nil, err
		}
	}
	st := c.find(f.StreamID)
	if st == nil {
		return nil, c.unknown(f.StreamID, "DATA")
	}
	c.stamp(st)
	if st.status == 0 {
		return c.abort(st, protocol.Fail(classProtocol, "DATA before the response's HEADERS on stream %d (PROTOCOL_ERROR)",
			st.id))
	}
	p := f.Data()
	if data != nil {
		data(st, p)
	}
	st.body += int64(len(p))
	switch {
	case st.clen >= 0 && st.body > st.clen:
		return c.abort(st, protocol.Fail(vocab.ClassBodySize, "body above its content-length of %d bytes", st.clen))
	case st.status == 200 && st.want >= 0 && st.body > st.want:
		return c.abort(st, protocol.Fail(vocab.ClassBodySize, "body above the %d bytes expected", st.want))
	case st.body > maxBody:
		return c.abort(st, protocol.Fail(vocab.ClassBodySize, "body above %d bytes", maxBody))
	case f.StreamEnded():
		return c.ended(st), nil
	}
	if st.unacked += n; st.unacked >= streamWindow/2 {
		_ = c.fr.WriteWindowUpdate(st.id, uint32(st.unacked))
		st.unacked = 0
		return nil, c.flush()
	}
	return nil, nil
}

// ended ends st at its END_STREAM, judging its body's size.
func (c *conn) ended(st *stream) *stream {
	var err error
	switch {
	case st.status != 200:
		err = protocol.Fail(vocab.ClassStatus, "status %d", st.status)
	case st.clen >= 0 && st.body != st.clen:
		err = protocol.Fail(vocab.ClassBodySize, "body of %d bytes, content-length %d", st.body, st.clen)
	case st.want >= 0 && st.body != st.want:
		err = protocol.Fail(vocab.ClassBodySize, "body of %d bytes, expected %d", st.body, st.want)
	}
	return c.end(st, err)
}

// fields appends the HTTP/2 header fields of an HTTP/1 request head
// (httpreq's): the request line and Host become pseudo-header fields, the
// names are lowercased, and the connection-specific fields are dropped
// (RFC 9113 §8.2.2).
func fields(dst []hpack.HeaderField, head []byte) []hpack.HeaderField {
	lines := strings.Split(strings.TrimRight(string(head), "\r\n"), "\r\n")
	method, rest, _ := strings.Cut(lines[0], " ")
	path, _, _ := strings.Cut(rest, " ")
	dst = append(dst, hpack.HeaderField{Name: ":method", Value: method}, hpack.HeaderField{Name: ":scheme",
		Value: "https"}, hpack.HeaderField{Name: ":authority"}, hpack.HeaderField{Name: ":path", Value: path})
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, ":")
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		switch name {
		case "host":
			dst[2].Value = value
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te":
		default:
			dst = append(dst, hpack.HeaderField{Name: name, Value: value})
		}
	}
	return dst
}
