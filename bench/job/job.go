// Package job runs one engine run from a plain specification and returns its
// self-contained record: it builds the operation (CPS or throughput), applies
// the load with bench.Run, measures the generator's own CPU, and fills the
// metrics.Run. The CLI's engine commands and the method's runs both go
// through Run.
package job

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/throughput"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
)

// The engines.
const (
	CPS        = "cps"
	Throughput = "throughput"
)

// DefaultPath returns an engine's default object path.
func DefaultPath(engine string) string {
	if engine == Throughput {
		return "/1m"
	}
	return "/1k"
}

// Spec is one run. Conn carries the profile, the address and verification.
type Spec struct {
	Engine string // CPS or Throughput
	Conn   tlsconn.Config
	tlsconn.Request
	// Throughput engine only.
	Pipeline        int
	RequestsPerConn int
	Verify          *throughput.BodyCheck

	Load bench.Config
	// Target, Tool and Config are echoed in the record as given.
	Target metrics.Target
	Tool   metrics.Tool
	Config any
	// IncludesTarget marks a run whose process also ran the target.
	IncludesTarget bool
	// Agent, if set, identifies this process as one agent of a distributed
	// run; the record gets it with the measured start skew.
	Agent *metrics.Agent
}

// Op is an engine operation that reports what it negotiated.
type Op interface {
	bench.Op
	Negotiated() *metrics.Negotiated
}

// NewOp builds the operation of spec.
func NewOp(spec *Spec) (Op, error) {
	switch spec.Engine {
	case CPS:
		cfg := cps.Defaults()
		cfg.Config, cfg.Request = spec.Conn, spec.Request
		return cps.New(cfg)
	case Throughput:
		cfg := throughput.Defaults()
		cfg.Config, cfg.Request = spec.Conn, spec.Request
		cfg.Pipeline, cfg.RequestsPerConn, cfg.Verify = max(spec.Pipeline, 1), spec.RequestsPerConn, spec.Verify
		return throughput.New(cfg)
	}
	return nil, fmt.Errorf("job: unknown engine %q (cps or throughput)", spec.Engine)
}

// Run makes the run and returns its record. An error means the run could not
// be made at all; failed transactions are data in the record.
func Run(ctx context.Context, spec *Spec) (*metrics.Run, error) {
	op, err := NewOp(spec)
	if err != nil {
		return nil, err
	}
	meter := StartCPU()
	res, err := bench.Run(ctx, spec.Load, op)
	if err != nil {
		return nil, err
	}
	p := spec.Conn.Profile
	r := &metrics.Run{
		Schema: metrics.Schema, Engine: spec.Engine, Profile: p.Name, Target: spec.Target,
		Tool: spec.Tool, Host: HostInfo(), Started: res.Started, Ended: res.Ended, Complete: res.Complete,
		WarmupS: spec.Load.Warmup.Seconds(), SteadyStartS: res.SteadyStart.Sub(res.Started).Seconds(),
		Load: metrics.Load{
			Mode: "closed", Concurrency: spec.Load.Concurrency, Rate: spec.Load.Rate,
			Late: res.Late, Dropped: res.Dropped, Scheduled: res.Scheduled, Sources: len(spec.Conn.Sources),
			PreOpened: int64(res.PreOpened), PreOpenFailed: int64(res.PreOpenFailed),
			ConnectionsHeld: res.HeldAtEnd, ConnectionsHeldPeak: res.HeldPeak,
		},
	}
	if spec.Load.Rate > 0 {
		r.Load.Mode = "open"
	}
	r.ProfileSpec, _ = json.Marshal(p)
	if spec.Config != nil {
		r.Config, _ = json.Marshal(spec.Config)
	}
	if err := r.Fill(res.Snapshot, res.Window); err != nil {
		return nil, err
	}
	r.Series = res.Series
	if res.StartLag != nil {
		if err := r.SetHistogram(metrics.ScheduleLag, res.StartLag); err != nil {
			return nil, err
		}
	}
	r.SetLoadMarks()
	if c, ok := op.(interface{ Closes() metrics.Closes }); ok {
		closes := c.Closes()
		r.Closes = &closes
	}
	if n := op.Negotiated(); n != nil {
		r.Negotiated = *n
	}
	r.Client = meter.Stop(res.Snapshot.AllOK)
	r.Client.IncludesTarget = spec.IncludesTarget
	if spec.Agent != nil {
		a := *spec.Agent
		if !spec.Load.StartAt.IsZero() {
			a.StartAt = spec.Load.StartAt
			a.StartSkewMS = float64(res.Started.Sub(spec.Load.StartAt)) / float64(time.Millisecond)
		}
		r.Agent = &a
	}
	return r, nil
}
