// Package runner holds the run spec (Spec: one run as data, with its
// defaults and validation) and makes one run from it: it builds the
// operation (CPS or throughput), applies the load with engine.Run, measures
// the generator's own CPU, and fills the metrics.Run. The CLI's engine
// commands, the method's runs and the agents of a distributed run all go
// through Run.
package runner

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http1" // registers HTTP/1.1
	_ "github.com/tlsbench/tlsbench/bench/protocol/http2" // registers HTTP/2
	_ "github.com/tlsbench/tlsbench/bench/protocol/http3" // registers HTTP/3
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// op is an engine operation that reports what it negotiated, the leaf
// certificate it was presented, the address it dialled and how it resumed
// sessions (tlsconn.Endpoint's).
type op = protocol.Op

// Preflight makes the transaction of spec that Run makes before its load,
// tried again after a timeout or a reset (engine.Preflight), and returns
// it as the record has it. An error means the operation could not be built.
func Preflight(ctx context.Context, spec *Spec) (*metrics.Preflight, error) {
	op, err := NewOp(spec)
	if err != nil {
		return nil, err
	}
	return preflight(ctx, op)
}

func preflight(ctx context.Context, op engine.Op) (*metrics.Preflight, error) {
	res, err := engine.Preflight(ctx, op)
	if err != nil {
		return nil, err
	}
	s := &res.Sample
	pf := &metrics.Preflight{
		OK: res.OK(), DurationUS: res.Duration.Microseconds(),
		Transactions: int64(res.Attempts), Handshakes: int64(res.Handshakes), Resumed: int64(res.Resumed),
		BodySize: s.Payload, Class: s.Class, FailedAttempts: res.Failed, Server: res.Server,
	}
	if s.Err != nil && s.Class != "" {
		pf.Error = s.Err.Error()
	}
	pf.Requests = preflightRequests(pf)
	return pf, nil
}

// Run validates spec, makes the run and returns its record. An error
// means the run could not be made at all; failed transactions are data in
// the record.
//
// Before any load, Run makes one transaction exactly as the load will (see
// Preflight). If it fails, no load is sent: the record has the failed
// Preflight, Complete false, and nothing measured (Run.Failed says why).
// Before the preflight, it reads the device's counters (Spec.Device) once:
// if they cannot be read, no load is sent either, and the error (wrapping
// the *devcount.ReadError) says why.
func Run(ctx context.Context, spec *Spec) (*metrics.Run, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	op, p, cc, err := build(spec)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	device, err := newDeviceMeter(ctx, spec)
	if err != nil {
		return nil, err
	}
	pf, err := preflight(ctx, op)
	if err != nil {
		return nil, err
	}
	checkClientCert(pf, p, cc) // clientcert.go
	if !pf.OK {
		r := newRecord(spec, p, cc)
		r.Started, r.Ended, r.Preflight = started, time.Now(), pf
		if n := op.Negotiated(); n != nil {
			r.Negotiated = *n
		}
		r.Agent = spec.Agent.identity()
		r.Device = device.result([2]time.Time{})
		return r, nil
	}
	resetNames(op)
	meter := startCPU()
	start := spec.EngineConfig()
	noise := noiseMeter{pids: spec.DUTProcesses}
	start.AtWindow = func(end bool) {
		noise.at(end)
		device.at(end)
	}
	res, err := engine.Run(ctx, start, op)
	if err != nil {
		return nil, err
	}
	r := newRecord(spec, p, cc)
	r.Preflight = pf
	if err := fillRecord(r, res, op); err != nil {
		return nil, err
	}
	if err := setObjects(r, &spec.Request, res.Snapshot); err != nil {
		return nil, err
	}
	r.Client = meter.Stop(res.Snapshot.AllOK)
	r.Client.IncludesTarget = spec.IncludesTarget
	r.Noise, r.NoiseUnmeasured = noise.result()
	r.Device = device.result([2]time.Time{res.SteadyStart, res.SteadyStart.Add(res.Window)})
	if r.Agent = spec.Agent.identity(); r.Agent != nil && !start.StartAt.IsZero() {
		r.Agent.StartSkewMS = float64(res.StartSkew) / float64(time.Millisecond)
	}
	return r, nil
}

