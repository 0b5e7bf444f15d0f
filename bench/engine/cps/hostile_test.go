package cps_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/textproto"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/internal/rawtls"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestHostileServers: what a hostile device sends is capped, lands in a
// clear class, and neither hangs the run nor grows the generator's memory.
func TestHostileServers(t *testing.T) {
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	chunk := strings.Repeat("x", 16<<10)
	for _, tc := range []struct {
		name   string
		engine string
		serve  func(c net.Conn, r *textproto.Reader)
		class  vocab.Class
	}{
		{
			// Headers that never end.
			name: "endless headers", engine: "cps", class: vocab.ClassHeaderSize,
			serve: func(c net.Conn, r *textproto.Reader) {
				rawtls.ReadRequest(r)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\n")
				for i := 0; i < 2000; i++ {
					if _, err := fmt.Fprintf(c, "X-%d: %s\r\n", i, chunk[:1000]); err != nil {
						return
					}
				}
			},
		},
		{
			// A Content-Length of a terabyte on the CPS path.
			name: "huge Content-Length", engine: "cps", class: vocab.ClassBodySize,
			serve: func(c net.Conn, r *textproto.Reader) {
				rawtls.ReadRequest(r)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n")
				for i := 0; i < 64; i++ {
					if _, err := c.Write([]byte(chunk)); err != nil {
						return
					}
				}
			},
		},
		{
			// A body without length that never ends, on the CPS path.
			name: "unbounded body", engine: "cps", class: vocab.ClassBodySize,
			serve: func(c net.Conn, r *textproto.Reader) {
				rawtls.ReadRequest(r)
				fmt.Fprintf(c, "HTTP/1.0 200 OK\r\n\r\n")
				for i := 0; i < 2048; i++ { // 32 MiB at most, above the 16 MiB cap
					if _, err := c.Write([]byte(chunk)); err != nil {
						return
					}
				}
			},
		},
		{
			// 64 KiB of body in one-byte TLS records: slow, but bounded.
			name: "tiny records", engine: "throughput",
			serve: func(c net.Conn, r *textproto.Reader) {
				for rawtls.ReadRequest(r) {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", 64<<10)
					for i := 0; i < 64<<10; i++ {
						if _, err := c.Write([]byte{'x'}); err != nil {
							return
						}
					}
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, ca := rawtls.Serve(t, p, tc.serve)
			conn := tlsconn.Config{Settings: tlsconn.Settings{ConnectTimeout: 2 * time.Second, HandshakeTimeout: 2 * time.Second}, Profile: p, Address: addr,
				TLS: &tls.Config{ServerName: "localhost", RootCAs: ca.Pool()}}
			req := httpreq.Request{Path: "/", ExpectSize: -1, ReadTimeout: 2 * time.Second}
			var op engine.Op
			var err error
			if tc.engine == "cps" {
				op, err = cps.New(cps.Config{Config: conn, Request: req, MaxBody: 16 << 20})
			} else {
				op, err = throughput.New(throughput.Config{Config: conn, Request: req, Pipeline: 1})
			}
			if err != nil {
				t.Fatal(err)
			}
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2, Duration: 500 * time.Millisecond, Drain: 10 * time.Second}}, op)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("run took %s", took)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 16<<20 { // bodies are streamed, never held
				t.Errorf("heap grew by %d MiB", grown>>20)
			}
			s := res.Snapshot
			t.Logf("ok %d, errors %v %v", s.AllOK, s.Errors, s.Examples)
			if tc.class == "" {
				if s.AllErrors != 0 || s.AllOK == 0 {
					t.Errorf("ok %d, errors %v", s.AllOK, s.Errors)
				}
				return
			}
			if s.AllOK != 0 || len(s.Errors) != 1 || s.Errors[tc.class] == 0 {
				t.Errorf("errors %v, want only %s", s.Errors, tc.class)
			}
		})
	}
}
