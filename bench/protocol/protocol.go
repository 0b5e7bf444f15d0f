// Package protocol is the registry of the application protocols that carry
// an engine's transactions. The engine (vocab.Engine: cps, throughput) is
// what is measured; the protocol is how each transaction is carried
// (HTTP/1.1 today). A protocol registers itself (Register, from its
// package's init, as k6's executors do) with its ALPN ID and a builder per
// engine it supports; the runner reads the registry instead of switching on
// names. docs/ARCHITECTURE.md, "Adding a protocol", lists what a new one
// touches.
package protocol

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Default is the protocol of a run that names none.
const Default = vocab.DefaultProtocol

// Op is an engine's operation over a protocol, with what the run's record
// takes from its endpoint (tlsconn.Endpoint's methods).
type Op interface {
	engine.Op
	Negotiated() *metrics.Negotiated
	LeafSHA256() string
	Address() string
	ResumptionMode() string
	ResumeRatio() float64
}

// Args are what an operation is built from: the connection side, the
// request, and the engines' per-connection settings.
type Args struct {
	Conn            tlsconn.Config
	Request         httpreq.Request
	Pipeline        int    // requests in flight per connection (throughput, HTTP/1.1)
	Streams         int    // concurrent streams per connection (throughput, HTTP/2 and later); 0: the default
	RequestsPerConn int    // transactions per connection; 0: the engine's default
	VerifyBody      string // "", "pattern" or "sha256:HEX" (throughput)
}

// Protocol is one registered protocol.
type Protocol struct {
	Name string // as specs and messages name it: "http/1.1"
	ALPN string // its ALPN protocol ID (RFC 7301)
	// OfferALPN: every connection offers and must negotiate ALPN (a
	// profile that names no alpn is given this one). HTTP/1.1 does not:
	// its handshakes stay those tlsbench always made, without ALPN.
	OfferALPN bool
	// Fallback are ALPN IDs offered after ALPN, never accepted: HTTP/2
	// offers h2 then http/1.1, as browsers and h2load do, so that a device
	// without h2 answers http/1.1 and the run fails naming it (a mismatch)
	// rather than with a no_application_protocol alert.
	Fallback []string
	// MinTLS is the lowest TLS version it runs over (a crypto/tls
	// VersionTLS constant; 0: any): HTTP/2 needs TLS 1.2 (RFC 9113 §9.2).
	MinTLS uint16
	// EarlyData: it can send a request as 0-RTT data (the connection
	// settings' EarlyData); a run that asks another protocol is refused.
	EarlyData bool
	// New builds an operation per engine the protocol carries.
	New map[vocab.Engine]func(Args) (Op, error)
	// Check, if set, reports the first of a's settings this protocol
	// cannot do for engine e, a *vocab.FieldError (of a.Conn, only
	// its Settings are set).
	Check func(e vocab.Engine, a *Args) error
}

// Engines returns the engines p carries, in vocab.Engines's order.
func (p *Protocol) Engines() []vocab.Engine {
	var out []vocab.Engine
	for _, e := range vocab.Engines {
		if p.New[e] != nil {
			out = append(out, e)
		}
	}
	return out
}

// Carries reports an engine p does not carry, a *vocab.FieldError.
func (p *Protocol) Carries(e vocab.Engine) error {
	if p.New[e] != nil {
		return nil
	}
	var names []string
	for _, e := range p.Engines() {
		names = append(names, e.String())
	}
	return &vocab.FieldError{Field: "engine", Value: e, Want: "be " + strings.Join(names, " or ")}
}

// Validate reports an engine p does not carry, or a setting its Check
// refuses, as a *vocab.FieldError.
func (p *Protocol) Validate(e vocab.Engine, a *Args) error {
	if err := p.Carries(e); err != nil || p.Check == nil {
		return err
	}
	return p.Check(e, a)
}

// Build validates a and builds engine e's operation over p.
func (p *Protocol) Build(e vocab.Engine, a Args) (Op, error) {
	if err := p.Validate(e, &a); err != nil {
		return nil, err
	}
	return p.New[e](a)
}

