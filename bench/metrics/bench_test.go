package metrics_test

import (
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// BenchmarkRecord is the engine's per-transaction bookkeeping.
func BenchmarkRecord(b *testing.B) {
	r := metrics.NewRecorder(4, time.Now())
	var d [vocab.NumTimed]time.Duration
	for p := range d {
		d[p] = time.Duration(p+1) * 300 * time.Microsecond
	}
	s := metrics.Sample{Steady: true, Handshake: true, Opened: true, Dur: d, Payload: 1024, WireIn: 3000, WireOut: 500}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Record(i, &s)
			i++
		}
	})
}

// BenchmarkSnapshot merges the shards' histograms (once per run, and per
// second for the series' interval histograms).
func BenchmarkSnapshot(b *testing.B) {
	r := metrics.NewRecorder(4, time.Now())
	var d [vocab.NumTimed]time.Duration
	for i := 0; i < 100000; i++ {
		for p := range d {
			d[p] = time.Duration(i%5000+p) * time.Microsecond
		}
		r.Record(i, &metrics.Sample{Steady: true, Dur: d})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = r.Snapshot()
	}
}
