// Package httpreq builds the HTTP requests of the engines' operations: the
// request head (Request), compiled once per run (Compiled) and generated per
// request, its header values regenerated from templates (Template) with a
// worker's own random source (Gen).
package httpreq

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Defaults returns the default request of every command for path: any
// body size, 10 s for the first byte and each read after it, User-Agent
// tlsbench.
func Defaults(path string) Request {
	return Request{Path: path, ExpectSize: -1, ReadTimeout: 10 * time.Second, UserAgent: "tlsbench"}
}

// Request is the HTTP side the operations share: what to ask for and what
// to accept. Header values may hold templates, regenerated per request:
// {{random.base64 N}} and {{random.hex N}} (N random bytes, encoded),
// {{seq}} (the run's request number, from 1) and {{uuid}} (a random UUID).
type Request struct {
	Host string `json:"host"` // Host header
	Path string `json:"path"` // request path, with its query
	// Paths, if set, replaces Path: requests go through them in turn, or
	// at random with RandomPath.
	Paths      []string    `json:"paths,omitempty"`
	RandomPath bool        `json:"random_path,omitempty"`
	Headers    [][2]string `json:"headers,omitempty"` // extra request headers (values may be templates)
	// ExpectSize, if non-negative, is the only acceptable body size.
	ExpectSize int64  `json:"expect_size"`
	UserAgent  string `json:"user_agent"`
	// ReadTimeout bounds the wait for the first byte and each read after it.
	ReadTimeout time.Duration `json:"read_timeout"`
	// Objects, if set, replaces Path and Paths: each request draws one
	// object by weight, asks for it at ObjectPath with {size} replaced by
	// its size in bytes (or at its own Path), and its body must have that
	// size (objects.go).
	Objects    []Object `json:"objects,omitempty"`
	ObjectPath string   `json:"object_path,omitempty"` // default DefaultObjectPath
}

// Validate reports the first setting out of its domain, a *vocab.FieldError.
func (r *Request) Validate() error {
	switch {
	case r.ExpectSize < -1:
		return &vocab.FieldError{Field: "expect_size", Value: r.ExpectSize, Want: "be a size in bytes (0 or more; -1: any)"}
	case r.ReadTimeout <= 0:
		return &vocab.FieldError{Field: "read_timeout", Value: r.ReadTimeout, Want: "be positive"}
	}
	return r.validateObjects()
}

// Compiled is a request ready to be generated; it is safe for concurrent
// use, each goroutine with its own Gen.
type Compiled struct {
	static  []byte   // the whole head, when nothing varies
	before  []string // per path: "GET <path> <proto>\r\nHost: …\r\n…Accept: */*\r\n"
	headers []compiledHeader
	random  bool
	sizes   []int64 // per object (before is per object then), or nil
	pick    *picker // draws an object when there are several
	seq     atomic.Uint64
	turn    atomic.Uint64
}

type compiledHeader struct {
	name string
	tpl  *template
}

// Compile checks the templates and prepares the request.
func (r *Request) Compile(proto, addr string) (*Compiled, error) {
	host := r.Host
	if host == "" {
		host = addr
	}
	paths := r.Paths
	if len(paths) == 0 {
		paths = []string{r.Path}
	}
	c := &Compiled{random: r.RandomPath}
	if len(r.Objects) > 0 {
		paths, c.random = make([]string, len(r.Objects)), false
		weights := make([]float64, len(r.Objects))
		for i, o := range r.Objects {
			paths[i], weights[i] = o.ObjectURLPath(r.ObjectPath), o.Weight
			c.sizes = append(c.sizes, o.Size)
		}
		if len(weights) > 1 {
			c.pick = newPicker(weights)
		}
	}
	for _, p := range paths {
		c.before = append(c.before, fmt.Sprintf("GET %s %s\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: "+
			"*/*\r\n", p, proto, host, r.UserAgent))
	}
	dynamic := len(paths) > 1
	for _, h := range r.Headers {
		t, err := ParseTemplate(h[1])
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", h[0], err)
		}
		dynamic = dynamic || !t.Static()
		c.headers = append(c.headers, compiledHeader{name: h[0], tpl: t})
	}
	if !dynamic {
		c.static = c.generate(nil, nil, 0, 0)
	}
	return c, nil
}

// Static reports whether every request is the same.
func (c *Compiled) Static() bool { return c.static != nil }

// Gen is one goroutine's random source for generating requests.
type Gen struct{ rng *rand.Rand }

