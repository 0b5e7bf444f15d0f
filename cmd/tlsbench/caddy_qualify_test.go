package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestQualifyCaddyProtocols: issue 43's published table. A campaign of one
// TLS 1.3 profile's cps over HTTP/1.1, HTTP/2 and HTTP/3 against Caddy (a
// DUT by URL) publishes one table with a row per protocol, and Caddy's own
// access log counts, per protocol, exactly the requests of the ledger's
// runs, their preflights and the preliminary phase's resumption probes
// included.
func TestQualifyCaddyProtocols(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	c := testdut.StartCaddyT(t, testdut.CaddyConfig{Dir: filepath.Join(dir, "caddy"), Cert: cert,
		Curves: []string{"x25519"}})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	const profile = "tls13-aes128-gcm-x25519"
	var tests []string
	for _, h := range []string{"1.1", "2", "3"} {
		tests = append(tests, fmt.Sprintf("  - {engine: cps, path: /1k, http: %q, profiles: [%s]}", h, profile))
	}
	planFile := filepath.Join(dir, "plan.yaml")
	pl := fmt.Sprintf(`name: caddy-protocols
duts:
  - {name: caddy, url: "https://localhost:%s/", cacert: %s}
tests:
%s
method:
  duration: 500ms
  warmup: 200ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 300ms, min_gain: 5%%}
  accept: {max_generator_cpu: 100%%}
  final: {min_accepted: 2, max_runs: 3, tolerance: 50%%}
`, c.Addr[strings.LastIndex(c.Addr, ":")+1:], caFile, strings.Join(tests, "\n"))
	if err := os.WriteFile(planFile, []byte(pl), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "campaign")
	code, stdout, stderr := invoke(t, context.Background(), "qualify", "-q", "--plan", planFile, "--out", out)
	t.Logf("qualify: exit %d\n%s\n%s", code, stdout, stderr)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	// The published table: a row per protocol.
	for _, p := range []string{"HTTP/1.1", "HTTP/2", "HTTP/3"} {
		if !regexp.MustCompile(`(?m)^caddy +` + profile + ` +` + p + ` +TLS_AES_128_GCM_SHA256 `).MatchString(stdout) {
			t.Errorf("the published table has no %s row:\n%s", p, stdout)
		}
	}
	// Every format shows HTTP/3's connect phase as n/a (QUIC: no TCP
	// connect), never 0 or absent unexplained.
	for f, re := range map[string]string{"text": `(?m)^connect +n/a +n/a`, "md": `\| connect \| n/a \| n/a \|`,
		"html": `connect</td><td class="r n">n/a</td>`, "json": `"transport": "quic"`} {
		file := filepath.Join(dir, "report."+f)
		if code, _, stderr := invoke(t, context.Background(), "report", out, "--format", f, "-o", file); code != exitOK {
			t.Fatalf("report --format %s: exit %d: %s", f, code, stderr)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(re).Match(data) {
			t.Errorf("report --format %s: no %s", f, re)
		}
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	var total int64
	for _, e := range entries {
		r := e.Run
		n := r.Whole.Transactions
		if pf := r.Preflight; pf != nil {
			n += pf.Requests
		}
		// The preliminary run's resumption probe (runner.ProbeResumption):
		// the cell's cps GETs in its protocol, a full handshake's then a
		// resumed one's (QUIC's session tickets over HTTP/3).
		if e.Phase == "preliminary" {
			if x := e.ResumptionProbe; x == nil || e.Resumption == nil || !*e.Resumption || x.Requests != 2 {
				t.Errorf("%s's preliminary run: resumption %v %q, probe %+v; want resumed after 2 requests",
					r.ProtocolName(), e.Resumption, e.ResumptionErr, x)
			} else {
				n += x.Requests
			}
		}
		want[map[string]string{"http/1.1": "HTTP/1.0", "http/2": "HTTP/2.0", "http/3": "HTTP/3.0"}[r.ProtocolName()]+
			" 200"] += n
		total += n
	}
	got := c.Requests(t, total)
	t.Logf("ledger %v, caddy %v", want, got)
	for k, n := range got {
		if want[k] != n {
			t.Errorf("caddy logged %d %q, the ledger's runs made %d", n, k, want[k])
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("the ledger's runs made %d %q, caddy logged %d", n, k, got[k])
		}
	}
}

// TestQualifyHTTP3Profiles: qualify --http 3 without --profile qualifies
// the built-in TLS 1.3 profiles (the seed profiles are TLS 1.2, which
// HTTP/3 cannot carry), in the default plan and the RFC 9411 suite's;
// --profile still chooses.
func TestQualifyHTTP3Profiles(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "tls13-aes128-gcm-x25519 tls13-x25519mlkem768"},
		{[]string{"--suite", "rfc9411"}, "tls13-aes128-gcm-x25519 tls13-x25519mlkem768"},
		{[]string{"--profile", "tls13-x25519mlkem768"}, "tls13-x25519mlkem768"},
	} {
		var q qualifyFlags
		fs := q.define()
		if err := fs.Parse(append([]string{"--http", "3", "--dut", "a=https://127.0.0.1:1/"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		pl, err := q.readPlan(profiles.Builtin(), false)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		for _, x := range pl.Tests {
			if got := strings.Join(x.Profiles, " "); got != tc.want || x.HTTP != "3" {
				t.Errorf("%q: test %s over http %q: profiles %s, want %s over http 3", tc.args, x.Engine, x.HTTP, got,
					tc.want)
			}
		}
	}
}
