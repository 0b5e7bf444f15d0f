package http2_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// benchServerEnv makes the test binary serve serveH2's server, so that a
// benchmark's CPU is the client's alone.
const benchServerEnv = "TLSBENCH_H2_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) == "1" {
		serveForBenchmark()
		return
	}
	os.Exit(m.Run())
}

// serveForBenchmark serves (h2 and HTTP/1.x on one listener) until
// SIGTERM, a child process (testdut.ServeChild).
func serveForBenchmark() {
	srv := serveH2(&testing.B{}) // serveH2 needs a testing.TB only to fail and clean up
	testdut.ServeChild(srv.ca.CertPEM(), "addr "+srv.addr)
}

// benchServer starts serveForBenchmark in a child process, or names the
// server of $TLSBENCH_H2_BENCH_TARGET ("ADDR,CA-PEM-FILE": an nginx with
// /1k and /1m, serving h2 and HTTP/1.x with the test profile's suite).
func benchServer(b *testing.B) (addr string, pool *x509.CertPool) {
	b.Helper()
	if addr, ca, ok := strings.Cut(os.Getenv("TLSBENCH_H2_BENCH_TARGET"), ","); ok {
		return addr, testdut.ReadPool(b, ca)
	}
	said, pool := testdut.StartChild(b, benchServerEnv)
	return said["addr"], pool
}

// BenchmarkCPSHTTP2 is one CPS transaction over HTTP/2 (connect, full
// handshake with ALPN h2, preface and SETTINGS, GET /1k on one stream, its
// response, GOAWAY and close), and the same over HTTP/1.0 (package cps)
// against the same server in another process: cpu-µs/op is the client
// process's CPU per transaction, their ratio the cost of HTTP/2's framing.
func BenchmarkCPSHTTP2(b *testing.B) {
	benchmark(b, vocab.EngineCPS, "/1k", 1024, []int{0})
}

// BenchmarkBulkHTTP2 is one 1 MiB response of the throughput engine on a
// kept connection, over HTTP/2 with 1 and 4 streams and over HTTP/1.1
// (package throughput, pipeline 1): cpu-µs/op × 1024 is the client's CPU
// per GiB of bodies.
func BenchmarkBulkHTTP2(b *testing.B) {
	benchmark(b, vocab.EngineThroughput, "/1m", 1<<20, []int{1, 4})
}

// benchmark runs engine e over HTTP/2 with each of streams, then over
// HTTP/1.x, against one server in another process.
func benchmark(b *testing.B, e vocab.Engine, path string, size int64, streams []int) {
	addr, pool := benchServer(b)
	for i := 0; i <= len(streams); i++ {
		a := args(e, addr, pool)
		a.Request.Path, a.Request.ExpectSize, a.Request.Host = path, size, "localhost"
		name := "http1"
		var op interface {
			NewWorker(int) (engine.Worker, error)
		}
		if i < len(streams) {
			name, a.Streams = fmt.Sprintf("http2-streams%d", streams[i]), streams[i]
			op = build(b, e, a)
		} else {
			var err error
			a.Conn.Profile, _ = profiles.Builtin().Get(testProfile) // no ALPN, as HTTP/1.x runs
			if e == vocab.EngineCPS {
				op, err = cps.New(cps.Config{Config: a.Conn, Request: a.Request})
			} else {
				op, err = throughput.New(throughput.Config{Config: a.Conn, Request: a.Request, Pipeline: 1})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.Run(strings.TrimSuffix(name, "-streams0"), func(b *testing.B) {
			w, _ := op.NewWorker(0)
			s := new(metrics.Sample)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := testdut.ProcessCPU()
			for i := 0; i < b.N; i++ {
				*s = metrics.Sample{Start: time.Now()}
				w.Do(context.Background(), s)
				if s.Class != "" {
					b.Fatalf("%s: %v", s.Class, s.Err)
				}
			}
			b.ReportMetric(float64((testdut.ProcessCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			if c, ok := w.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		})
	}
}
