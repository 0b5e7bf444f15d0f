package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// RunSpec is one distributed run as a Launcher sees it.
type RunSpec struct {
	ID string // unique in the campaign; a DNS-1123 label
	// Args is the engine command line without the agent flags:
	// ["cps", URL, "--profile", …].
	Args      []string
	Agents    int
	StartAt   time.Time
	Tolerance time.Duration
	// ReportTo is where agent i pushes its record.
	ReportTo string
}

// AgentArgs returns agent i's complete command line: the same agent flags
// a Kubernetes agent gets from the manifest.
func (s RunSpec) AgentArgs(i int, name string) []string {
	return manifestArgs(ManifestOptions{
		Args: s.Args, Agents: s.Agents, StartAt: s.StartAt, StartTolerance: s.Tolerance, ReportTo: s.ReportTo,
	}, strconv.Itoa(i), name)
}

// Launched is a run's agents once started.
type Launched struct {
	// Failed, if not nil, receives an error when an agent fails before it
	// could report, so the coordinator need not wait for the deadline.
	Failed <-chan error
	// Stop ends and removes the agents; it is called once the records
	// are in or the run is given up.
	Stop func()
}

// Launcher starts the agents of one run: local processes or a Kubernetes
// Indexed Job.
type Launcher interface {
	Launch(ctx context.Context, spec RunSpec) (*Launched, error)
}

// Executor makes the method's runs as distributed runs: each run's engine
// command is given to Agents agents (fewer when the run has fewer
// connections than that), which start together at now + Margin, push their
// records to Collector, and are merged into the run's record.
type Executor struct {
	// Local makes the specifications (endpoints, paths, verification) and
	// the resumption probes, which the coordinator runs itself.
	Local    *method.Local
	Launcher Launcher
	Agents   int
	// Margin is how far ahead the start is set: long enough for every
	// agent to be started (processes) or scheduled (pods) and ready.
	Margin    time.Duration
	Tolerance time.Duration
	Collector *Collector
	// ReportURL is the collector's base URL as the agents reach it.
	ReportURL string
	// ProfileFiles are passed to every agent (--profile-file).
	ProfileFiles []string
	// ReferenceCA is the CA file agents verify the reference target with.
	ReferenceCA string
	// Drain bounds in-flight transactions after the window (the engine's
	// own drain bound); the collector waits for it.
	Drain time.Duration

	seq atomic.Int64
}

var _ method.Executor = (*Executor)(nil)

// Resumption implements method.Executor: the coordinator probes itself.
func (e *Executor) Resumption(ctx context.Context, req method.Request) (bool, error) {
	return e.Local.Resumption(ctx, req)
}

// Run implements method.Executor.
func (e *Executor) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	args, err := e.EngineArgs(req)
	if err != nil {
		return nil, err
	}
	n := min(e.Agents, req.Concurrency)
	if n < 1 {
		return nil, fmt.Errorf("no agent to run with concurrency %d", req.Concurrency)
	}
	id := fmt.Sprintf("%s-%d-%d", req.Phase, e.seq.Add(1), time.Now().Unix()%100000)
	batch := e.Collector.Expect(id, n)
	defer e.Collector.Forget(id)
	spec := RunSpec{
		ID: id, Args: args, Agents: n, StartAt: time.Now().Add(e.Margin), Tolerance: e.Tolerance,
		ReportTo: e.ReportURL + "/runs/" + id,
	}
	l, err := e.Launcher.Launch(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("starting %d agents: %w", n, err)
	}
	defer l.Stop()

	drain := e.Drain
	if drain <= 0 {
		drain = 30 * time.Second
	}
	// The agents report after warm-up, window and drain, then push
	// (PushAttempts × PushTimeout at worst).
	wait := time.Until(spec.StartAt) + req.Warmup + req.Duration + drain + 30*time.Second
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

// EngineArgs is the engine command line of req, as every agent runs it
// (without the agent flags).
func (e *Executor) EngineArgs(req method.Request) ([]string, error) {
	spec, err := e.Local.Spec(req)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(spec.Target.URL)
	if err != nil {
		return nil, err
	}
	args := []string{req.Test.Engine, spec.Target.URL, "--profile", req.Profile.Name}
	if spec.Target.DUT != "" {
		args = append(args, "--dut", spec.Target.DUT)
	}
	for _, f := range e.ProfileFiles {
		args = append(args, "--profile-file", f)
	}
	args = append(args,
		"-c", strconv.Itoa(req.Concurrency), "-d", req.Duration.String(), "--warmup", req.Warmup.String(),
		"--expect-size", strconv.FormatInt(req.ExpectSize, 10))
	port := u.Port()
	if port == "" {
		port = "443"
	}
	if want := net.JoinHostPort(u.Hostname(), port); spec.Target.Address != want {
		host, _, _ := net.SplitHostPort(spec.Target.Address)
		args = append(args, "--resolve", u.Hostname()+":"+port+":"+host)
	}
	switch {
	case spec.Target.InsecureSkipVerify:
		args = append(args, "--insecure")
	case spec.Target.CAFile != "":
		args = append(args, "--cacert", spec.Target.CAFile)
	case spec.Roots != nil: // the reference target's generated CA
		if e.ReferenceCA == "" {
			return nil, errors.New("the reference target's CA file is not known to the agents")
		}
		args = append(args, "--cacert", e.ReferenceCA)
	}
	return args, nil
}
