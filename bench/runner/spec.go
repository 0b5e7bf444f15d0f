package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// DefaultProfile is the profile of a run that names none.
const DefaultProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// Spec is one run, as data: what the CLI parses into, what the method's
// requests become (method.Local.Spec), what agents receive (JSON) and what
// Run makes. Defaults returns one with every default; Validate checks
// it. The fields tagged json:"-" are this process's own (a certificate pool
// in memory, a key log, a progress callback) and do not travel.
type Spec struct {
	Engine vocab.Engine `json:"engine"`
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

	// Throughput engine only (Pipeline is 1 by default).
	Pipeline        int    `json:"pipeline,omitempty"`
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
	if kind == "" {
		kind = vocab.EngineCPS
	}
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

// errNoTarget is a distributed run without a target URL: the agents of one
// run share one target.
var errNoTarget = errors.New("an agent's run needs a target URL: the agents of one run share one target")

// Validate reports the first field out of its domain (a *vocab.FieldError) or
// the error of the profile's lookup. The request, connection and load
// settings are checked by their owners' Validate.
func (s *Spec) Validate() error {
	bad := func(field string, v any, want string) error {
		return &vocab.FieldError{Field: field, Value: v, Want: want}
	}
	if s.Engine != vocab.EngineCPS && s.Engine != vocab.EngineThroughput {
		return bad("engine", s.Engine, "be cps or throughput")
	}
	for _, v := range []interface{ Validate() error }{&s.Load, &s.Request, &s.Settings} {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	switch {
	case s.Engine == vocab.EngineThroughput && s.Pipeline < 1:
		return bad("pipeline", s.Pipeline, "be at least 1")
	case s.RequestsPerConn < 0:
		return bad("requests_per_conn", s.RequestsPerConn, "not be negative")
	}
	if _, err := throughput.ParseVerify(s.VerifyBody, target.Pattern); err != nil {
		return bad("verify_body", s.VerifyBody, "be pattern or sha256: and 64 hex digits")
	}
	if a := s.Agent; a != nil {
		switch {
		case a.Shards < 1 || a.Shard < 0 || a.Shard >= a.Shards:
			return bad("shard", fmt.Sprintf("%d/%d", a.Shard, a.Shards), "be i/N with 0 ≤ i < N")
		case a.StartTolerance < 0:
			return bad("start_tolerance", a.StartTolerance, "not be negative")
		}
	}
	if _, err := s.profile(); err != nil {
		return err
	}
	return nil
}

// profile looks the spec's profile up.
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
	return set.Get(s.Profile)
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
	op, _, err := build(spec)
	return op, err
}

// build is the one place a spec becomes the engines' configurations; it
// returns the operation and the profile.
func build(spec *Spec) (op, *profiles.Profile, error) {
	p, err := spec.profile()
	if err != nil {
		return nil, nil, err
	}
	op, err := newOp(spec, p)
	return op, p, err
}

// conn is the connection side of spec.
func (spec *Spec) conn(p *profiles.Profile) (tlsconn.Config, error) {
	roots, err := spec.roots()
	t := &spec.Target
	return tlsconn.Config{
		Settings: spec.Settings, Profile: p, Address: t.Address,
		TLS: &tls.Config{
			ServerName: t.ServerName, RootCAs: roots, InsecureSkipVerify: t.InsecureSkipVerify, KeyLogWriter: spec.KeyLog,
		},
	}, err
}

// ProbeResumption reports whether the target of spec would resume a TLS
// session (tlsconn.ProbeResumption).
func ProbeResumption(ctx context.Context, spec *Spec) (bool, error) {
	p, err := spec.profile()
	if err != nil {
		return false, err
	}
	conn, err := spec.conn(p)
	if err != nil {
		return false, err
	}
	return tlsconn.ProbeResumption(ctx, conn, spec.Host, spec.Path)
}

// Echo encodes the configuration a run's record echoes (Spec.Config).
func Echo(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func newOp(spec *Spec, p *profiles.Profile) (op, error) {
	conn, err := spec.conn(p)
	if err != nil {
		return nil, err
	}
	req := spec.Request
	switch spec.Engine {
	case vocab.EngineCPS:
		return cps.New(cps.Config{Config: conn, Request: req})
	case vocab.EngineThroughput:
		verify, err := throughput.ParseVerify(spec.VerifyBody, target.Pattern)
		if err != nil {
			return nil, err
		}
		return throughput.New(throughput.Config{Config: conn, Request: req,
			Pipeline: max(spec.Pipeline, 1), RequestsPerConn: spec.RequestsPerConn, Verify: verify})
	}
	return nil, &vocab.FieldError{Field: "engine", Value: spec.Engine, Want: "be cps or throughput"}
}
