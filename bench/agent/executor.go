package agent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// RunSpec is one distributed run as a Launcher sees it.
type RunSpec struct {
	ID string // unique in the campaign; a DNS-1123 label
	// Spec is the whole run; agent i runs Spec.ForShard with Shard i.
	Spec runner.Spec
	// Credentials go to every agent, never in a command line.
	Credentials Credentials
}

// Agents is the number of agents of the run.
func (s RunSpec) Agents() int { return s.Spec.Agent.Shards }

// launched is a run's agents once started.
type launched struct {
	// Failed, if not nil, receives an error when an agent fails before it
	// could report, so the coordinator need not wait for the deadline.
	Failed <-chan error
	// Stop ends and removes the agents; it is called once the records
	// are in or the run is given up.
	Stop func()
}

// launcher starts the agents of one run: local processes or a Kubernetes
// Indexed Job.
type launcher interface {
	Launch(ctx context.Context, spec RunSpec) (*launched, error)
}

// Executor makes the method's runs as distributed runs: Agents agents (at
// most one per connection) start together at now + Margin, push their
// records to Collector, and are merged into the run's record.
type Executor struct {
	// Local makes the specifications (endpoints, paths, verification) and
	// the resumption probes, which the coordinator runs itself.
	Local    *method.Local
	Launcher launcher
	Agents   int
	// Margin is how far ahead the start is set, for every agent to be
	// started or scheduled.
	Margin    time.Duration
	Tolerance time.Duration
	Collector *Collector
	// ReportURL is the collector's base URL as the agents reach it.
	ReportURL string
	// ProfileFiles are the runs' profile files, as the agents reach them.
	ProfileFiles []string
	// ReferenceCA is the CA file agents verify the reference target with.
	ReferenceCA string
	// Credentials are what each run's agents receive: the collector's CA
	// when ReportURL is https, and the token (empty: a new one each run).
	Credentials Credentials
	seq         atomic.Int64
}

var _ method.Executor = (*Executor)(nil)

// Resumption implements method.Executor: the coordinator probes itself.
func (e *Executor) Resumption(ctx context.Context, req method.Request) (*metrics.Preflight, error) {
	return e.Local.Resumption(ctx, req)
}

// Run implements method.Executor.
func (e *Executor) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	n := min(e.Agents, req.Concurrency)
	if n < 1 {
		return nil, &noAgentError{Concurrency: req.Concurrency}
	}
	spec, err := e.Spec(req, n)
	if err != nil {
		return nil, err
	}
	run := RunSpec{
		ID:          fmt.Sprintf("%s-%d-%d", req.Phase, e.seq.Add(1), time.Now().Unix()%100000),
		Spec:        *spec,
		Credentials: e.Credentials,
	}
	if run.Credentials.Token == "" { // a token of the run's own
		if run.Credentials.Token, err = NewToken(); err != nil {
			return nil, err
		}
	}
	batch := e.Collector.ExpectToken(run.ID, n, run.Credentials.Token)
	defer e.Collector.forget(run.ID)
	run.Spec.Agent.ReportTo = e.ReportURL + "/runs/" + run.ID
	l, err := e.Launcher.Launch(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("starting %d agents: %w", n, err)
	}
	defer l.Stop()

	// The agents report after the ramps, warm-up, window and drain, then push.
	wait := time.Until(spec.Agent.StartAt) + spec.Span() + spec.DrainBound() + 30*time.Second
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var failed atomic.Pointer[error]
	if l.Failed != nil {
		go func() {
			select {
			case err := <-l.Failed:
				if err != nil {
					failed.Store(&err)
					cancel()
				}
			case <-wctx.Done():
			}
		}()
	}
	runs, err := batch.Wait(wctx)
	if err != nil {
		if p := failed.Load(); p != nil {
			return nil, fmt.Errorf("%v; %w", *p, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return metrics.Merge(runs)
}

// noAgentError is a run with fewer connections than one agent needs.
type noAgentError struct{ Concurrency int }

func (e *noAgentError) Error() string {
	return fmt.Sprintf("no agent to run with concurrency %d", e.Concurrency)
}

// errNoReferenceCA is a run against the reference target whose CA file the
// agents are not told.
var errNoReferenceCA = errors.New("the reference target's CA file is not known to the agents")

// Spec is the run of req as its n agents receive it: method.Local.Spec's,
// with files for the profiles and the reference CA, starting at now +
// Margin.
func (e *Executor) Spec(req method.Request, n int) (*runner.Spec, error) {
	spec, err := e.Local.Spec(req)
	if err != nil {
		return nil, err
	}
	spec.ProfileFiles, spec.Profiles, spec.Progress = e.ProfileFiles, nil, nil
	if spec.Roots != nil {
		if spec.Target.CAFile == "" { // the reference target's generated CA
			if e.ReferenceCA == "" {
				return nil, errNoReferenceCA
			}
			spec.Target.CAFile = e.ReferenceCA
		}
		spec.Roots = nil
	}
	spec.Agent = &runner.Agent{Shards: n, StartAt: time.Now().Add(e.Margin), StartTolerance: e.Tolerance}
	return spec, nil
}
