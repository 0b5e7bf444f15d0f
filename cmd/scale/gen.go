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
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/httpreq"
	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/profiles"
)

// generate is a generator child: one engine run, measured. The run is made
// as `tlsbench cps` and `tlsbench throughput` make theirs (job.NewOp,
// bench.Run); only the flags' parsing differs.
func generate(ctx context.Context, o *options) (*result, error) {
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
	spec := &job.Spec{
		Engine: o.engines[0],
		Conn: tlsconn.Config{
			Profile: p, Address: o.addr, Sources: sourceIPs(o.sources),
			ConnectTimeout: o.deadline, HandshakeTimeout: o.deadline,
			TLS: profiles.ClientOptions{ServerName: "localhost", RootCAs: ca},
		},
		Request: httpreq.Request{Host: "localhost", Path: job.DefaultPath(o.engines[0]), ExpectSize: -1, ReadTimeout: o.deadline, UserAgent: "tlsbench-scale"},
		Load:    bench.Config{Concurrency: o.conns, Duration: o.duration, Warmup: o.warmup, Drain: 3 * o.deadline},
	}
	r := &result{Engine: spec.Engine, Profile: p.Name, Connections: o.conns, Sources: o.sources, DeadlineS: o.deadline.Seconds(), Processes: 1}
	if spec.Engine == job.Throughput {
		spec.Request.Path = o.path
		spec.Load.Rate = o.rate
		r.Rate = o.rate
	}
	r.Path = spec.Request.Path
	op, err := job.NewOp(spec)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	r.RSSBaseMB = float64(rssBytes()) / 1e6
	prof := ""
	if o.memprof != "" {
		prof = o.memprof + "-" + spec.Engine + "-" + strconv.Itoa(os.Getpid()) + ".pprof"
	}
	if o.cpuprof != "" {
		f, err := os.Create(o.cpuprof + "-" + spec.Engine + "-" + strconv.Itoa(os.Getpid()) + ".pprof")
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	mem := watchMemory(prof)
	meter := job.StartCPU()
	t0 := time.Now()
	res, err := bench.Run(ctx, spec.Load, op)
	mem.stop(r)
	if err != nil {
		return nil, err
	}
	c := meter.Stop(res.Snapshot.AllOK)
	r.CPUS, r.WallS = c.CPUSeconds, time.Since(t0).Seconds()
	r.OpenS = res.Started.Sub(t0).Seconds()
	r.OpenPeak, r.HeldEnd = res.HeldPeak, res.HeldAtEnd
	r.WindowFrom, r.WindowTo = res.SteadyStart, res.SteadyStart.Add(res.Window)
	s := res.Snapshot
	r.Opened, r.Transactions, r.Errors, r.Abandoned = s.AllOpened, s.AllOK, s.AllErrors, res.Abandoned
	r.ErrorClasses = s.Errors
	if res.Window > 0 {
		r.Rate1 = float64(s.OK) / res.Window.Seconds()
	}
	r.LatencyMS = map[string][2]float64{}
	for _, ph := range []metrics.Phase{metrics.Connect, metrics.Handshake, metrics.Total} {
		if h := s.Hist[ph]; h != nil && h.TotalCount() > 0 {
			r.LatencyMS[ph.String()] = [2]float64{float64(metrics.ValueAtPercentile(h, 50)) / 1e3, float64(metrics.ValueAtPercentile(h, 99)) / 1e3}
		}
	}
	r.RSSPeakMB = float64(c.MaxRSSBytes) / 1e6
	r.KBPerConn = float64(c.MaxRSSBytes) / 1e3 / float64(o.conns)
	r.KBPerConnDx = (r.RSSPeakMB - r.RSSBaseMB) * 1e3 / float64(o.conns)
	return r, nil
}

// memWatch notes the Go heap and goroutine stacks whenever the RSS reaches
// a new high (best effort: under heavy load its goroutine runs late), and
// optionally writes a heap profile then.
type memWatch struct {
	done chan struct{}
	out  chan [2]float64
}

func watchMemory(prof string) *memWatch {
	m := &memWatch{done: make(chan struct{}), out: make(chan [2]float64, 1)}
	go func() {
		var peak int64
		var at [2]float64
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				m.out <- at
				return
			case <-t.C:
			}
			if rss := rssBytes(); rss > peak {
				peak = rss
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				at = [2]float64{float64(ms.HeapInuse) / 1e6, float64(ms.StackInuse) / 1e6}
				if prof != "" {
					writeHeapProfile(prof)
				}
			}
		}
	}()
	return m
}

func (m *memWatch) stop(r *result) {
	close(m.done)
	at := <-m.out
	r.HeapMB, r.StacksMB = at[0], at[1]
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

// rssBytes is the process's resident set now.
func rssBytes() int64 { return rssOf("self") }

// rssOf is process pid's resident set ("self" for this one).
func rssOf(pid string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
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
