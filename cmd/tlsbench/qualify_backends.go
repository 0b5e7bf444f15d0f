package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/schemas"
)

// backendsFile is the pool's counts at a campaign's end, in its directory.
const backendsFile = "backends.json"

// backendsMetric is the pool's requests in its /metrics; every backend's
// series added make the total.
const backendsMetric = "tlsbench_backend_requests_total"

// startPlanBackends starts the plan's pool of backends, if it has one, and
// makes the pool's requests every DUT's device counters (after plan.yaml is
// written: the plan as given has none); stop closes the pool and writes its
// counts to dir/backends.json. The pool's counters are read from its
// /metrics, requests only: the backends see neither the client's
// connections nor its handshakes.
func startPlanBackends(pl *plan.Plan, dir string, stderr io.Writer) (stop func() error, err error) {
	b := pl.Backends
	if b == nil {
		return func() error { return nil }, nil
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
	started := time.Now()
	return func() error {
		p.Close()
		return writeBackends(filepath.Join(dir, backendsFile), p, started, time.Now())
	}, nil
}

// writeBackends writes the pool's counts: each backend's and the total,
// and the requests of every second from started to ended (the last hour
// at most: the pool's history).
func writeBackends(file string, p *target.Backends, started, ended time.Time) error {
	first := max(started.Unix(), ended.Unix()-int64(p.History)+1)
	data, err := json.MarshalIndent(struct {
		Schema   string                 `json:"schema"`
		Started  time.Time              `json:"started"`
		Ended    time.Time              `json:"ended"`
		Backends []target.Stats         `json:"backends"`
		Seconds  []target.BackendSecond `json:"seconds"`
	}{schemas.Backends, started, ended, p.Stats(), p.Seconds(first, ended.Unix())}, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(file, append(data, '\n'), 0o644)
}
