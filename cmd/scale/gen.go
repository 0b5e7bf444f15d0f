package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// generated is what a generator child prints: its run record, as
// `tlsbench cps` and `tlsbench throughput` make theirs (runner.Run), and its
// memory beside it.
type generated struct {
	Run    *metrics.Run `json:"run"`
	Memory memory       `json:"memory"`
}

// memory is a generator's memory: RSS before any connection, its peak
// (VmHWM, the record's client.max_rss_bytes), and the Go heap and goroutine
// stacks at the sample of the highest RSS.
type memory struct {
	RSSBaseMB float64 `json:"rss_base_mb"`
	RSSPeakMB float64 `json:"rss_peak_mb"`
	HeapMB    float64 `json:"heap_inuse_mb"`
	StacksMB  float64 `json:"stacks_inuse_mb"`
}

// generate is a generator child: one engine run, measured; shard i of n.
func generate(ctx context.Context, o *options) (*generated, error) {
	if o.addr == "" {
		return nil, errors.New("generator: no --addr")
	}
	o.engines = o.engines[len(o.engines)-1:] // the parent's --engine comes last
	p, err := profiles.Builtin().Get(o.profile)
	if err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(o.ca)
	if err != nil {
		return nil, err
	}
	ca := x509.NewCertPool()
	if !ca.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", o.ca)
	}
	spec := runner.Defaults(vocab.Engine(o.engines[0]))
	spec.Profile, spec.Target = p.Name, metrics.Target{Address: o.addr, ServerName: "localhost"}
	spec.Sources, spec.Roots, spec.Host, spec.UserAgent = sourceIPs(o.sources), ca, "localhost", "tlsbench-scale"
	spec.ConnectTimeout, spec.HandshakeTimeout, spec.ReadTimeout = o.deadline, o.deadline, o.deadline
	spec.Concurrency = o.conns
	if o.http == 3 {
		spec.Protocol = "http/3"
	}
	spec.Duration = o.duration
	spec.Warmup = o.warmup
	spec.Drain = 3 * o.deadline
	spec.AbortAfter = 0
	spec.Tool = metrics.Tool{Name: "tlsbench-scale", GoVersion: runtime.Version()}
	spec.Agent = &runner.Agent{Name: fmt.Sprintf("scale-%d", o.shard), Shard: o.shard, Shards: o.shards}
	if spec.Engine == vocab.EngineThroughput {
		spec.Path = o.path
		spec.Rate = o.rate
	}
	runtime.GC()
	g := &generated{Memory: memory{RSSBaseMB: float64(testdut.RSS(0)) / 1e6}}
	suffix := "-" + spec.Engine.String() + "-" + strconv.Itoa(os.Getpid()) + ".pprof"
	prof := ""
	if o.memprof != "" {
		prof = o.memprof + suffix
	}
	if o.cpuprof != "" {
		f, err := os.Create(o.cpuprof + suffix)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	stopWatch := watchMemory(prof, &g.Memory)
	g.Run, err = runner.Run(ctx, &spec)
	stopWatch()
	if err != nil {
		return nil, err
	}
	if g.Run.Preflight != nil && !g.Run.Preflight.OK {
		return nil, fmt.Errorf("preflight failed: %s %s", g.Run.Preflight.Class, g.Run.Preflight.Error)
	}
	g.Memory.RSSPeakMB = float64(g.Run.Client.MaxRSSBytes) / 1e6
	return g, nil
}

// watchMemory notes in r the Go heap and goroutine stacks whenever the RSS
// reaches a new high (best effort: under heavy load its goroutine runs
// late), and optionally writes a heap profile then, until stop.
func watchMemory(prof string, r *memory) (stop func()) {
	var peak int64
	return everySecond(func() {
		if rss := testdut.RSS(0); rss > peak {
			peak = rss
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			r.HeapMB, r.StacksMB = float64(ms.HeapInuse)/1e6, float64(ms.StackInuse)/1e6
			if prof != "" {
				writeHeapProfile(prof)
			}
		}
	})
}

// everySecond calls f every second, in a goroutine of its own, until stop,
// which returns once the goroutine has ended.
func everySecond(f func()) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// sourcePrefix holds the generators' source addresses (sourceIPs).
const sourcePrefix = "127.1.0.0/16"

// sourceIPs returns n addresses from 127.1.0.1 on.
func sourceIPs(n int) []net.IP {
	out := make([]net.IP, n)
	for i := range out {
		v := uint32(127<<24|1<<16) + uint32(i) + 1
		out[i] = net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out
}

// writeHeapProfile writes the heap profile (debugging the budget).
func writeHeapProfile(file string) {
	f, err := os.Create(file)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}
