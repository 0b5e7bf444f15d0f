// Package runner holds the run spec (Spec: one run as data, with its
// defaults and validation) and makes one run from it: it builds the
// operation (CPS or throughput), applies the load with engine.Run, measures
// the generator's own CPU, and fills the metrics.Run. The CLI's engine
// commands, the method's runs and the agents of a distributed run all go
// through Run.
package runner

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// op is an engine operation that reports what it negotiated, the leaf
// certificate it was presented and the address it dialled.
type op interface {
	engine.Op
	Negotiated() *metrics.Negotiated
	LeafSHA256() string
	Address() string
}

// Preflight makes the one transaction of spec that Run makes before its load
// (engine.Preflight) and returns it as the record has it. An error means the
// operation could not be built.
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
		Transactions: int64(res.Attempts), Handshakes: int64(res.Handshakes), BodySize: s.Payload, Class: s.Class,
	}
	if s.Err != nil && s.Class != "" {
		pf.Error = s.Err.Error()
	}
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
	op, p, err := build(spec)
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
	if !pf.OK {
		r := newRecord(spec, p)
		r.Started, r.Ended, r.Preflight = started, time.Now(), pf
		if n := op.Negotiated(); n != nil {
			r.Negotiated = *n
		}
		r.Agent = spec.Agent.identity()
		r.Device = device.result([2]time.Time{})
		return r, nil
	}
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
	r := newRecord(spec, p)
	r.Preflight = pf
	if err := fillRecord(r, res, op); err != nil {
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

// newRecord is the record of spec run with profile p, before anything is
// measured.
func newRecord(spec *Spec, p *profiles.Profile) *metrics.Run {
	r := &metrics.Run{
		Schema: metrics.Schema, Engine: spec.Engine, Profile: spec.Profile, Target: spec.Target,
		Tool: spec.Tool, Host: HostInfo(), WarmupS: spec.Warmup.Seconds(),
		Load: metrics.Load{
			Mode: "closed", Concurrency: spec.Concurrency, Rate: spec.Rate,
			Sources: len(spec.Sources), ConnectionsHeld: -1, ConnectionsHeldPeak: -1,
		},
	}
	if spec.Rate > 0 {
		r.Load.Mode = "open"
	}
	r.ProfileSpec, _ = json.Marshal(p)
	if len(spec.Config) > 0 {
		r.Config = spec.Config
	}
	return r
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
	return nil
}

// identity is the record's agent identity, without the start skew.
func (a *Agent) identity() *metrics.Agent {
	if a == nil {
		return nil
	}
	return &metrics.Agent{Name: a.Name, Shard: a.Shard, Shards: max(a.Shards, 1), StartAt: a.StartAt}
}
