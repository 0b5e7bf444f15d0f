package runner

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/cps"
	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/httpreq"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/throughput"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// DefaultProfile is the profile of a run that names none.
const DefaultProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// Spec is one run, as data: what the CLI parses into, what the method's
// requests become (method.Local.Spec), what agents receive (JSON) and what
// Execute makes. Defaults returns one with every default; Validate checks
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

	// The request.
	Host string `json:"host"` // Host header
	Path string `json:"path"` // path and query
	// Paths, if set, replaces Path: requests go through them in turn, or
	// at random with RandomPath.
	Paths      []string    `json:"paths,omitempty"`
	RandomPath bool        `json:"random_path,omitempty"`
	Headers    [][2]string `json:"headers,omitempty"` // extra headers; values may be templates
	// ExpectSize, if non-negative, is the only acceptable body size.
	ExpectSize int64  `json:"expect_size"`
	UserAgent  string `json:"user_agent"`

	// The connections.
	Sources          []net.IP      `json:"sources,omitempty"` // local addresses dialled from, in turn
	LingerZero       bool          `json:"linger0,omitempty"`
	ConnectTimeout   time.Duration `json:"connect_timeout"`
	HandshakeTimeout time.Duration `json:"handshake_timeout"`
	ReadTimeout      time.Duration `json:"read_timeout"`

	// Throughput engine only (Pipeline is 1 by default).
	Pipeline        int    `json:"pipeline,omitempty"`
	RequestsPerConn int    `json:"requests_per_conn,omitempty"`
	VerifyBody      string `json:"verify_body,omitempty"` // "", "pattern" or "sha256:HEX"

	// The load.
	Concurrency int           `json:"concurrency"`
	Rate        float64       `json:"rate,omitempty"` // open loop when positive
	Duration    time.Duration `json:"duration"`
	Warmup      time.Duration `json:"warmup"`
	// Drain bounds how long transactions in flight after the window may
	// run before they are abandoned; 0: DrainBound's default.
	Drain      time.Duration `json:"drain"`
	AbortAfter time.Duration `json:"abort_after"`

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
	Live     func(Live)           `json:"-"` // called once the load starts (bench.Config.Live)
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
func Defaults(engine vocab.Engine) Spec {
	if engine == "" {
		engine = vocab.EngineCPS
	}
	conn, req := tlsconn.Defaults(), httpreq.Defaults(engine.DefaultPath())
	s := Spec{
		Engine: engine, Profile: DefaultProfile, Path: req.Path, ExpectSize: req.ExpectSize, UserAgent: req.UserAgent,
		ConnectTimeout: conn.ConnectTimeout, HandshakeTimeout: conn.HandshakeTimeout, ReadTimeout: req.ReadTimeout,
		Concurrency: 32, Duration: 10 * time.Second, Warmup: 2 * time.Second, AbortAfter: bench.DefaultAbortAfter,
		Pipeline: 1,
	}
	if engine == vocab.EngineThroughput {
		s.Concurrency = 8
	}
	return s
}

// DefaultStartTolerance is how late an agent may start by default.
const DefaultStartTolerance = time.Second

// FieldError is a spec field whose value is out of its domain. Field is
// the field's JSON name; the CLI words it with its flag.
type FieldError struct {
	Field string
	Value any
	Want  string // what it must be, e.g. "be at least 1"
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s must %s, got %v", e.Field, e.Want, e.Value)
}

// ShardError is a load that cannot be divided among the agents.
type ShardError struct {
	Shard, Shards int
	What          string // "concurrency" or "sources"
	Have          int
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("shard %d/%d: %s %d cannot be divided among %d agents", e.Shard, e.Shards, e.What, e.Have, e.Shards)
}

// ErrNoTarget is a distributed run without a target URL: the agents of one
// run share one target.
var ErrNoTarget = errors.New("an agent's run needs a target URL: the agents of one run share one target")