// newRecord is the record of spec run with profile p and client
// certificate cc, before anything is measured.
func newRecord(spec *Spec, p *profiles.Profile, cc *tlsconn.ClientCert) *metrics.Run {
	r := &metrics.Run{
		Schema: metrics.Schema, Engine: spec.Engine, Protocol: cmp.Or(spec.Protocol, protocol.Default),
		Profile: spec.Profile, Target: spec.Target,
		Tool: spec.Tool, Host: HostInfo(), WarmupS: spec.Warmup.Seconds(),
		Load: metrics.Load{
			Mode: "closed", Concurrency: spec.Concurrency, Rate: spec.Rate,
			Sources: len(spec.Sources), ConnectionsHeld: -1, ConnectionsHeldPeak: -1,
		},
	}
	if spec.Rate > 0 {
		r.Load.Mode = "open"
	}
	r.Timeline = timeline(&spec.Load)
	r.Target.ClientCert = cc.Recorded()
	r.ProfileSpec, _ = json.Marshal(p)
	if len(spec.Config) > 0 {
		r.Config = spec.Config
	}
	return r
}

// timeline is the record's timeline of load l; nil without ramps.
func timeline(l *engine.Load) *metrics.Timeline {
	if l.RampUp <= 0 && l.RampDown <= 0 {
		return nil
	}
	t := &metrics.Timeline{Target: "concurrency", TargetValue: float64(l.Concurrency), RampUpS: l.RampUp.Seconds(),
		WarmupS: l.Warmup.Seconds(), SustainS: l.Duration.Seconds(), RampDownS: l.RampDown.Seconds()}
	if l.Rate > 0 {
		t.Target, t.TargetValue = "rate", l.Rate
	}
	return t
}

// fillRecord fills r with what the engine measured (res) and what op saw.
func fillRecord(r *metrics.Run, res *engine.Outcome, op op) error {
	r.Started, r.Ended, r.Complete = res.Started, res.Ended, res.Complete
	r.SteadyStartS = res.SteadyStart.Sub(res.Started).Seconds()
	l := &r.Load
	l.Late, l.Dropped, l.Scheduled = res.Late, res.Dropped, res.Scheduled
	l.PreOpened, l.PreOpenFailed = int64(res.PreOpened), int64(res.PreOpenFailed)
	l.ConnectionsHeld, l.ConnectionsHeldPeak = res.HeldAtEnd, res.HeldPeak
	l.Attempts, l.Backoffs, l.Aborted, l.Abandoned = res.Attempts, res.Backoffs, res.Aborted, res.Abandoned
	if err := r.Fill(res.Snapshot, res.Window); err != nil {
		return err
	}
	if mode := op.ResumptionMode(); mode != "" {
		if err := r.SetResumption(mode, op.ResumeRatio(), res.Snapshot); err != nil {
			return err
		}
	}
	if !tlsconn.TCPInfo {
		r.TCP = &metrics.TCP{Unavailable: metrics.TCPUnavailable}
	}
	r.Series = res.Series
	if res.StartLag != nil {
		if err := r.SetHistogram(vocab.PhaseScheduleLag, res.StartLag); err != nil {
			return err
		}
	}
	r.SetLoadMarks()
	if c, ok := op.(interface{ Reconnects() int64 }); ok {
		r.Reconnects = new(c.Reconnects())
	}
	if c, ok := op.(interface{ Closes() metrics.Closes }); ok {
		closes := c.Closes()
		r.Closes = &closes
	}
	if h, ok := op.(interface{ HTTP2() *metrics.HTTP2 }); ok {
		r.HTTP2 = h.HTTP2()
	}
	if q, ok := op.(interface{ QUIC() *metrics.QUIC }); ok {
		r.SetQUIC(q.QUIC())
	}
	if n := op.Negotiated(); n != nil {
		r.Negotiated = *n
	}
	// The device's identity as measured: the address dialled (a host name
	// resolved once) and the leaf certificate it presented.
	r.Target.Address = op.Address()
	r.Target.LeafSHA256 = op.LeafSHA256()
	r.Names = namesOf(op)
	return nil
}

// identity is the record's agent identity, without the start skew.
func (a *Agent) identity() *metrics.Agent {
	if a == nil {
		return nil
	}
	return &metrics.Agent{Name: a.Name, Shard: a.Shard, Shards: max(a.Shards, 1), StartAt: a.StartAt}
}

