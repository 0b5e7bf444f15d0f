package http3_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http1"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http2"
	"github.com/tlsbench/tlsbench/bench/protocol/http3"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
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
// and serves until SIGTERM (testdut.ServeChild).
func serveForBenchmark() {
	tb := &testing.B{} // serveH3 needs a testing.TB only to fail and clean up
	anyProto = true
	p, _ := profiles.Builtin().Get(testProfile)
	var srv *h3Server
	var ln net.Listener
	for i := 0; ln == nil && i < 20; i++ { // until the UDP port's number is free over TCP too
		srv = serveH3(tb, nil, nil)
		leaf, err := srv.ca.Leaf(p.ServerCertKey(), []string{"localhost"}, time.Hour)
		if err != nil {
			panic(err)
		}
		cfg := p.ServerConfig(leaf)
		cfg.NextProtos = []string{"h2", "http/1.1"}
		ln, _ = tls.Listen("tcp", srv.addr, cfg)
	}
	if ln == nil {
		panic("no port free over both UDP and TCP")
	}
	go func() { _ = (&http.Server{Handler: srv.handler}).Serve(ln) }()
	testdut.ServeChild(srv.ca.CertPEM(), "addr "+srv.addr)
}

// benchServer starts serveForBenchmark in a child process.
func benchServer(b *testing.B) (addr string, pool *x509.CertPool) {
	said, pool := testdut.StartChild(b, benchServerEnv)
	return said["addr"], pool
}

// BenchmarkCPSHTTP3 is one CPS transaction over HTTP/3 (a UDP socket, the
// QUIC handshake with TLS 1.3 X25519 and ALPN h3, GET /1k on one request
// stream, its response, CONNECTION_CLOSE), with a socket per connection
// (the engine's) and with one shared socket, and the same transaction over
// TCP with the same profile, HTTP/1.1 and HTTP/2, against the same server
// in another process: cpu-µs/op is the client process's CPU per
// transaction, their ratios QUIC's cost against TCP's. One worker, then
// four at once (-c4: the transactions shared among them, as a loaded run's
// workers keep the client's processors busy); pkts-out/op and pkts-in/op
// are QUIC's packets per transaction.
func BenchmarkCPSHTTP3(b *testing.B) {
	addr, pool := benchServer(b)
	for _, proto := range []string{"http/3", "http/3-shared", "http/1.1", "http/2", "http/3-c4", "http/1.1-c4",
		"http/2-c4"} {
		b.Run(strings.ReplaceAll(proto, "/", ""), func(b *testing.B) {
			name, mode, _ := strings.Cut(proto, "-")
			workers := map[string]int{"c4": 4}[mode]
			cpu := measure(b, name, vocab.EngineCPS, addr, pool, "/1k", 1024, mode == "shared", max(workers, 1))
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
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
			b.SetBytes(1 << 20)
			cpu := measure(b, name, vocab.EngineThroughput, addr, pool, "/1m", 1<<20, false, 1)
			b.ReportMetric(float64(cpu.Microseconds())/1e3/(float64(b.N)*(1<<20)/1e9), "cpu-ms/GB")
		})
	}
}

// measure makes b.N transactions of engine e over the protocol named name
// (shared: HTTP/3 on one shared socket) with the profile, GET path of size
// bytes, shared among workers at once, and returns the client process's
// CPU meanwhile.
func measure(b *testing.B, name string, e vocab.Engine, addr string, pool *x509.CertPool, path string, size int64,
	shared bool, workers int) time.Duration {
	a := args(e, addr, pool)
	a.Request.Path, a.Request.ExpectSize, a.Request.Host, a.Pipeline = path, size, "localhost", 1
	proto, err := protocol.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := profiles.Builtin().Get(testProfile)
	if a.Conn.Profile = p; proto.OfferALPN {
		a.Conn.Profile = p.Speaking(proto.ALPN)
	}
	op, err := proto.Build(e, a)
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
	ws := make([]engine.Worker, workers)
	for i := range ws {
		ws[i], _ = op.NewWorker(i)
		defer func() { _ = ws[i].(interface{ Close() error }).Close() }()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testdut.ProcessCPU()
	var wg sync.WaitGroup
	for i, w := range ws {
		n := b.N / workers
		if i < b.N%workers {
			n++
		}
		wg.Go(func() {
			s := new(metrics.Sample)
			for range n {
				*s = metrics.Sample{Start: time.Now()}
				w.Do(context.Background(), s)
				if s.Class != "" {
					b.Errorf("%s: %v", s.Class, s.Err)
					return
				}
			}
		})
	}
	wg.Wait()
	cpu := testdut.ProcessCPU() - cpu0
	if q, ok := op.(interface{ QUIC() *metrics.QUIC }); ok && b.N > 0 {
		st := q.QUIC()
		b.ReportMetric(float64(st.PacketsSent)/float64(b.N), "pkts-out/op")
		b.ReportMetric(float64(st.PacketsReceived)/float64(b.N), "pkts-in/op")
	}
	return cpu
}