var (
	mu       sync.RWMutex
	registry = map[string]*Protocol{}
)

// Register adds p to the registry. A protocol without a name, an ALPN ID or
// an engine, or one registered twice (by name or ALPN ID), is a programming
// error: Register panics.
func Register(p Protocol) {
	mu.Lock()
	defer mu.Unlock()
	if p.Name == "" || p.ALPN == "" || len(p.New) == 0 {
		panic(fmt.Sprintf("protocol.Register: %q needs a name, an ALPN ID and an engine", p.Name))
	}
	for _, q := range registry {
		if q.Name == p.Name || q.ALPN == p.ALPN {
			panic(fmt.Sprintf("protocol.Register: %q (ALPN %q) registered twice", p.Name, p.ALPN))
		}
	}
	registry[p.Name] = &p
}

// Names returns the registered protocols' names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Versions returns the HTTP versions of the registered protocols, sorted
// ("1.1", "2"): what --http and a plan's http take (vocab.HTTPProtocol).
func Versions() []string {
	var vs []string
	for _, n := range Names() {
		if v, ok := strings.CutPrefix(n, "http/"); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// ForVersion returns the protocol of HTTP version v ("": the default); an
// unknown one is a *vocab.FieldError listing Versions.
func ForVersion(v string) (*Protocol, error) {
	p, err := Lookup(vocab.HTTPProtocol(v))
	if err != nil {
		return nil, &vocab.FieldError{Field: "http", Value: v, Want: "be " + strings.Join(Versions(), " or ")}
	}
	return p, nil
}

// Lookup returns the protocol named name (Default when name is ""); an
// unknown name is a *vocab.FieldError listing the registered ones.
func Lookup(name string) (*Protocol, error) {
	if name == "" {
		name = Default
	}
	mu.RLock()
	p := registry[name]
	mu.RUnlock()
	if p == nil {
		return nil, &vocab.FieldError{Field: "protocol", Value: name, Want: "be " + strings.Join(Names(), " or ")}
	}
	return p, nil
}

// CheckALPN reports a profile that requires another ALPN protocol than p's
// (want: the profile's expected one; "": none required), which the run
// could verify but not speak.
func (p *Protocol) CheckALPN(profile, want string) error {
	if want == "" || want == p.ALPN {
		return nil
	}
	return fmt.Errorf("profile %s expects alpn %s, but the run speaks %s (protocols: %s)", profile, want, p.ALPN,
		strings.Join(Names(), ", "))
}

// Classed is an error whose class is known where it happens (HTTP/2's and
// HTTP/3's, which multiplex streams, as CheckStreams checks).
type Classed struct {
	Class vocab.Class
	Err   error
}

func (e *Classed) Error() string { return e.Err.Error() }
func (e *Classed) Unwrap() error { return e.Err }

// Fail is an error of class c.
func Fail(c vocab.Class, format string, a ...any) error {
	return &Classed{Class: c, Err: fmt.Errorf(format, a...)}
}

// CheckStreams checks the settings of a protocol (named name: "HTTP/2")
// that multiplexes streams: streams are throughput's, there is no pipeline.
func CheckStreams(e vocab.Engine, a *Args, name string) error {
	switch {
	case a.Streams < 0:
		return &vocab.FieldError{Field: "streams", Value: a.Streams, Want: "not be negative"}
	case e == vocab.EngineCPS && a.Streams > 0:
		return &vocab.FieldError{Field: "streams", Value: a.Streams,
			Msg: "cps makes one request at a time on each connection: streams are throughput's"}
	case a.Pipeline > 1:
		return &vocab.FieldError{Field: "pipeline", Value: a.Pipeline, Msg: name + " multiplexes streams: use streams"}
	case a.RequestsPerConn < 0:
		return &vocab.FieldError{Field: "requests_per_conn", Value: a.RequestsPerConn, Want: "not be negative"}
	}
	return nil
}
