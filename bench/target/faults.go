package target

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
)

// The fault kinds the target can inject, and the error class a client
// that verifies as the engines do must count for each.
var FaultKinds = []string{
	"reset-handshake",      // reset: TCP RST after the ClientHello
	"alert",                // tls_alert:handshake_failure
	"stall",                // handshake_timeout: accept, never answer
	"slow",                 // read_timeout: first byte after SlowDelay
	"close-mid-body",       // eof: half the body, then close
	"short-body",           // body_size: a complete response with half the body
	"status-503",           // status
	"wrong-suite",          // mismatch: another suite, or another group
	"accept-resumption",    // resumed: tickets issued and honoured
	"expired-cert",         // certificate
	"reset-after-response", // reset: the response (Connection: close), then RST instead of FIN
}

// FaultClass maps a fault kind to the error class it causes.
var FaultClass = map[string]vocab.Class{
	"reset-handshake":      vocab.ClassReset,
	"alert":                vocab.TLSAlert("handshake_failure"),
	"stall":                vocab.ClassHandshakeTimeout,
	"slow":                 vocab.ClassReadTimeout,
	"close-mid-body":       vocab.ClassEOF,
	"short-body":           vocab.ClassBodySize,
	"status-503":           vocab.ClassStatus,
	"wrong-suite":          vocab.ClassMismatch,
	"accept-resumption":    vocab.ClassResumed,
	"expired-cert":         vocab.ClassCertificate,
	"reset-after-response": vocab.ClassReset,
}

// Fault is one kind injected into a fraction of a listener's connections.
// Several faults take disjoint shares: with alert 0.5 and status-503 0.25,
// of every 4 connections 2 get the alert, 1 a 503 and 1 none, exactly as
// newFaults assigns them (CheckFaults: each kind once, fractions adding up
// to at most 1). A fault is counted (Stats.Injected) when it is applied: a
// response fault once per request of its connection, and a fault that
// cannot apply (a stall without a ClientHello, a body fault on a path that
// is not an object) is not counted.
type Fault struct {
	Kind     string
	Fraction float64 // 0 < Fraction <= 1
}

// ParseFault parses KIND[:FRACTION].
func ParseFault(s string) (Fault, error) {
	kind, frac, hasFrac := strings.Cut(s, ":")
	f := Fault{Kind: kind, Fraction: 1}
	if !slices.Contains(FaultKinds, kind) {
		return f, fmt.Errorf("unknown fault %q (known: %s)", kind, strings.Join(FaultKinds, ", "))
	}
	if hasFrac {
		v, err := strconv.ParseFloat(frac, 64)
		if err != nil || !(v > 0 && v <= 1) { // NaN too
			return f, fmt.Errorf("fault %s: fraction %q is not in (0, 1]", kind, frac)
		}
		f.Fraction = v
	}
	return f, nil
}

// CheckFaults checks faults together: each kind at most once, each
// fraction in (0, 1], and the fractions adding up to at most 1, since they
// are disjoint shares of the connections (a connection gets at most one
// fault).
func CheckFaults(fs []Fault) error {
	sum := 0.0
	for i, f := range fs {
		if !slices.Contains(FaultKinds, f.Kind) {
			return fmt.Errorf("unknown fault %q (known: %s)", f.Kind, strings.Join(FaultKinds, ", "))
		}
		if !(f.Fraction > 0 && f.Fraction <= 1) {
			return fmt.Errorf("fault %s: fraction %g is not in (0, 1]", f.Kind, f.Fraction)
		}
		if slices.ContainsFunc(fs[:i], func(g Fault) bool { return g.Kind == f.Kind }) {
			return fmt.Errorf("fault %s is given twice: give each kind once, with its fraction", f.Kind)
		}
		sum += f.Fraction
	}
	if sum > 1+fractionSlack {
		return fmt.Errorf("the fractions add up to %.4g, more than 1: each fault takes its own share of the connections, "+
			"and a connection gets at most one", sum)
	}
	return nil
}

// fractionSlack absorbs the rounding of fractions written in decimal
// (0.7 + 0.2 + 0.1).
const fractionSlack = 1e-9

// faults assigns connections to faults, connection by connection: the
// faults take disjoint shares of a listener's connections, their
// fractions, and the connections left (1 minus their sum) get none. The
// assignment is deterministic and exact at every point of the run: after
// any n connections, each fault has been given to floor(n×fraction) or
// ceil(n×fraction) of them (|given - n×fraction| < 1), and no connection
// gets two. It is Tijdeman's solution of the chairman assignment problem
// ("The chairman assignment problem", Discrete Math. 32, 1980): among the
// shares that are owed at least c = 1/(2m-2) of a connection (m shares),
// the one whose next turn is due first gets it; every share then stays
// within 1 - c of its exact count.
type faults struct {
	mu     sync.Mutex
	kinds  []Fault
	shares []float64 // the kinds' fractions, then the share of no fault
	given  []int64   // the connections given to each share
	n      int64     // the connections assigned
	c      float64   // 1/(2m-2), m the shares above 0 (0 when m is 1)
}

func newFaults(fs []Fault) *faults {
	f := &faults{kinds: fs, shares: make([]float64, len(fs)+1), given: make([]int64, len(fs)+1)}
	none, m := 1.0, len(fs) // every fraction is above 0 (CheckFaults)
	for i, k := range fs {
		f.shares[i] = k.Fraction
		none -= k.Fraction
	}
	if none > fractionSlack {
		f.shares[len(fs)] = none
		m++
	}
	if m > 1 {
		f.c = 1 / float64(2*m-2)
	}
	return f
}

