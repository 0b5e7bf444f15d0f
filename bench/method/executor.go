package method

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/httpreq"
	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/profiles"
)

// The phases.
const (
	Preliminary = "preliminary"
	Exploratory = "exploratory"
	FinalPhase  = "final"
)

// Request is one run the method asks an Executor for.
type Request struct {
	Phase       string
	DUT         DUT
	Test        Test
	Profile     *profiles.Profile
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	// ExpectSize, if non-negative, is the body size every response must
	// have (learnt in the preliminary phase).
	ExpectSize int64
	Progress   func(metrics.Second)
}

// Executor makes runs. The method calls it from one goroutine.
type Executor interface {
	// Run makes the run and returns its record; an error means it could
	// not be made at all.
	Run(ctx context.Context, req Request) (*metrics.Run, error)
	// Resumption reports whether the DUT would resume a TLS session.
	Resumption(ctx context.Context, req Request) (bool, error)
}

// Local makes runs in this process with bench/job.
type Local struct {
	Tool      metrics.Tool
	UserAgent string
	// Reference resolves the base URL and CA pool of a DUT whose URL is
	// Reference, per profile.
	Reference func(profile string) (base string, roots *x509.CertPool, err error)

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
	return job.Run(ctx, spec)
}

// Resumption implements Executor.
func (l *Local) Resumption(ctx context.Context, req Request) (bool, error) {
	spec, err := l.Spec(req)
	if err != nil {
		return false, err
	}
	return tlsconn.ProbeResumption(ctx, spec.Conn, spec.Host, spec.Path)
}

// Spec turns a request into a run specification: the DUT's endpoint for the
// profile, the test's path, verification as the plan says.
func (l *Local) Spec(req Request) (*job.Spec, error) {
	d := req.DUT
	base := d.URL
	if e, ok := d.Endpoints[req.Profile.Name]; ok {
		base = e
	}
	var roots *x509.CertPool
	if base == Reference {
		if l.Reference == nil {
			return nil, fmt.Errorf("DUT %s is the reference target, and none was started", d.Name)
		}
		var err error
		if base, roots, err = l.Reference(req.Profile.Name); err != nil {
			return nil, err
		}
	}
	u, err := baseURL(base)
	if err != nil {
		return nil, fmt.Errorf("DUT %s: %v", d.Name, err)
	}
	path := req.Test.Path
	if path == "" {
		path = job.DefaultPath(req.Test.Engine)
	}
	path = strings.TrimSuffix(u.EscapedPath(), "/") + path
	port := u.Port()
	if port == "" {
		port = "443"
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	if d.Resolve != "" {
		addr = net.JoinHostPort(d.Resolve, port)
	}
	if d.CACert != "" {
		if roots, err = l.pool(d.CACert); err != nil {
			return nil, fmt.Errorf("DUT %s: %v", d.Name, err)
		}
	}
	conn := tlsconn.Config{
		Profile: req.Profile, Address: addr,
		TLS:            profiles.ClientOptions{ServerName: u.Hostname(), RootCAs: roots, InsecureSkipVerify: d.Insecure},
		ConnectTimeout: tlsconn.DefaultConnectTimeout, HandshakeTimeout: tlsconn.DefaultHandshakeTimeout,
	}
	full := *u
	full.Path, full.RawPath = "", ""
	return &job.Spec{
		Engine: req.Test.Engine, Conn: conn,
		Request: httpreq.Request{Host: u.Host, Path: path, ExpectSize: req.ExpectSize, ReadTimeout: tlsconn.DefaultReadTimeout, UserAgent: l.UserAgent},
		Load:    bench.Config{Concurrency: req.Concurrency, Duration: req.Duration, Warmup: req.Warmup, Progress: req.Progress, AbortAfter: bench.DefaultAbortAfter},
		Target: metrics.Target{
			DUT: d.Name, URL: full.String() + path, Address: addr, ServerName: u.Hostname(),
			InsecureSkipVerify: d.Insecure, CAFile: d.CACert,
		},
		Tool: l.Tool,
		Config: struct {
			Phase       string `json:"phase"`
			DUT         string `json:"dut"`
			Concurrency int    `json:"concurrency"`
			Duration    string `json:"duration"`
			Warmup      string `json:"warmup"`
			ExpectSize  int64  `json:"expect_size"`
		}{req.Phase, d.Name, req.Concurrency, req.Duration.String(), req.Warmup.String(), req.ExpectSize},
	}, nil
}

func (l *Local) pool(file string) (*x509.CertPool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.pools[file]; ok {
		return p, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cacert: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cacert %s: no PEM certificate in it", file)
	}
	if l.pools == nil {
		l.pools = map[string]*x509.CertPool{}
	}
	l.pools[file] = p
	return p, nil
}