// DefaultProfile is the profile of a run that names none.
const DefaultProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// Spec is one run, as data: what the CLI parses into, what the method's
// requests become (method.Local.Spec), what agents receive (JSON) and what
// Run makes. Defaults returns one with every default; Validate checks
// it. The fields tagged json:"-" are this process's own (a certificate pool
// in memory, a key log, a progress callback) and do not travel.
type Spec struct {
	Engine vocab.Engine `json:"engine"`
	// Protocol carries the engine's transactions, a registered protocol
	// (package protocol); "" is protocol.Default (HTTP/1.1).
	Protocol string `json:"protocol,omitempty"`
	// Profile names the cipher profile, among the built-in ones and those
	// of ProfileFiles (or of Profiles, when set).
	Profile      string   `json:"profile"`
	ProfileFiles []string `json:"profile_files,omitempty"`

	// Target is the device as the record names it. Address is dialled,
	// ServerName is sent (SNI) and verified, CAFile (or Roots) or
	// InsecureSkipVerify say how; Address and LeafSHA256 are then measured.
	Target metrics.Target `json:"target"`

	// The request (Host, Path, Paths, …, ReadTimeout), the connections
	// (Sources, LingerZero, ConnectTimeout, HandshakeTimeout) and the load
	// (Concurrency, Rate, Duration, Warmup, Drain, AbortAfter): each
	// setting lives in the type of the package that owns it, which
	// validates it; embedded, their JSON names are the spec's own.
	httpreq.Request
	tlsconn.Settings
	engine.Load

	// Throughput engine only (Pipeline is 1 by default), but for
	// RequestsPerConn, which CPS also takes (above 1: keep-alive).
	Pipeline        int    `json:"pipeline,omitempty"`
	Streams         int    `json:"streams,omitempty"` // concurrent streams per connection (HTTP/2 and later)
	RequestsPerConn int    `json:"requests_per_conn,omitempty"`
	VerifyBody      string `json:"verify_body,omitempty"` // "", "pattern" or "sha256:HEX"

	// Agent, if set, makes this run one agent of a distributed run.
	Agent *Agent `json:"agent,omitempty"`

	// Tool and Config are echoed in the record as given.
	Tool   metrics.Tool    `json:"tool"`
	Config json.RawMessage `json:"config,omitempty"`
	// IncludesTarget marks a run whose process also ran the target.
	IncludesTarget bool `json:"includes_target,omitempty"`

	// This process's own.
	Profiles *profiles.Set        `json:"-"` // where Profile is looked up, if set
	Roots    *x509.CertPool       `json:"-"` // verification roots, if not CAFile
	KeyLog   io.Writer            `json:"-"` // TLS secrets (debugging)
	Progress func(metrics.Second) `json:"-"` // called once a second
	Live     func(Live)           `json:"-"` // called once the load starts (engine.Config.Live)
	// DUTProcesses are the PIDs, on this machine, of the DUT's processes
	// (every one: a process's CPU does not include its live children's),
	// whose CPU the record's noise measures apart from the other
	// processes'. Not sent to agents: they run on other hosts.
	DUTProcesses []int `json:"-"`
	// Device, if set, is where the device's own counters are read before
	// and after the steady window and the run (the record's Device). Not
	// sent to agents: the counters are those of one process's run.
	Device *devcount.Source `json:"-"`
}

// Agent is one agent's part of a distributed run: shard Shard of Shards of
// the load, started at StartAt, its record pushed to ReportTo.
type Agent struct {
	Name           string        `json:"name,omitempty"` // in the record
	Shard          int           `json:"shard"`
	Shards         int           `json:"shards"`
	StartAt        time.Time     `json:"start_at,omitzero"`
	StartTolerance time.Duration `json:"start_tolerance"`
	ReportTo       string        `json:"report_to,omitempty"`
}

// Defaults returns the default run of an engine (CPS if engine is empty):
// the reference target's default object, the default profile and
// deadlines, 10 s measured after 2 s of warm-up.
func Defaults(kind vocab.Engine) Spec {
	kind = cmp.Or(kind, vocab.EngineCPS)
	req := httpreq.Defaults(kind.DefaultPath())
	s := Spec{
		Engine: kind, Profile: DefaultProfile, Request: req, Settings: tlsconn.Defaults().Settings,
		Load: engine.Load{
			Concurrency: 32, Duration: 10 * time.Second, Warmup: 2 * time.Second, AbortAfter: engine.DefaultAbortAfter,
		},
		Pipeline: 1,
	}
	if kind == vocab.EngineThroughput {
		s.Concurrency = 8
	}
	return s
}

// DefaultStartTolerance is how late an agent may start by default.
const DefaultStartTolerance = time.Second

// ShardError is a load that cannot be divided among the agents.
type ShardError struct {
	Shard, Shards int
	What          string // "concurrency" or "sources"
	Have          int
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("shard %d/%d: %s %d cannot be divided among %d agents", e.Shard, e.Shards, e.What, e.Have, e.Shards)
}

