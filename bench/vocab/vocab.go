// Package vocab is tlsbench's typed vocabulary: the engines, the error
// classes, the latency phases of a transaction and the phases of the method.
// Each is a named type with String(), as crypto/tls's CurveID is, so that
// every package spells them the same way. It is a leaf package: it imports
// only the standard library.
//
// The string-typed names (Engine, Class, MethodPhase) encode in JSON and YAML
// as their plain strings.
package vocab

import (
	"fmt"
	"strings"
)

// Engine is a load engine: what one transaction is.
type Engine string

// The engines.
const (
	// EngineCPS: one full TLS handshake, one request and one response per
	// connection (connections per second, SR=0).
	EngineCPS Engine = "cps"
	// EngineThroughput: requests over long-lived keep-alive connections
	// (encrypted bandwidth).
	EngineThroughput Engine = "throughput"
)

// Engines are the engines, in the order they are listed to users.
var Engines = []Engine{EngineCPS, EngineThroughput}

func (e Engine) String() string { return string(e) }

// DefaultPath returns the engine's default object path on the reference
// target: /1m for throughput, /1k otherwise.
func (e Engine) DefaultPath() string {
	if e == EngineThroughput {
		return "/1m"
	}
	return "/1k"
}

// ParseEngine returns the engine named s.
func ParseEngine(s string) (Engine, error) {
	for _, e := range Engines {
		if s == string(e) {
			return e, nil
		}
	}
	return "", fmt.Errorf("unknown engine %q (want cps or throughput)", s)
}

// Class is the class of a failed transaction. Every failed transaction is
// counted in exactly one; the set is bounded (TLSAlert takes the names of
// the TLS alerts). The empty Class is success.
type Class string

// The error classes.
const (
	ClassRefused          Class = "refused"
	ClassConnectTimeout   Class = "connect_timeout"
	ClassReset            Class = "reset"
	ClassHandshakeTimeout Class = "handshake_timeout"
	ClassCertificate      Class = "certificate"
	ClassMismatch         Class = "mismatch"    // negotiated parameters differ from the profile
	ClassResumed          Class = "resumed"     // a session was resumed where none may be
	ClassNotResumed       Class = "not_resumed" // a session was offered, the server made a full handshake
	ClassStatus           Class = "status"
	ClassBodySize         Class = "body_size"
	ClassBodyMismatch     Class = "body_mismatch"
	ClassHeaderSize       Class = "header_size" // response headers beyond the read buffer
	ClassReadTimeout      Class = "read_timeout"
	ClassEOF              Class = "eof"
	ClassOther            Class = "other"
	// ClassAbandoned: still in flight when the drain bound after the
	// window expired (its deadlines were not kept); neither a latency nor
	// any other error.
	ClassAbandoned Class = "abandoned"
	// ClassCertName: the chain is trusted, but not for the server name
	// the connection sent (the device chose another name's certificate).
	ClassCertName Class = "cert_name"
)

// HTTP/2's own failures (RFC 9113); the error names the code (e.g.
// PROTOCOL_ERROR): a stream the server reset (RST_STREAM), a connection it
// ended with an error (GOAWAY) or with streams unanswered, and frames or
// header blocks the client refused (malformed, or against the protocol).
const (
	ClassH2StreamReset Class = "h2_stream_reset"
	ClassH2GoAway      Class = "h2_goaway"
	ClassH2Protocol    Class = "h2_protocol"
)

// QUIC's and HTTP/3's own failures (RFC 9000, RFC 9114); the error names
// the code (e.g. PROTOCOL_VIOLATION, H3_INTERNAL_ERROR): a handshake that
// did not complete in time, no common QUIC version, a stateless reset, a
// CONNECTION_CLOSE with a transport error code, and one (or a stream reset)
// with an HTTP/3 error code or a response against HTTP/3.
const (
	ClassQUICHandshakeTimeout Class = "quic_handshake_timeout"
	ClassQUICVersion          Class = "quic_version"
	ClassQUICStatelessReset   Class = "quic_stateless_reset"
	ClassQUICTransport        Class = "quic_transport_error"
	ClassH3                   Class = "h3_error"
)

// ClassClientCertRefused: the server refused the client's certificate (or
// its absence) with a certificate alert (mutual TLS, docs/MTLS.md); the
// error names the alert.
const ClassClientCertRefused Class = "client_cert_refused"

const alertPrefix = "tls_alert:"

// TLSAlert returns the class of a received TLS alert of the given name
// (its RFC name, e.g. "handshake_failure"): tls_alert:handshake_failure.
func TLSAlert(name string) Class { return Class(alertPrefix + name) }

// Alert returns the alert name of a tls_alert:NAME class.
func (c Class) Alert() (name string, ok bool) { return strings.CutPrefix(string(c), alertPrefix) }

func (c Class) String() string { return string(c) }

// Phase is a latency phase: a part of a transaction that is timed
// separately, or the open loop's own start lateness. Its String is the name
// the run record uses in latency_us and histograms.
type Phase uint8

