package http2_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/internal/rawtls"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// spec is a short HTTP/2 run of engine e against addr, as the CLI makes it.
func spec(e vocab.Engine, addr string, ca *cipher.CA) runner.Spec {
	s := runner.Defaults(e)
	s.Protocol, s.Profile = "http/2", testProfile
	s.Target = metrics.Target{Address: addr, ServerName: "localhost"}
	s.Roots, s.Host = ca.Pool(), "localhost"
	s.Concurrency, s.Duration, s.Warmup, s.Drain = 2, 500*time.Millisecond, 0, 5*time.Second
	s.ReadTimeout = 2 * time.Second
	return s
}

// TestRunRecord: runner.Run over HTTP/2 (as `cps --http 2` and
// `throughput --http 2` make it): the preflight and the load succeed, the
// server's request count is the record's transactions plus the
// preflight's (one stream per connection: none left open), the record
// keeps the SETTINGS and the negotiated h2, and it is valid against the
// schema.
func TestRunRecord(t *testing.T) {
	for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
		t.Run(e.String(), func(t *testing.T) {
			srv := serveH2(t)
			s := spec(e, srv.addr, srv.ca)
			s.ExpectSize = map[vocab.Engine]int64{vocab.EngineCPS: 1 << 10, vocab.EngineThroughput: 1 << 20}[e]
			r, err := runner.Run(context.Background(), &s)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Preflight.OK || r.Errors.Total != 0 || r.Whole.Transactions == 0 || r.Preflight.Server != "h2test" {
				t.Fatalf("preflight %+v, errors %+v, %d transactions", r.Preflight, r.Errors, r.Whole.Transactions)
			}
			if got, want := srv.requests.Load(), r.Whole.Transactions+r.Preflight.Requests; got != want {
				t.Errorf("server answered %d requests, the record has %d", got, want)
			}
			if r.Negotiated.ALPN != "h2" || r.HTTP2 == nil || !r.HTTP2.SettingsAcked ||
				(r.Closes != nil) != (e == vocab.EngineCPS) || (r.Reconnects != nil) != (e == vocab.EngineThroughput) {
				t.Errorf("negotiated %+v, http2 %+v, closes %+v, reconnects %v", r.Negotiated, r.HTTP2, r.Closes,
					r.Reconnects)
			}
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			schematest.Valid(t, schemas.Run, "the record", data)
		})
	}
}

// TestPreflightRefusesOtherProtocols: a device that negotiates no ALPN
// fails the preflight as a mismatch naming what it chose (none), and one
// that speaks http/1.1 only refuses h2 with its alert: no load either way.
func TestPreflightRefusesOtherProtocols(t *testing.T) {
	p, _ := profiles.Builtin().Get(testProfile)
	for _, tc := range []struct {
		name   string
		alpn   []string
		class  vocab.Class
		naming string
	}{
		{"no ALPN", nil, vocab.ClassMismatch, "negotiated alpn none"},
		{"http/1.1 only", []string{"http/1.1"}, vocab.TLSAlert("no_application_protocol"), "no application protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, ca := rawtls.ServeWith(t, p, func(c *tls.Config) { c.NextProtos = tc.alpn },
				func(c net.Conn, r *textproto.Reader) {
					for rawtls.ReadRequest(r) {
						_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
					}
				})
			for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
				s := spec(e, addr, ca)
				r, err := runner.Run(context.Background(), &s)
				if err != nil {
					t.Fatal(err)
				}
				pf := r.Preflight
				if pf.OK || pf.Class != tc.class || !strings.Contains(pf.Error, tc.naming) || r.Complete ||
					r.Whole.Transactions != 0 || pf.Transactions != 1 {
					t.Errorf("%s: preflight %+v, complete %v, %d transactions; want %s naming %q before any load",
						e, pf, r.Complete, r.Whole.Transactions, tc.class, tc.naming)
				}
			}
		})
	}
}