// NewGen returns a generator seeded from seed.
func NewGen(seed uint64) *Gen { return &Gen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

// Append appends the next request's head to dst; g may be nil for a static
// request.
func (c *Compiled) Append(dst []byte, g *Gen) []byte {
	dst, _ = c.AppendObject(dst, g)
	return dst
}

// Objects returns how many objects the request draws from (0: none, the
// request has a path).
func (c *Compiled) Objects() int { return len(c.sizes) }

// ObjectSize returns the size of object i (AppendObject's), or -1 when
// the request has no objects.
func (c *Compiled) ObjectSize(i int) int64 {
	if i < 0 || i >= len(c.sizes) {
		return -1
	}
	return c.sizes[i]
}

// AppendObject is Append, which also returns the index of the object the
// request drew by weight with g's random source (-1 without objects).
func (c *Compiled) AppendObject(dst []byte, g *Gen) ([]byte, int) {
	obj := -1
	if c.sizes != nil {
		obj = 0
	}
	if c.static != nil {
		return append(dst, c.static...), obj
	}
	i := 0
	if c.pick != nil {
		i = c.pick.pick(g.rng)
		obj = i
	} else if n := len(c.before); n > 1 {
		if c.random {
			i = g.rng.IntN(n)
		} else {
			i = int((c.turn.Add(1) - 1) % uint64(n))
		}
	}
	return c.generate(dst, g, i, c.seq.Add(1)), obj
}

// generate writes the head for path number path; seq is the request's
// number.
func (c *Compiled) generate(dst []byte, g *Gen, path int, seq uint64) []byte {
	dst = append(dst, c.before[path]...)
	for _, h := range c.headers {
		dst = append(dst, h.name...)
		dst = append(dst, ": "...)
		dst = h.tpl.append(dst, g, seq)
		dst = append(dst, "\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// template is a header value with generated parts.
type template struct {
	parts []tplPart
}

type tplPart struct {
	lit  string
	kind string // "" for a literal
	n    int
}

// maxRandom bounds N in {{random.* N}}.
const maxRandom = 1 << 20

// ParseTemplate parses a header value; see Request.
func ParseTemplate(s string) (*template, error) {
	t := &template{}
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if strings.Contains(rest, "}}") {
				return nil, fmt.Errorf("bad template %q: }} without {{", s)
			}
			if rest != "" {
				t.parts = append(t.parts, tplPart{lit: rest})
			}
			return t, nil
		}
		if i > 0 {
			if strings.Contains(rest[:i], "}}") {
				return nil, fmt.Errorf("bad template %q: }} without {{", s)
			}
			t.parts = append(t.parts, tplPart{lit: rest[:i]})
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("bad template %q: {{ is not closed", s)
		}
		expr := strings.Fields(rest[i+2 : i+j])
		rest = rest[i+j+2:]
		p, err := parseExpr(expr)
		if err != nil {
			return nil, fmt.Errorf("bad template %q: %v", s, err)
		}
		t.parts = append(t.parts, p)
	}
}

func parseExpr(f []string) (tplPart, error) {
	const known = "known: {{random.base64 N}}, {{random.hex N}}, {{seq}}, {{uuid}}"
	if len(f) == 0 {
		return tplPart{}, fmt.Errorf("empty {{}} (%s)", known)
	}
	switch f[0] {
	case "seq", "uuid":
		if len(f) != 1 {
			return tplPart{}, fmt.Errorf("{{%s}} takes no argument", f[0])
		}
		return tplPart{kind: f[0]}, nil
	case "random.base64", "random.hex":
		if len(f) != 2 {
			return tplPart{}, fmt.Errorf("{{%s N}} needs the number of random bytes", f[0])
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > maxRandom {
			return tplPart{}, fmt.Errorf("{{%s %s}}: N must be 1 to %d", f[0], f[1], maxRandom)
		}
		return tplPart{kind: f[0], n: n}, nil
	}
	return tplPart{}, fmt.Errorf("unknown {{%s}} (%s)", strings.Join(f, " "), known)
}

// Static reports whether the template has no generated part.
func (t *template) Static() bool {
	for _, p := range t.parts {
		if p.kind != "" {
			return false
		}
	}
	return true
}

func (t *template) append(dst []byte, g *Gen, seq uint64) []byte {
	for _, p := range t.parts {
		switch p.kind {
		case "":
			dst = append(dst, p.lit...)
		case "seq":
			dst = strconv.AppendUint(dst, seq, 10)
		case "uuid":
			var b [16]byte
			fill(g, b[:])
			b[6] = b[6]&0x0f | 0x40
			b[8] = b[8]&0x3f | 0x80
			h := hex.EncodeToString(b[:])
			dst = append(dst, h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:]...)
		case "random.base64", "random.hex":
			raw := make([]byte, p.n)
			fill(g, raw)
			if p.kind == "random.hex" {
				dst = hex.AppendEncode(dst, raw)
			} else {
				dst = base64.StdEncoding.AppendEncode(dst, raw)
			}
		}
	}
	return dst
}

func fill(g *Gen, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := g.rng.Uint64()
		for j := i; j < len(b) && j < i+8; j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
}
