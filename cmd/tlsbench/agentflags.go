package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// agentSetup is the agent flags, checked: this process is shard i of N of
// one distributed run, starting at an agreed time and pushing its record.
type agentSetup struct {
	name          string
	shard, shards int
	startAt       time.Time
	tolerance     time.Duration
	reportTo      string
}

// resolveAgent checks the agent flags; nil when none was given.
func (lf *loadFlags) resolveAgent() (*agentSetup, error) {
	if *lf.startTolerance < 0 {
		return nil, usagef("--start-tolerance must not be negative, got %s", *lf.startTolerance)
	}
	if *lf.shard == "" && *lf.startAt == "" && *lf.agentName == "" && *lf.reportTo == "" {
		return nil, nil
	}
	a := &agentSetup{name: *lf.agentName, shards: 1, tolerance: *lf.startTolerance, reportTo: *lf.reportTo}
	if a.name == "" {
		host, _ := os.Hostname()
		a.name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if *lf.shard != "" {
		var err error
		if a.shard, a.shards, err = parseShard(*lf.shard); err != nil {
			return nil, err
		}
	}
	if *lf.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, *lf.startAt)
		if err != nil {
			return nil, usagef("bad --start-at %q: want RFC 3339, e.g. 2026-11-30T15:04:05Z", *lf.startAt)
		}
		a.startAt = t
	}
	if a.reportTo != "" {
		u, err := url.Parse(a.reportTo)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usagef("bad --report-to %q: want http://HOST:PORT[/PATH] of a collector (tlsbench collect)", a.reportTo)
		}
	}
	return a, nil
}

// parseShard parses i/N with 0 ≤ i < N.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, usagef("bad --shard %q: want i/N, e.g. 0/4", s)
	}
	if n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("bad --shard %q: want 0 ≤ i < N", s)
	}
	return i, n, nil
}

// split returns this shard's part of the load: concurrency and rate
// divided (the first c mod N shards take one connection more), source
// addresses in contiguous blocks.
func (a *agentSetup) split(cfg bench.Config, sources []net.IP) (bench.Config, []net.IP, error) {
	n, i := a.shards, a.shard
	if cfg.Concurrency < n {
		return cfg, nil, usagef("--shard %d/%d: concurrency %d cannot be divided among %d agents", i, n, cfg.Concurrency, n)
	}
	c := cfg.Concurrency / n
	if i < cfg.Concurrency%n {
		c++
	}
	cfg.Concurrency = c
	cfg.Rate /= float64(n)
	if len(sources) > 0 {
		if len(sources) < n {
			return cfg, nil, usagef("--shard %d/%d: %d source addresses cannot be divided among %d agents", i, n, len(sources), n)
		}
		sources = sources[i*len(sources)/n : (i+1)*len(sources)/n]
	}
	return cfg, sources, nil
}

// identity is the record's agent identity; the start skew is filled by the
// job.
func (a *agentSetup) identity() *metrics.Agent {
	return &metrics.Agent{Name: a.name, Shard: a.shard, Shards: a.shards, StartAt: a.startAt}
}

// dryRunKey marks a context in which an engine command checks its
// arguments and returns before any network I/O.
type dryRunKey struct{}

// checkEngineArgs checks an engine command line (args[0] is cps or
// throughput) as the command itself would, without running it.
func checkEngineArgs(args []string) error {
	if len(args) == 0 {
		return usagef("no engine command: want cps or throughput and its arguments")
	}
	ctx := context.WithValue(context.Background(), dryRunKey{}, true)
	var run func(context.Context, []string, io.Writer, io.Writer) error
	switch args[0] {
	case "cps":
		run = runCPS
	case "throughput":
		run = runThroughput
	default:
		return usagef("engine %q: want cps or throughput", args[0])
	}
	if err := run(ctx, args[1:], io.Discard, io.Discard); err != nil && err != errHelp {
		return err
	}
	return nil
}

func isDryRun(ctx context.Context) bool {
	v, _ := ctx.Value(dryRunKey{}).(bool)
	return v
}
