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
	"github.com/tlsbench/tlsbench/bench/httpreq"
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
	httpreq.Request
	// Throughput engine only.
	Pipeline        int
	RequestsPerConn int
	Verify          *throughput.BodyCheck

	Load bench.Config
	// Target, Tool and Config are echoed in the record as given, but for
	// Target.Address (the address dialled) and Target.LeafSHA256, which
	// the run measures.
	Target metrics.Target
	Tool   metrics.Tool
	Config any
	// IncludesTarget marks a run whose process also ran the target.
	IncludesTarget bool
	// Agent, if set, identifies this process as one agent of a distributed
	// run; the record gets it with the measured start skew.
	Agent *metrics.Agent
}

// Op is an engine operation that reports what it negotiated, the leaf
// certificate it was presented and the address it dialled.
type Op interface {
	bench.Op
	Negotiated() *metrics.Negotiated
	LeafSHA256() string
	Address() string
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

// Preflight makes the one transaction of spec that Run makes before its load
// (bench.Preflight) and returns it as the record has it. An error means the
// operation could not be built.
func Preflight(ctx context.Context, spec *Spec) (*metrics.Preflight, error) {
	op, err := NewOp(spec)
	if err != nil {
		return nil, err
	}
	return preflight(ctx, op)
}

func preflight(ctx context.Context, op bench.Op) (*metrics.Preflight, error) {
	res, err := bench.Preflight(ctx, op)
	if err != nil {
		return nil, err
	}
	s := &res.Sample
	pf := &metrics.Preflight{
		OK: res.OK(), DurationUS: res.Duration.Microseconds(),
		Transactions: int64(res.Attempts), Handshakes: int64(res.Handshakes), BodySize: s.Payload, Class: s.Class,
	}
	if s.Err != nil && s.Class != "" {
		pf.Error = s.Err.Error()
	}
	return pf, nil
}

// Run makes the run and returns its record. An error means the run could not
// be made at all; failed transactions are data in the record.
//
// Before any load, Run makes one transaction exactly as the load will (see
// Preflight). If it fails, no load is sent: the record has the failed
// Preflight, Complete false, and nothing measured (Run.Failed says why).
func Run(ctx context.Context, spec *Spec) (*metrics.Run, error) {
	op, err := NewOp(spec)
	if err != nil {
		return nil, err
	}
	p := spec.Conn.Profile
	newRecord := func() *metrics.Run {
		r := &metrics.Run{
			Schema: metrics.Schema, Engine: spec.Engine, Profile: p.Name, Target: spec.Target,
			Tool: spec.Tool, Host: HostInfo(), WarmupS: spec.Load.Warmup.Seconds(),
			Load: metrics.Load{
				Mode: "closed", Concurrency: spec.Load.Concurrency, Rate: spec.Load.Rate,
				Sources: len(spec.Conn.Sources), ConnectionsHeld: -1, ConnectionsHeldPeak: -1,
			},
		}
		if spec.Load.Rate > 0 {
			r.Load.Mode = "open"
		}
		r.ProfileSpec, _ = json.Marshal(p)
		if spec.Config != nil {
			r.Config, _ = json.Marshal(spec.Config)
		}
		return r
	}
	started := time.Now()
	pf, err := preflight(ctx, op)
	if err != nil {
		return nil, err
	}
	if !pf.OK {
		r := newRecord()
		r.Started, r.Ended, r.Preflight = started, time.Now(), pf
		if n := op.Negotiated(); n != nil {
			r.Negotiated = *n
		}
		if spec.Agent != nil {
			a := *spec.Agent
			r.Agent = &a
		}
		return r, nil
	}
	meter := StartCPU()
	res, err := bench.Run(ctx, spec.Load, op)
	if err != nil {
		return nil, err
	}
	r := newRecord()
	r.Started, r.Ended, r.Complete, r.Preflight = res.Started, res.Ended, res.Complete, pf
	r.SteadyStartS = res.SteadyStart.Sub(res.Started).Seconds()
	l := &r.Load
	l.Late, l.Dropped, l.Scheduled = res.Late, res.Dropped, res.Scheduled
	l.PreOpened, l.PreOpenFailed = int64(res.PreOpened), int64(res.PreOpenFailed)
	l.ConnectionsHeld, l.ConnectionsHeldPeak = res.HeldAtEnd, res.HeldPeak
	l.Attempts, l.Backoffs, l.Aborted = res.Attempts, res.Backoffs, res.Aborted
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
	// The device's identity as measured: the address dialled (a host name
	// resolved once) and the leaf certificate it presented.
	r.Target.Address = op.Address()
	r.Target.LeafSHA256 = op.LeafSHA256()
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
