//go:build unix

package engine_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// nopOp's transactions do nothing: what a run costs per transaction is the
// engine's own (scheduling, the sample, the recorder).
type nopOp struct{}

type nopWorker struct{}

func (nopOp) NewWorker(int) (engine.Worker, error) { return nopWorker{}, nil }

func (nopWorker) Do(_ context.Context, s *metrics.Sample) {
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

// cpuTime is the process's user and system CPU so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngine runs a no-op operation in closed and open loop and
// reports the engine's CPU and allocations per transaction (ns/op is one
// whole run).
func BenchmarkEngine(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  engine.Config
	}{
		{"closed", engine.Config{Load: engine.Load{Concurrency: 4, Duration: 300 * time.Millisecond}}},
		{"open", engine.Config{Load: engine.Load{Concurrency: 16, Rate: 5000, Duration: 300 * time.Millisecond}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var txs, mallocs int64
			var cpu time.Duration
			var m0, m1 runtime.MemStats
			for range b.N {
				runtime.ReadMemStats(&m0)
				c0 := cpuTime(b)
				res, err := engine.Run(context.Background(), tc.cfg, nopOp{})
				if err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime(b) - c0
				runtime.ReadMemStats(&m1)
				mallocs += int64(m1.Mallocs - m0.Mallocs)
				txs += res.Attempts
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(txs), "cpu-ns/tx")
			b.ReportMetric(float64(mallocs)/float64(txs), "allocs/tx")
			b.ReportMetric(float64(txs)/float64(b.N), "tx/run")
		})
	}
}