// Validate reports the first field out of its domain (a *vocab.FieldError) or
// the error of the profile's lookup. The request, connection and load
// settings are checked by their owners' Validate.
func (s *Spec) Validate() error {
	bad := func(field string, v any, want string) error {
		return &vocab.FieldError{Field: field, Value: v, Want: want}
	}
	proto, err := protocol.Lookup(s.Protocol)
	if err != nil {
		return err
	}
	if err := proto.Carries(s.Engine); err != nil {
		return err
	}
	for _, v := range []interface{ Validate() error }{&s.Load, &s.Request, &s.Settings} {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if err := proto.Validate(s.Engine, s.args(tlsconn.Config{Settings: s.Settings})); err != nil {
		return err
	}
	if s.EarlyData && !proto.EarlyData {
		return &vocab.FieldError{Field: "early_data", Value: true, Msg: proto.Name + " sends no 0-RTT data"}
	}
	if a := s.Agent; a != nil {
		switch {
		case a.Shards < 1 || a.Shard < 0 || a.Shard >= a.Shards:
			return bad("shard", fmt.Sprintf("%d/%d", a.Shard, a.Shards), "be i/N with 0 ≤ i < N")
		case a.StartTolerance < 0:
			return bad("start_tolerance", a.StartTolerance, "not be negative")
		}
	}
	p, err := s.profile()
	if err != nil {
		return err
	}
	if err := s.ClientAuth.ValidateFor(p); err != nil { // a way to get the client certificate the profile requires
		return err
	}
	if err := proto.CheckALPN(p.Name, p.ExpectedALPN()); err != nil {
		return err
	}
	if max := p.MaxTLS(); uint16(max) < proto.MinTLS {
		return &vocab.FieldError{Field: "profile", Value: p.Name, Msg: fmt.Sprintf("%s runs over %s or later, "+
			"but the profile's max_version is %s", proto.Name, tls.VersionName(proto.MinTLS), max.Short())}
	}
	conn := tlsconn.Config{Settings: s.Settings, Profile: p}
	if _, err = conn.ResumptionMode(); err == nil && s.Engine == vocab.EngineThroughput && s.Resume > 0 &&
		s.RequestsPerConn == 0 {
		return &vocab.FieldError{Field: "resume", Value: s.Resume, Msg: "throughput keeps its connections open, so " +
			"none would resume: set M requests per connection to reconnect (and resume) every M responses"}
	}
	return err
}

// profile looks the spec's profile up, offering and requiring its
// protocol's ALPN ID when the protocol asks for it and the profile names
// none.
func (s *Spec) profile() (*profiles.Profile, error) {
	set := s.Profiles
	if set == nil {
		set = profiles.Builtin()
		for _, f := range s.ProfileFiles {
			if err := set.LoadFile(f); err != nil {
				return nil, err
			}
		}
	}
	p, err := set.Get(s.Profile)
	if proto, perr := protocol.Lookup(s.Protocol); err == nil && perr == nil && proto.OfferALPN {
		p = p.Speaking(proto.ALPN, proto.Fallback...)
	}
	return p, err
}

// ForShard returns agent's share of s: concurrency and rate divided (the
// first Concurrency mod Shards shards take one connection more), source
// addresses in contiguous blocks; s.Agent becomes agent. A share of one is
// s itself.
func (s Spec) ForShard(agent Agent) (Spec, error) {
	a := agent
	s.Agent = &a
	n, i := a.Shards, a.Shard
	if n <= 1 {
		return s, nil
	}
	if s.Concurrency < n {
		return s, &ShardError{Shard: i, Shards: n, What: "concurrency", Have: s.Concurrency}
	}
	c := s.Concurrency / n
	if i < s.Concurrency%n {
		c++
	}
	s.Concurrency = c
	s.Rate /= float64(n)
	if len(s.Sources) > 0 {
		if len(s.Sources) < n {
			return s, &ShardError{Shard: i, Shards: n, What: "sources", Have: len(s.Sources)}
		}
		s.Sources = s.Sources[i*len(s.Sources)/n : (i+1)*len(s.Sources)/n]
	}
	return s, nil
}

// roots returns the verification roots: Roots, or CAFile's certificates.
func (s *Spec) roots() (*x509.CertPool, error) {
	if s.Roots != nil || s.Target.CAFile == "" {
		return s.Roots, nil
	}
	return profiles.LoadRoots(s.Target.CAFile)
}

// Deadlines is the sum of a transaction's phase deadlines: connect,
// handshake and read. A transaction that keeps its deadlines ends within it.
func (s *Spec) Deadlines() time.Duration {
	return s.ConnectTimeout + s.HandshakeTimeout + s.ReadTimeout
}

// DrainBound is the drain bound of the run: Drain when it is set, else the
// larger of engine.DefaultDrain and Deadlines, so that no transaction that
// keeps its deadlines is abandoned.
func (s *Spec) DrainBound() time.Duration {
	if s.Drain > 0 {
		return s.Drain
	}
	return max(engine.DefaultDrain, s.Deadlines())
}

// EngineConfig is the engine's configuration of s (engine.Run's).
func (s *Spec) EngineConfig() engine.Config {
	c := engine.Config{Load: s.Load, Progress: s.Progress, Live: s.Live}
	c.Drain = s.DrainBound()
	if a := s.Agent; a != nil {
		c.StartAt, c.StartTolerance = a.StartAt, a.StartTolerance
	}
	return c
}

// NewOp builds the operation of spec.
func NewOp(spec *Spec) (op, error) {
	op, _, _, err := build(spec)
	return op, err
}

// build is the one place a spec becomes the engines' configurations; it
// returns the operation, the profile and the client certificate (or its
// absence), made or loaded here for the run.
func build(spec *Spec) (op, *profiles.Profile, *tlsconn.ClientCert, error) {
	p, err := spec.profile()
	if err != nil {
		return nil, nil, nil, err
	}
	cc, err := spec.ClientAuth.ClientCertificate(p)
	if err != nil {
		return nil, nil, nil, err
	}
	op, err := newOp(spec, p, cc)
	return op, p, cc, err
}

// conn is the connection side of spec, presenting the client certificate
// cc when the server asks for one.
func (s *Spec) conn(p *profiles.Profile, cc *tlsconn.ClientCert) (tlsconn.Config, error) {
	roots, err := s.roots()
	t := &s.Target
	base := &tls.Config{
		ServerName: t.ServerName, RootCAs: roots, InsecureSkipVerify: t.InsecureSkipVerify, KeyLogWriter: s.KeyLog,
	}
	cc.Apply(base)
	return tlsconn.Config{Settings: s.Settings, Profile: p, Address: t.Address, TLS: base}, err
}

// ProbeResumption asks whether the target of spec would resume a session,
// in the spec's protocol (HTTP/1.1, HTTP/2, or HTTP/3 with QUIC's session
// tickets): the preflight (engine.Preflight) of the spec's cps with every
// connection after the first offering a session, one request a connection
// and no 0-RTT data. A server that resumes answers a full handshake's
// request, then a resumed one's (Resumed 1, Requests 2); one that does not
// fails it with not_resumed after the first request (Requests 1). Every
// request is a GET the device counts, as a run's preflight is.
func ProbeResumption(ctx context.Context, spec *Spec) (*metrics.Preflight, error) {
	s := *spec
	s.Engine, s.RequestsPerConn, s.Pipeline, s.Streams, s.VerifyBody = vocab.EngineCPS, 0, 1, 0, ""
	s.Resume, s.EarlyData, s.ServerNames = 1, false, nil
	return Preflight(ctx, &s)
}

// Echo encodes the configuration a run's record echoes (Spec.Config).
func Echo(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func newOp(spec *Spec, p *profiles.Profile, cc *tlsconn.ClientCert) (op, error) {
	conn, err := spec.conn(p, cc)
	if err != nil {
		return nil, err
	}
	proto, err := protocol.Lookup(spec.Protocol)
	if err != nil {
		return nil, err
	}
	return proto.Build(spec.Engine, *spec.args(conn))
}

// args are the protocol's arguments of s, over the connection conn.
func (s *Spec) args(conn tlsconn.Config) *protocol.Args {
	return &protocol.Args{Conn: conn, Request: s.Request, Pipeline: s.Pipeline, Streams: s.Streams,
		RequestsPerConn: s.RequestsPerConn,
		VerifyBody:      s.VerifyBody}
}

// setObjects sets the record's RFC 9411 timings and its objects (as the
// request asked for them) from the window's snapshot.
func setObjects(r *metrics.Run, req *httpreq.Request, s metrics.Snapshot) error {
	if err := r.SetRFC9411(s); err != nil {
		return err
	}
	objs := make([]metrics.ObjectStats, len(req.Objects))
	for i, o := range req.Objects {
		objs[i] = metrics.ObjectStats{Size: o.Size, Weight: o.Weight, Path: o.ObjectURLPath(req.ObjectPath)}
	}
	return r.SetObjects(objs, s)
}
