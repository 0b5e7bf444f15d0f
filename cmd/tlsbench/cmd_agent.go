package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/reports"
)

const agentUsage = `tlsbench agent

Runs one agent of a distributed run, its run read from the environment:
TLSBENCH_RUN (the run spec as JSON: the whole run and the agents' start,
tolerance and collector), TLSBENCH_SHARD (this agent's index, 0 to N-1) and
TLSBENCH_AGENT (its name in the record), and its credentials:
TLSBENCH_TOKEN (the run's token, which signs the pushed record) and
TLSBENCH_COLLECTOR_CA (for an https collector, its CA's PEM). It asks the
collector for its session first (no load when it cannot), takes its share of the load,
starts at the agreed time and pushes its record to the collector. The
processes executor (qualify --executor processes) and the manifests of
tlsbench k8s start agents this way; see docs/KUBERNETES.md.`

func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("agent")
	var live liveFlags
	live.add(fs)
	live.addStream(fs)
	if err := parseFlags(fs, agentUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if err := live.agentDefault(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("takes no arguments: the run is in the environment (%s)", agent.EnvRun)
	}
	spec, err := agent.FromEnv(os.Getenv)
	if err != nil {
		return usagef("%s", specError(err))
	}
	var cred agent.Credentials
	if spec.Agent.ReportTo != "" { // before any load: a record no collector takes is not made
		if cred, err = agent.CredentialsFromEnv(os.Getenv); err != nil {
			return usagef("%s", err)
		}
		if cred, err = agent.Hello(ctx, spec.Agent.ReportTo, cred); err != nil {
			return fmt.Errorf("the collector at %s will not take the record (no load sent): %w", spec.Agent.ReportTo, err)
		}
	}
	set, err := loadProfiles(spec.ProfileFiles)
	if err != nil {
		return err
	}
	spec.Profiles = set
	ls, err := live.open(ctx, stdout, stderr)
	defer ls.close()
	if err != nil {
		return err
	}
	ls.hook(&spec, runLabels(&spec))
	a := spec.Agent
	fmt.Fprintf(stderr, "tlsbench agent: %s (shard %d/%d) ready; starting at %s\n",
		a.Name, a.Shard, a.Shards, a.StartAt.Format(time.RFC3339Nano))
	r, err := runner.Run(ctx, &spec)
	ls.finish(r)
	if err != nil {
		return err
	}
	// A failed preflight sent no load: the agent has nothing to report,
	// and fails (as the coordinator then sees).
	if pf := r.Preflight; pf != nil && !pf.OK {
		if ctx.Err() != nil {
			return errors.New("interrupted before the load")
		}
		return noSuccess(r, set)
	}
	if err := reports.RunSummary(r).Text(stdout); err != nil {
		return err
	}
	if a.ReportTo != "" {
		if err := agent.Push(ctx, a.ReportTo, cred, r); err != nil {
			return fmt.Errorf("pushing the record to %s: %w", a.ReportTo, err)
		}
	}
	if r.Failed() != "" || r.Whole.Transactions == 0 {
		return noSuccess(r, set)
	}
	return nil
}
