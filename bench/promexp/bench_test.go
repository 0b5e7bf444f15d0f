//go:build unix

package promexp_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/promexp"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// BenchmarkScrape is one scrape (the whole registry: the run, the Go and
// process collectors) of a run whose recorder holds 100,000
// transactions in 4 shards (every phase's histogram populated): the whole
// cost of the metrics, paid once per scrape, never per transaction.
func BenchmarkScrape(b *testing.B) {
	e := promexp.New()
	r := e.Begin(promexp.RunLabels{Engine: "cps", Profile: "p", Shard: -1})
	start := time.Now()
	rec := metrics.NewRecorder(4, start)
	var d [vocab.NumTimed]time.Duration
	for i := range 100000 {
		for p := range d {
			d[p] = time.Duration(i%5000+p+1) * time.Microsecond * 10
		}
		rec.Record(i, &metrics.Sample{Steady: true, Dur: d, Handshake: true})
	}
	r.Live(engine.Live{Recorder: rec, Started: start, SteadyStart: start, End: start.Add(time.Hour)})
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime(b)
	for range b.N {
		promexp.Uncache(r)
		if _, err := e.Registry().Gather(); err != nil {
			b.Fatal(err)
		}
	}
	// CPU, not wall time: on a loaded machine ns/op counts the waits for
	// a core.
	b.ReportMetric(float64((cpuTime(b)-c0).Nanoseconds())/float64(b.N)/1e6, "cpu-ms/scrape")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngineScraped is bench's BenchmarkEngine (closed loop, a no-op
// transaction) with the exporter's hook, scraped every 100 ms (ten times
// a 1 s scrape interval), beside the same without: the engine's CPU per
// transaction with and without the metrics.
func BenchmarkEngineScraped(b *testing.B) {
	for _, scraped := range []bool{false, true} {
		name := "plain"
		if scraped {
			name = "scraped-100ms"
		}
		b.Run(name, func(b *testing.B) {
			var txs int64
			var cpu time.Duration
			for range b.N {
				cfg := engine.Config{Load: engine.Load{Concurrency: 4, Duration: time.Second}}
				e := promexp.New()
				stop := make(chan struct{})
				done := make(chan struct{})
				if scraped {
					r := e.Begin(promexp.RunLabels{Engine: "cps", Profile: "p", Shard: -1})
					cfg.Live = r.Live
					go func() {
						defer close(done)
						t := time.NewTicker(100 * time.Millisecond)
						defer t.Stop()
						for {
							select {
							case <-t.C:
								_, _ = e.Registry().Gather()
							case <-stop:
								return
							}
						}
					}()
				} else {
					close(done)
				}
				c0 := cpuTime(b)
				out, err := engine.Run(context.Background(), cfg, nopTxn{})
				close(stop)
				<-done
				cpu += cpuTime(b) - c0
				if err != nil {
					b.Fatal(err)
				}
				txs += out.Attempts
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(txs), "cpu-ns/tx")
			b.ReportMetric(float64(txs)/float64(b.N), "tx/run")
		})
	}
}

type nopTxn struct{}
type nopTxnWorker struct{}

func (nopTxn) NewWorker(int) (engine.Worker, error) { return nopTxnWorker{}, nil }
func (nopTxnWorker) Do(_ context.Context, s *metrics.Sample) {
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}
