package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/schemas"
)

// backendsMetric is the pool's requests in its /metrics; every backend's
// series added make the total.
const backendsMetric = "tlsbench_backend_requests_total"

// planBackends is a campaign's pool of backends (the plan's backends:):
// its executor wrapper notes the backends' count of every run's seconds.
type planBackends struct {
	pool    *target.Backends
	file    string
	started time.Time
	mu      sync.Mutex
	runs    []reports.BackendRun
	once    sync.Once
}

// startPlanBackends starts the plan's pool of backends, if it has one (nil
// otherwise), and makes the pool's requests every DUT's device counters
// (after plan.yaml is written: the plan as given has none). The pool's
// counters are read from its /metrics, requests only: the backends see
// neither the client's connections nor its handshakes.
func startPlanBackends(pl *plan.Plan, dir string, stderr io.Writer) (*planBackends, error) {
	b := pl.Backends
	if b == nil {
		return nil, nil
	}
	host, port, err := b.Addr()
	if err != nil {
		return nil, usagef("backends: listen %q: %v", b.Listen, err)
	}
	p, err := target.StartBackends(target.BackendsConfig{Count: b.Count, Host: host, Port: port, Admin: b.AdminAddr()})
	if err != nil {
		return nil, err
	}
	src := &devcount.Source{Kind: devcount.KindPrometheus, URL: "http://" + p.AdminAddr + "/metrics",
		Metrics: map[devcount.Counter]string{devcount.Requests: backendsMetric}}
	if err := src.Check(); err != nil {
		p.Close()
		return nil, err
	}
	for i := range pl.DUTs {
		pl.DUTs[i].Counters = src
	}
	fmt.Fprintf(stderr, "tlsbench qualify: %d backends from %s, counted at http://%s/stats\n", b.Count,
		p.Backends[0].Addr, p.AdminAddr)
	return &planBackends{pool: p, file: filepath.Join(dir, reports.BackendsFile), started: time.Now()}, nil
}

// wrap returns exec noting each run's seconds as the backends counted
// them (exec itself without a pool).
func (pb *planBackends) wrap(exec method.Executor) method.Executor {
	if pb == nil {
		return exec
	}
	return &backendsExec{Executor: exec, pb: pb}
}

// stop closes the pool and writes its counts, once (none without a pool):
// the first call's error, nil after.
func (pb *planBackends) stop() (err error) {
	if pb == nil {
		return nil
	}
	pb.once.Do(func() {
		pb.pool.Close()
		err = pb.write(time.Now())
	})
	return err
}

// backendsExec is an executor whose runs' seconds are counted at the
// backends too.
type backendsExec struct {
	method.Executor
	pb *planBackends
}

func (e *backendsExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	r, err := e.Executor.Run(ctx, req)
	if r != nil && len(r.Series) > 0 {
		run := reports.BackendRun{Started: r.Started, Seconds: make([]int64, len(r.Series))}
		for i, s := range r.Series {
			end := r.Started.Add(time.Duration(s.T) * time.Second)
			_, run.Seconds[i] = e.pb.pool.Between(end.Add(-time.Second), end)
		}
		e.pb.mu.Lock()
		e.pb.runs = append(e.pb.runs, run)
		e.pb.mu.Unlock()
	}
	return r, err
}

// write writes the pool's counts: each backend's and the total, each
// run's seconds, and the requests of every Unix second from the start to
// ended (the last hour at most: the pool's history).
func (pb *planBackends) write(ended time.Time) error {
	p := pb.pool
	first := max(pb.started.Unix(), ended.Unix()-int64(p.History)+1)
	pb.mu.Lock()
	c := reports.BackendCounts{Schema: schemas.Backends, Started: pb.started, Ended: ended,
		ResolutionMS: target.Resolution.Milliseconds(), Runs: pb.runs}
	pb.mu.Unlock()
	for _, s := range p.Seconds(first, ended.Unix()) {
		c.Seconds = append(c.Seconds, reports.BackendUnixSecond{Unix: s.Unix, Requests: s.Requests, Total: s.Total})
	}
	for _, s := range p.Stats() {
		c.Backends = append(c.Backends, reports.BackendStat{Name: s.Profile, Address: s.Address,
			Requests: s.Requests, Connections: s.Connections})
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(pb.file, append(data, '\n'), 0o644)
}
