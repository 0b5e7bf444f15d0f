package http3_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http1"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http2"
	"github.com/tlsbench/tlsbench/bench/protocol/http3"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// benchServerEnv makes the test binary serve serveH3's server, and the
// same handler over TCP (TLS 1.3, h2 and HTTP/1.1) at the same port
// number, so that a benchmark's CPU is the client's alone.
const benchServerEnv = "TLSBENCH_H3_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) == "1" {
		serveForBenchmark()
		return
	}
	os.Exit(m.Run())
}

// serveForBenchmark prints the address, the CA's PEM file and "ready",
// and serves until SIGTERM.
func serveForBenchmark() {
	tb := &testing.B{} // serveH3 needs a testing.TB only to fail and clean up
	anyProto = true
	srv := serveH3(tb, nil, nil)
	p, _ := profiles.Builtin().Get(testProfile)
	leaf, err := srv.ca.Leaf(p.ServerCertKey(), []string{"localhost"}, time.Hour)
	if err != nil {
		panic(err)
	}
	cfg := p.ServerConfig(leaf)
	cfg.NextProtos = []string{"h2", "http/1.1"}
	ln, err := tls.Listen("tcp", srv.addr, cfg)
	if err != nil {
		panic(err)
	}
	go func() { _ = (&http.Server{Handler: srv.handler}).Serve(ln) }()
	f, _ := os.CreateTemp("", "h3bench-ca*.pem")
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

// BenchmarkCPSHTTP3 is one CPS transaction over HTTP/3 (a UDP socket, the
// QUIC handshake with TLS 1.3 X25519 and ALPN h3, GET /1k on one request
// stream, its response, CONNECTION_CLOSE), with a socket per connection
// (the engine's) and with one shared socket, and the same transaction over
// TCP with the same profile, HTTP/1.1 and HTTP/2, against the same server
// in another process: cpu-µs/op is the client process's CPU per
// transaction, their ratios QUIC's cost against TCP's.
func BenchmarkCPSHTTP3(b *testing.B) {
	addr, pool := benchServer(b)
	for _, proto := range []string{"http/3", "http/3-shared", "http/1.1", "http/2"} {
		b.Run(strings.ReplaceAll(proto, "/", ""), func(b *testing.B) {
			name, _, shared := strings.Cut(proto, "-")
			a := args(vocab.EngineCPS, addr, pool)
			a.Request.Path, a.Request.ExpectSize, a.Request.Host = "/1k", 1024, "localhost"
			p, _ := profiles.Builtin().Get(testProfile)
			if pr, _ := protocol.Lookup(name); pr.OfferALPN {
				a.Conn.Profile = p.Speaking(pr.ALPN)
			} else {
				a.Conn.Profile = p
			}
			proto, err := protocol.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			op, err := proto.Build(vocab.EngineCPS, a)
			if err != nil {
				b.Fatal(err)
			}
			if shared {
				release, err := http3.Share(op)
				if err != nil {
					b.Fatal(err)
				}
				defer release()
			}
			w, _ := op.NewWorker(0)
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

// BenchmarkThroughputHTTP3 is one 1 MiB response on a kept connection over
// HTTP/3 (one stream at a time) and over TCP with the same TLS 1.3 profile,
// HTTP/1.1 and HTTP/2, against the same server in another process:
// cpu-ms/GB is the client process's CPU per GB of bodies (10^9 bytes).
func BenchmarkThroughputHTTP3(b *testing.B) {
	addr, pool := benchServer(b)
	for _, name := range []string{"http/3", "http/1.1", "http/2"} {
		b.Run(strings.ReplaceAll(name, "/", ""), func(b *testing.B) {
			a := args(vocab.EngineThroughput, addr, pool)
			a.Request.Path, a.Request.ExpectSize, a.Request.Host, a.Pipeline = "/1m", 1<<20, "localhost", 1
			p, _ := profiles.Builtin().Get(testProfile)
			proto, err := protocol.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			if a.Conn.Profile = p; proto.OfferALPN {
				a.Conn.Profile = p.Speaking(proto.ALPN)
			}
			op, err := proto.Build(vocab.EngineThroughput, a)
			if err != nil {
				b.Fatal(err)
			}
			w, _ := op.NewWorker(0)
			defer func() { _ = w.(interface{ Close() error }).Close() }()
			s := new(metrics.Sample)
			b.SetBytes(1 << 20)
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				*s = metrics.Sample{Start: time.Now()}
				w.Do(context.Background(), s)
				if s.Class != "" {
					b.Fatalf("%s: %v", s.Class, s.Err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1e3/(float64(b.N)*(1<<20)/1e9), "cpu-ms/GB")
		})
	}
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