// Validate reports the first field out of its domain (a *FieldError) or
// the error of the profile's lookup.
func (s *Spec) Validate() error {
	bad := func(field string, v any, want string) error { return &FieldError{field, v, want} }
	switch {
	case s.Engine != vocab.EngineCPS && s.Engine != vocab.EngineThroughput:
		return bad("engine", s.Engine, "be cps or throughput")
	case s.Concurrency < 1:
		return bad("concurrency", s.Concurrency, "be at least 1")
	case math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || s.Rate < 0:
		return bad("rate", s.Rate, "be a finite number, not negative")
	case s.Duration <= 0:
		return bad("duration", s.Duration, "be positive")
	case s.Warmup < 0:
		return bad("warmup", s.Warmup, "not be negative")
	case s.Drain < 0:
		return bad("drain", s.Drain, "not be negative")
	case s.AbortAfter < 0:
		return bad("abort_after", s.AbortAfter, "not be negative")
	case s.ExpectSize < -1:
		return bad("expect_size", s.ExpectSize, "be a size in bytes (0 or more; -1: any)")
	case s.ConnectTimeout <= 0:
		return bad("connect_timeout", s.ConnectTimeout, "be positive")
	case s.HandshakeTimeout <= 0:
		return bad("handshake_timeout", s.HandshakeTimeout, "be positive")
	case s.ReadTimeout <= 0:
		return bad("read_timeout", s.ReadTimeout, "be positive")
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
	pem, err := os.ReadFile(s.Target.CAFile)
	if err != nil {
		return nil, fmt.Errorf("cacert: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cacert %s: no PEM certificate in it", s.Target.CAFile)
	}
	return p, nil
}

// Deadlines is the sum of a transaction's phase deadlines: connect,
// handshake and read. A transaction that keeps its deadlines ends within it.
func (s *Spec) Deadlines() time.Duration {
	return s.ConnectTimeout + s.HandshakeTimeout + s.ReadTimeout
}

// DrainBound is the drain bound of the run: Drain when it is set, else the
// larger of bench.DefaultDrain and Deadlines, so that no transaction that
// keeps its deadlines is abandoned.
func (s *Spec) DrainBound() time.Duration {
	if s.Drain > 0 {
		return s.Drain
	}
	return max(bench.DefaultDrain, s.Deadlines())
}

// EngineConfig is the engine's configuration of s (bench.Apply's).
func (s *Spec) EngineConfig() bench.Config {
	c := bench.Config{
		Concurrency: s.Concurrency, Rate: s.Rate, Duration: s.Duration, Warmup: s.Warmup, Drain: s.DrainBound(),
		AbortAfter: s.AbortAfter, Progress: s.Progress, Live: s.Live,
	}
	if a := s.Agent; a != nil {
		c.StartAt, c.StartTolerance = a.StartAt, a.StartTolerance
	}
	return c
}

// NewOp builds the operation of spec.
func NewOp(spec *Spec) (Op, error) {
	op, _, err := build(spec)
	return op, err
}

// build is the one place a spec becomes the engines' configurations; it
// returns the operation and the profile.
func build(spec *Spec) (Op, *profiles.Profile, error) {
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
	return tlsconn.Config{
		Profile: p, Address: spec.Target.Address, Sources: spec.Sources, LingerZero: spec.LingerZero,
		ConnectTimeout: spec.ConnectTimeout, HandshakeTimeout: spec.HandshakeTimeout,
		TLS: profiles.ClientOptions{ServerName: spec.Target.ServerName, RootCAs: roots, InsecureSkipVerify: spec.Target.InsecureSkipVerify, KeyLogWriter: spec.KeyLog},
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

func newOp(spec *Spec, p *profiles.Profile) (Op, error) {
	conn, err := spec.conn(p)
	if err != nil {
		return nil, err
	}
	req := httpreq.Request{
		Host: spec.Host, Path: spec.Path, Paths: spec.Paths, RandomPath: spec.RandomPath, Headers: spec.Headers,
		ExpectSize: spec.ExpectSize, ReadTimeout: spec.ReadTimeout, UserAgent: spec.UserAgent,
	}
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
	return nil, &FieldError{"engine", spec.Engine, "cps or throughput"}
}
