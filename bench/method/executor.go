package method

import (
	"cmp"
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// Request is one run the method asks an Executor for.
type Request struct {
	Phase       vocab.MethodPhase
	DUT         plan.DUT
	Test        plan.Test
	Profile     *profiles.Profile
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	// ExpectSize, if non-negative, is every response's body size.
	ExpectSize int64
	Progress   func(metrics.Second)
	// Round is 1 for a re-exploration's runs and the final runs after it.
	Round int
	// Rate, if positive, makes the run open loop at that many transactions
	// per second (RFC 9411 §7.8); RampUp and RampDown are its ramps (the
	// campaign sets them from the test: Campaign.shape).
	Rate             float64
	RampUp, RampDown time.Duration
}

// Executor makes runs. The method calls it from one goroutine.
type Executor interface {
	// Run makes the run and returns its record; an error means it could
	// not be made at all.
	Run(ctx context.Context, req Request) (*metrics.Run, error)
	// Resumption asks whether the DUT would resume a TLS session, in the
	// request's protocol, and returns the probe's transactions as a
	// preflight's record (runner.ProbeResumption: Resumed above 0, the
	// DUT resumed; class not_resumed, it refused; Requests, the GETs it
	// answered); an error means no probe was made.
	Resumption(ctx context.Context, req Request) (*metrics.Preflight, error)
}

// Local makes runs in this process with bench/runner.
type Local struct {
	Tool      metrics.Tool
	UserAgent string
	// Reference resolves the base URL and CA pool of a DUT whose URL is
	// Reference, per profile.
	Reference func(profile string) (base string, roots *x509.CertPool, err error)
	// ReferenceProcesses are the PIDs of the reference target's processes
	// (runner.Spec.DUTProcesses).
	ReferenceProcesses []int
	// Profiles, if set, holds the runs' profiles (else the built-in ones).
	Profiles *profiles.Set
	// Live, if set, is every run's runner.Spec.Live (an exporter's hook).
	Live func(runner.Live)
	// Sources are the local addresses the runs dial from, in turn
	// (runner.Spec.Sources; qualify --source).
	Sources []net.IP

	mu    sync.Mutex
	pools map[string]*x509.CertPool
}

var _ Executor = (*Local)(nil)

// Run implements Executor.
func (l *Local) Run(ctx context.Context, req Request) (*metrics.Run, error) {
	spec, err := l.Spec(req)
	if err != nil {
		return nil, err
	}
	return runner.Run(ctx, spec)
}

// Resumption implements Executor.
func (l *Local) Resumption(ctx context.Context, req Request) (*metrics.Preflight, error) {
	spec, err := l.Spec(req)
	if err != nil {
		return nil, err
	}
	return runner.ProbeResumption(ctx, spec)
}

// Spec turns a request into a run specification: the DUT's endpoint for the
// profile, the test's path, verification as the plan says.
func (l *Local) Spec(req Request) (*runner.Spec, error) {
	d := req.DUT
	base := d.URL
	if e, ok := d.Endpoints[req.Profile.Name]; ok {
		base = e
	}
	var roots *x509.CertPool
	var pids []int
	if base == plan.Reference {
		pids = slices.Clone(l.ReferenceProcesses)
		if l.Reference == nil {
			return nil, fmt.Errorf("DUT %s is the reference target, and none was started", d.Name)
		}
		var err error
		if base, roots, err = l.Reference(req.Profile.Name); err != nil {
			return nil, err
		}
	}
	t, err := plan.ParseTarget(base, "")
	if err != nil {
		return nil, fmt.Errorf("DUT %s: %v", d.Name, err)
	}
	spec := runner.Defaults(req.Test.Engine)
	spec.Path = cmp.Or(req.Test.Path, spec.Path)
	u := t.URL
	spec.Path = strings.TrimSuffix(u.EscapedPath(), "/") + spec.Path
	addr := t.Address
	if d.Resolve != "" {
		addr = net.JoinHostPort(d.Resolve, t.Port)
	}
	if d.CACert != "" {
		if roots, err = l.pool(d.CACert); err != nil {
			return nil, fmt.Errorf("DUT %s: %v", d.Name, err)
		}
	}
	full := *u
	full.Path, full.RawPath = "", ""
	spec.Profile, spec.Profiles, spec.Roots = req.Profile.Name, l.Profiles, roots
	spec.Target = metrics.Target{
		DUT: d.Name, URL: full.String() + spec.Path, Address: addr, ServerName: t.ServerName,
		InsecureSkipVerify: d.Insecure, CAFile: d.CACert,
	}
	spec.Host, spec.ExpectSize, spec.UserAgent = t.HostHeader, req.ExpectSize, l.UserAgent
	spec.Concurrency, spec.Duration, spec.Warmup, spec.Progress = req.Concurrency, req.Duration, req.Warmup, req.Progress
	if err := suiteSpec(&spec, req); err != nil {
		return nil, fmt.Errorf("DUT %s: %v", d.Name, err)
	}
	spec.Tool, spec.DUTProcesses = l.Tool, append(pids, FindProcesses(d.Processes)...)
	spec.Device, spec.Sources = d.Counters, l.Sources
	spec.Live = l.Live
	spec.Config = runner.Echo(struct {
		Phase       vocab.MethodPhase `json:"phase"`
		DUT         string            `json:"dut"`
		Concurrency int               `json:"concurrency"`
		Duration    string            `json:"duration"`
		Warmup      string            `json:"warmup"`
		ExpectSize  int64             `json:"expect_size"`
	}{req.Phase, d.Name, req.Concurrency, req.Duration.String(), req.Warmup.String(), req.ExpectSize})
	return &spec, nil
}

// CheckPlan checks each test's protocol settings as its runs will be made
// (runner.Spec.Validate): the HTTP version (one of protocol.Versions),
// its streams, and each profile against the protocol (its alpn, its TLS
// versions). A test whose runs would be refused over HTTP/1.1 for another
// reason is left to the run to refuse, as before protocols.
func CheckPlan(p *plan.Plan, set *profiles.Set) error {
	for i, t := range p.Tests {
		proto, err := protocol.ForVersion(t.HTTP)
		if err != nil {
			return fmt.Errorf("plan: tests[%d]: http %q: want %s", i, t.HTTP, strings.Join(protocol.Versions(), " or "))
		}
		for _, name := range t.Profiles {
			if p, err := set.Get(name); err == nil {
				if err := proto.CheckALPN(name, p.ExpectedALPN()); err != nil {
					return fmt.Errorf("plan: tests[%d]: %w", i, err)
				}
			}
			spec, h1 := runner.Defaults(t.Engine), runner.Defaults(t.Engine)
			spec.Profile, spec.Profiles, h1.Profile, h1.Profiles = name, set, name, set
			if suiteSpec(&spec, Request{Test: t}) != nil || suiteSpec(&h1, Request{Test: t}) != nil {
				continue // the plan's check words it
			}
			h1.Protocol, h1.Streams, h1.EarlyData = "", 0, false
			if err := spec.Validate(); err != nil && h1.Validate() == nil {
				return fmt.Errorf("plan: tests[%d]: %s of %s over %s: %w", i, t.Engine, name, t.Protocol(), err)
			}
		}
	}
	return nil
}

func (l *Local) pool(file string) (*x509.CertPool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.pools[file]; ok {
		return p, nil
	}
	p, err := profiles.LoadRoots(file)
	if err != nil {
		return nil, err
	}
	if l.pools == nil {
		l.pools = map[string]*x509.CertPool{}
	}
	l.pools[file] = p
	return p, nil
}
