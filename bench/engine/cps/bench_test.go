package cps_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// benchTargetEnv makes the test binary serve the reference target, so that
// a benchmark's allocations and CPU are the client's alone.
const benchTargetEnv = "TLSBENCH_BENCH_TARGET"

func TestMain(m *testing.M) {
	if os.Getenv(benchTargetEnv) == "1" {
		serveForBenchmark()
		return
	}
	os.Exit(m.Run())
}

// serveForBenchmark serves the reference target, a "profile addr" line a
// listener, until SIGTERM (testdut.ServeChild).
func serveForBenchmark() {
	tg, err := target.Start(target.Config{Profiles: profiles.Builtin().All(),
		Resumption: target.Resumption{Tickets: true, PSK: true}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	var lines []string
	for _, l := range tg.Listeners {
		lines = append(lines, l.Profile.Name+" "+l.Addr)
	}
	testdut.ServeChild(tg.CA.CertPEM(), lines...)
	tg.Close()
}

// benchTarget starts the reference target in a child process: each
// profile's address, and the CA's pool.
func benchTarget(b *testing.B) (addrs map[string]string, pool *x509.CertPool) {
	return testdut.StartChild(b, benchTargetEnv)
}

// BenchmarkTransaction is one CPS transaction (connect, full handshake,
// verification, GET /1k, response, close) against the reference target in
// another process: allocs/op and ns/op are the client's.
func BenchmarkTransaction(b *testing.B) {
	addrs, pool := benchTarget(b)
	for _, name := range profiles.SeedProfiles {
		b.Run(name, func(b *testing.B) {
			p, _ := profiles.Builtin().Get(name)
			cfg := cps.Defaults()
			cfg.Profile, cfg.Address, cfg.Host = p, addrs[name], "localhost"
			cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: pool}
			cfg.ExpectSize = 1024
			op, err := cps.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			w, _ := op.NewWorker(0)
			ctx := context.Background()
			s := new(metrics.Sample) // one per worker, as the engine does
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				*s = metrics.Sample{}
				s.Start = time.Now()
				w.Do(ctx, s)
				if s.Class != "" {
					b.Fatalf("%s: %v", s.Class, s.Err)
				}
			}
		})
	}
}

// BenchmarkResumption is BenchmarkTransaction with every handshake full
// (SR=0) and then with every one after the worker's first resuming a
// session (SR=1): TLS 1.2 tickets and TLS 1.3 PSK. Its cpu-µs/op is the
// client process's CPU (user + system) per transaction, the figure the
// datasheets' "with and without reuse" rows are about on the generator's
// side.
func BenchmarkResumption(b *testing.B) {
	addrs, pool := benchTarget(b)
	for _, name := range []string{"ecdhe-ecdsa-aes128-sha256-p256", "tls13-aes128-gcm-x25519"} {
		for _, kind := range []struct {
			name   string
			resume float64
		}{{"full", 0}, {"resumed", 1}} {
			b.Run(name+"/"+kind.name, func(b *testing.B) {
				p, _ := profiles.Builtin().Get(name)
				cfg := cps.Defaults()
				cfg.Profile, cfg.Address, cfg.Host = p, addrs[name], "localhost"
				cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: pool}
				cfg.ExpectSize, cfg.Resume = 1024, kind.resume
				op, err := cps.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				w, _ := op.NewWorker(0)
				ctx := context.Background()
				s := new(metrics.Sample)
				do := func() {
					*s = metrics.Sample{}
					s.Start = time.Now()
					w.Do(ctx, s)
					if s.Class != "" || s.Resumed != (kind.resume == 1) {
						b.Fatalf("%s: %v (resumed %v)", s.Class, s.Err, s.Resumed)
					}
				}
				*s = metrics.Sample{}
				w.Do(ctx, s) // the worker's first connection is full
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := testdut.ProcessCPU()
				for i := 0; i < b.N; i++ {
					do()
				}
				b.ReportMetric(float64((testdut.ProcessCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}