// The phases. PhaseTotal runs from the transaction's intended start (open
// loop) or actual start (closed loop) to its end; PhaseUncorrected runs from
// the actual start and differs from PhaseTotal only in open loop. The phases
// before PhaseScheduleLag are those a transaction times (NumTimed of them).
const (
	PhaseConnect     Phase = iota
	PhaseHandshake         // TCP connected → TLS handshake complete
	PhaseTTFB              // request written → first response byte
	PhaseTransfer          // first response byte → complete response (and close)
	PhaseTotal             // the whole transaction (corrected for coordinated omission)
	PhaseUncorrected       // the whole transaction from its actual start
	// PhaseScheduleLag is the open loop's own start lateness: actual −
	// intended start. It is part of PhaseTotal.
	PhaseScheduleLag
	// PhaseHandshakeFull and PhaseHandshakeResumed split PhaseHandshake
	// by kind in a run that resumes sessions: full handshakes, and those
	// that resumed one.
	PhaseHandshakeFull
	PhaseHandshakeResumed
	// PhaseRFCTTFB and PhaseRFCTTLB are RFC 9411 §6.3's time to first
	// and to last byte: from the transaction's first packet (its connect
	// when it opened its connection, else its request) to the response's
	// first byte and to its body's last byte.
	PhaseRFCTTFB
	PhaseRFCTTLB
)

// NumTimed is how many phases a transaction times: PhaseConnect up to
// PhaseUncorrected.
const NumTimed = PhaseScheduleLag

var phaseNames = [...]string{"connect", "handshake", "ttfb", "transfer", "total", "total_uncorrected", "schedule_lag",
	"handshake_full", "handshake_resumed", "rfc9411_ttfb", "rfc9411_ttlb"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// MarshalText writes the phase by its name, so that a Phase in JSON reads
// as the record's latency keys do.
func (p Phase) MarshalText() ([]byte, error) {
	if int(p) >= len(phaseNames) {
		return nil, fmt.Errorf("vocab: no phase %d", uint8(p))
	}
	return []byte(phaseNames[p]), nil
}

// UnmarshalText reads a phase by its name.
func (p *Phase) UnmarshalText(b []byte) error {
	q, ok := ParsePhase(string(b))
	if !ok {
		return fmt.Errorf("vocab: unknown phase %q", b)
	}
	*p = q
	return nil
}

// TimedNames returns the names of the timed phases, in order.
func TimedNames() []string { return append([]string(nil), phaseNames[:NumTimed]...) }

// PhaseNames returns the names of every phase, the timed ones first, then
// those a record derives (the open loop's schedule lag, the handshakes
// split by kind, RFC 9411's TTFB and TTLB).
func PhaseNames() []string { return append([]string(nil), phaseNames[:]...) }

// ParsePhase returns the phase of the given name.
func ParsePhase(name string) (Phase, bool) {
	for i, n := range phaseNames {
		if n == name {
			return Phase(i), true
		}
	}
	return 0, false
}

// MethodPhase is a phase of the qualification method.
type MethodPhase string

// The method's phases, in the order they run.
const (
	// Preliminary: one connection per DUT, test and profile: what is
	// negotiated and the body size served.
	Preliminary MethodPhase = "preliminary"
	// Exploratory: probes at rising concurrency to find the best level.
	Exploratory MethodPhase = "exploratory"
	// Final: the measured runs at the frozen level.
	Final MethodPhase = "final"
)

// MethodPhases are the method's phases, in order.
var MethodPhases = []MethodPhase{Preliminary, Exploratory, Final}

func (p MethodPhase) String() string { return string(p) }

// FieldError is a field whose value is wrong: a setting out of its domain
// (returned by the Validate of the package that owns the setting: Want and
// Value; the CLI words Field with its flag's name) or a record's field that
// is not valid (Msg). Field is the setting's JSON name, or the path of the
// field in a record (latency_us.total.p99, series[3].t). In a YAML file
// (a profile, a plan) Path holds the keys down to the value, for its line,
// and Msg the whole message.
type FieldError struct {
	Field string
	Value any
	Want  string // what it must do, e.g. "be at least 1"
	Msg   string // else what is wrong with it
	Path  []string
	Err   error // the typed cause, if any
}

func (e *FieldError) Unwrap() error { return e.Err }

func (e *FieldError) Error() string {
	switch {
	case e.Want != "":
		return fmt.Sprintf("%s must %s, got %v", e.Field, e.Want, e.Value)
	case e.Field == "":
		return e.Msg
	case strings.HasPrefix(e.Msg, "(") || e.Field == "schema":
		return e.Field + " " + e.Msg // p99 (120) < p90 (130); schema "x", want "y"
	}
	return e.Field + ": " + e.Msg
}

// Under returns the error with its field put under prefix (run → run.x.y).
func (e *FieldError) Under(prefix string) *FieldError {
	u := *e
	switch {
	case e.Field == "":
		u.Field = prefix
	case strings.HasPrefix(e.Field, "["):
		u.Field = prefix + e.Field
	default:
		u.Field = prefix + "." + e.Field
	}
	return &u
}

// TimelinePhase is a part of a run's timeline (RFC 9411 §4.3.4), as the
// per-second series marks it.
type TimelinePhase string

// The timeline's phases: the load rises, settles, is measured, falls, and
// the transactions in flight end.
const (
	TimelineRampUp   TimelinePhase = "ramp_up"
	TimelineWarmup   TimelinePhase = "warmup"
	TimelineSustain  TimelinePhase = "sustain"
	TimelineRampDown TimelinePhase = "ramp_down"
	TimelineDrain    TimelinePhase = "drain"
)