// pick assigns the next connection: a fault kind, or "" for none.
func (f *faults) pick() string {
	if f == nil || len(f.kinds) == 0 {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	best, due, owed := -1, math.Inf(1), math.Inf(-1)
	for i, s := range f.shares {
		if s <= 0 {
			continue
		}
		debt := float64(f.n)*s - float64(f.given[i])
		if debt < f.c-fractionSlack {
			continue
		}
		// The share's next turn is due when its debt would reach 1 - c.
		if d := (float64(f.given[i]) + 1 - f.c) / s; d < due || d == due && debt > owed {
			best, due, owed = i, d, debt
		}
	}
	if best < 0 { // the shares sum to 1: some share is owed at least 1/m
		best = len(f.shares) - 1
	}
	f.given[best]++
	if best == len(f.kinds) {
		return ""
	}
	return f.kinds[best].Kind
}

// injected counts the faults a listener applied, per kind.
type injected struct {
	n [16]atomic.Int64 // indexed as FaultKinds
}

func (in *injected) add(kind string) {
	if i := slices.Index(FaultKinds, kind); i >= 0 {
		in.n[i].Add(1)
	}
}

func (in *injected) snapshot() map[string]int64 {
	m := map[string]int64{}
	for i, k := range FaultKinds {
		if v := in.n[i].Load(); v > 0 {
			m[k] = v
		}
	}
	return m
}

// faultConfig returns the server configuration of a connection with a
// handshake fault, or base.
func (tl *tlsListener) faultConfig(kind string) *tls.Config {
	if kind != "wrong-suite" && kind != "accept-resumption" && kind != "expired-cert" {
		return tl.cfg
	}
	cfg := tl.cfg.Clone()
	switch kind {
	case "wrong-suite":
		cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			return tl.wrongSuite(hello), nil
		}
	case "accept-resumption":
		cfg.SessionTicketsDisabled = false
	case "expired-cert":
		cfg.Certificates = nil
		cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			tl.l.injected.add(kind)
			return tl.expired, nil
		}
	}
	return cfg
}

// wrongSuite returns a configuration that negotiates a suite the profile
// does not expect, or else a group it does not expect, among those the
// client offers. With no such choice it returns nil (the normal one), and
// nothing is injected.
func (tl *tlsListener) wrongSuite(hello *tls.ClientHelloInfo) *tls.Config {
	p := tl.l.Profile
	want, pinned := p.ExpectedSuite()
	for _, id := range hello.CipherSuites {
		if s, ok := cipher.SuiteByID(id); ok && pinned && id != want.ID && !s.TLS13 && !s.Insecure {
			cfg := tl.cfg.Clone()
			cfg.CipherSuites = []uint16{id}
			cfg.MaxVersion = tls.VersionTLS12
			tl.l.injected.add("wrong-suite")
			return cfg
		}
	}
	g, ok := p.ExpectedGroup()
	for _, id := range hello.SupportedCurves {
		if _, known := cipher.GroupByID(id); known && ok && g.ID != 0 && id != g.ID {
			cfg := tl.cfg.Clone()
			cfg.CurvePreferences = []tls.CurveID{id}
			tl.l.injected.add("wrong-suite")
			return cfg
		}
	}
	return nil
}

// errInjected ends a connection whose fault was applied in the handshake.
var errInjected = errors.New("target: fault injected")

// handshakeFault applies the faults that replace the handshake. It reports
// whether it applied one (and the connection is done).
func (c *tlsConn) handshakeFault() bool {
	kind := c.fault
	if kind != "reset-handshake" && kind != "alert" && kind != "stall" || !readRecord(c.raw) {
		return false
	}
	c.tl.l.injected.add(kind)
	switch kind {
	case "alert":
		// A fatal handshake_failure alert in a TLS 1.2 record.
		_, _ = c.raw.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28})
		_ = c.raw.Close()
	case "reset-handshake":
		resetClose(c.raw.Conn)
	case "stall":
		// Never answer; wait (bounded) for the client to give up.
		_ = c.raw.SetReadDeadline(time.Now().Add(stallMax))
		_, _ = io.Copy(io.Discard, c.raw)
		_ = c.raw.Close()
	}
	return true
}

// stallMax bounds how long a stalled connection is held.
const stallMax = 2 * time.Minute

// readRecord reads the client's first TLS record (the ClientHello); false if
// the client sent none.
func readRecord(c *countingConn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return false
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	_, err := io.CopyN(io.Discard, c, int64(n))
	_ = c.SetReadDeadline(time.Time{})
	return err == nil
}

func resetClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// responseFault applies the faults of the response stage; it reports
// whether it served the request itself.
func (t *Target) responseFault(r reply, l *Listener, c *tlsConn, path []byte) bool {
	switch c.fault {
	case "slow":
		l.injected.add(c.fault)
		time.Sleep(t.cfg.SlowDelay)
		return false
	case "status-503":
		l.injected.add(c.fault)
		r.fail("fault injected: status-503", fasthttp.StatusServiceUnavailable)
		return true
	case "short-body", "close-mid-body", "reset-after-response":
		size, ok := objectSize(path)
		if !ok || size < 2 || size > maxPrealloc {
			return false
		}
		l.injected.add(c.fault)
		if c.fault == "short-body" {
			r.object(t.bodies, size/2, "") // a complete response, half the object
			return true
		}
		r.cut(c, t.bodies[:size], c.fault == "reset-after-response")
		return true
	}
	return false
}
