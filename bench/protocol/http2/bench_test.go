package http2_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
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

// serveForBenchmark prints the address, the CA's PEM file and "ready",
// and serves (h2 and HTTP/1.x on one listener) until SIGTERM.
func serveForBenchmark() {
	tb := &testing.B{} // serveH2 needs a testing.TB only to fail and clean up
	srv := serveH2(tb)
	f, _ := os.CreateTemp("", "h2bench-ca*.pem")
	_, _ = f.Write(srv.ca.CertPEM())
	f.Close()
	fmt.Println("addr", srv.addr)
	fmt.Println("ca", f.Name())
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case <-time.After(10 * time.Minute):
	}
	os.Remove(f.Name())
}

// benchServer starts serveForBenchmark in a child process.
func benchServer(b *testing.B) (addr string, pool *x509.CertPool) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "addr":
			addr = v
		case "ca":
			pem, err := os.ReadFile(v)
			if err != nil {
				b.Fatal(err)
			}
			pool = x509.NewCertPool()
			pool.AppendCertsFromPEM(pem)
		}
	}
	if pool == nil {
		b.Fatal("the server process did not start")
	}
	return addr, pool
}

// BenchmarkCPSHTTP2 is one CPS transaction over HTTP/2 (connect, full
// handshake with ALPN h2, preface and SETTINGS, GET /1k on one stream, its
// response, GOAWAY and close), and the same over HTTP/1.0 (package cps)
// against the same server in another process: cpu-µs/op is the client
// process's CPU per transaction, their ratio the cost of HTTP/2's framing.
func BenchmarkCPSHTTP2(b *testing.B) {
	addr, pool := benchServer(b)
	for _, proto := range []string{"http/2", "http/1.0"} {
		b.Run(strings.ReplaceAll(proto, "/", ""), func(b *testing.B) {
			a := args(vocab.EngineCPS, addr, pool)
			a.Request.Path, a.Request.ExpectSize, a.Request.Host = "/1k", 1024, "localhost"
			var w interface {
				Do(context.Context, *metrics.Sample)
			}
			if proto == "http/2" {
				w, _ = build(b, vocab.EngineCPS, a).NewWorker(0)
			} else {
				a.Conn.Profile, _ = profiles.Builtin().Get(testProfile) // no ALPN, as HTTP/1.0 runs
				op, err := cps.New(cps.Config{Config: a.Conn, Request: a.Request})
				if err != nil {
					b.Fatal(err)
				}
				w, _ = op.NewWorker(0)
			}
			s := new(metrics.Sample)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				*s = metrics.Sample{Start: time.Now()}
				w.Do(context.Background(), s)
				if s.Class != "" {
					b.Fatalf("%s: %v", s.Class, s.Err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
