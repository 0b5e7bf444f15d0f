package runner_test

import (
	"context"
	"testing"

	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// probe runs the resumption probe of spec: whether the target resumed,
// and the requests it answered.
func probe(t *testing.T, spec *runner.Spec) (resumed bool, requests int64) {
	t.Helper()
	pf, err := runner.ProbeResumption(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !pf.OK && pf.Class != vocab.ClassNotResumed {
		t.Fatalf("probe failed: %+v", pf)
	}
	return pf.Resumed > 0, pf.Requests
}

// TestProbeResumptionCaddy: the resumption probe speaks the cell's
// protocol. Against Caddy (TLS 1.3 tickets, QUIC's over HTTP/3), each
// protocol's probe resumes, and Caddy's access log has exactly the
// probe's requests, in that protocol (proto HTTP/1.0: cps over HTTP/1.1
// asks for one request a connection), and none in the others.
func TestProbeResumptionCaddy(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	c := testdut.StartCaddyT(t, testdut.CaddyConfig{Dir: dir, Cert: cert, Curves: []string{"x25519"}})
	var total int64
	for _, tc := range []struct{ protocol, proto string }{
		{"http/1.1", "HTTP/1.0"}, {"http/2", "HTTP/2.0"}, {"http/3", "HTTP/3.0"},
	} {
		before := c.Requests(t, total)
		spec := protoSpec(tc.protocol, c.Addr, ca)
		spec.Engine, spec.Streams = vocab.EngineThroughput, 4 // a throughput cell's probe too
		if tc.protocol == "http/1.1" {
			spec.Streams, spec.Pipeline = 0, 4
		}
		resumed, n := probe(t, spec)
		total += n
		got := c.Requests(t, total)
		t.Logf("%s: resumed %v, %d requests; caddy logged %v", tc.protocol, resumed, n, got)
		if !resumed || n != 2 {
			t.Errorf("%s: resumed %v after %d requests, want a resumption after 2", tc.protocol, resumed, n)
		}
		for k, m := range got {
			if d, key := m-before[k], tc.proto+" 200"; k == key && d != n || k != key && d != 0 {
				t.Errorf("%s: caddy logged %d more %q, the probe made %d %s GETs", tc.protocol, d, k, n, tc.proto)
			}
		}
		if got[tc.proto+" 200"] == before[tc.proto+" 200"] {
			t.Errorf("%s: caddy logged no %s request: %v", tc.protocol, tc.proto, got)
		}
	}
}

// TestProbeResumptionRefused: a server with tickets resumes, the
// reference target without (no tickets, no cache) refuses, in TLS 1.2 and
// 1.3; the refusal comes after one request, the full handshake's.
func TestProbeResumptionRefused(t *testing.T) {
	for _, tc := range []struct {
		profile string
		resume  bool
	}{
		{"ecdhe-ecdsa-aes128-sha256-p256", true},
		{"ecdhe-ecdsa-aes128-sha256-p256", false},
		{"tls13-aes128-gcm-x25519", true},
		{"tls13-aes128-gcm-x25519", false},
	} {
		tgt := testdut.StartTargetWith(t, target.Config{Resumption: target.Resumption{Tickets: tc.resume,
			PSK: tc.resume}}, tc.profile)
		l := tgt.Listeners[0]
		before := l.Stats()
		resumed, n := probe(t, resumeSpec(tc.profile, l.Addr, tgt.CA, 0))
		after := l.Stats()
		want := int64(1)
		if tc.resume {
			want = 2
		}
		if resumed != tc.resume || n != want || after.Requests-before.Requests != want {
			t.Errorf("%s tickets %v: resumed %v, %d requests (the target counted %d); want %v, %d", tc.profile,
				tc.resume, resumed, n, after.Requests-before.Requests, tc.resume, want)
		}
	}
}
