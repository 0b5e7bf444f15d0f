package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// alpnProfiles are the P-256 preflight profile offering h2 and http/1.1,
// one expecting http/1.1 (what tlsbench speaks), one h2.
const alpnProfiles = `name: alpn-http11
min_version: TLS1.2
max_version: TLS1.2
cipher_suites: [ECDHE-ECDSA-AES128-SHA256]
groups: [P-256]
alpn: [h2, http/1.1]
expect: {version: TLS1.2, cipher_suite: ECDHE-ECDSA-AES128-SHA256, group: P-256, alpn: http/1.1}
---
name: alpn-h2
min_version: TLS1.2
max_version: TLS1.2
cipher_suites: [ECDHE-ECDSA-AES128-SHA256]
groups: [P-256]
alpn: [h2, http/1.1]
expect: {version: TLS1.2, cipher_suite: ECDHE-ECDSA-AES128-SHA256, group: P-256, alpn: h2}
`

// TestALPNRun: a profile's alpn is offered on every connection; the
// reference target announces the expected protocol and the record says
// what was negotiated; a server that selects another protocol ends the run
// at the preflight (a mismatch naming it, no load); a bad alpn value is a
// one-line error, exit 2.
func TestALPNRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "alpn.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(file, []byte(alpnProfiles), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(alpnProfiles, "alpn: http/1.1}", "alpn: spdy}", 1)),
		0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := profiles.Parse(file, []byte(alpnProfiles))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := filepath.Join(dir, "r.json")
	for _, kind := range []string{"cps", "throughput"} {
		code, _, stderr := invoke(t, ctx, kind, "-q", "-d", "300ms", "--warmup", "0", "-c", "2", "--profile-file",
			file, "--profile", "alpn-http11", "--json", rec)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", kind, code, stderr)
		}
		data, _ := os.ReadFile(rec)
		schematest.Valid(t, schemas.Run, "the record", data)
		var r metrics.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Negotiated.ALPN != "http/1.1" || r.Errors.Total != 0 || r.Whole.Transactions == 0 {
			t.Errorf("%s: negotiated alpn %q, %d errors, %d transactions: want http/1.1, none, some", kind,
				r.Negotiated.ALPN, r.Errors.Total, r.Whole.Transactions)
		}
	}

	h2, ca := startTarget(t, target.Config{Profiles: []*profiles.Profile{ps[1]}})
	url := "https://localhost:" + portOf(h2.Listeners[0].Addr) + "/1k"
	before := connections(h2.Listeners[0])
	code, _, stderr := invoke(t, ctx, "cps", "-q", "-d", "10s", "--cacert", ca, "--profile-file", file,
		"--profile", "alpn-http11", url)
	seen := connections(h2.Listeners[0]) - before
	if code != exitFailed || seen > 1 || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "groups P-256, alpn h2,http/1.1; the server's answer: mismatch (negotiated alpn h2, "+
			"profile alpn-http11 expects http/1.1)") ||
		!strings.Contains(stderr, "no load sent") {
		t.Errorf("against an h2 server: exit %d, %d connections, stderr %q: want exit %d, at most 1, "+
			"the alpn mismatch, no load", code, seen, stderr, exitFailed)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cps", "--profile-file", bad}, `bad.yaml:7: expect.alpn "spdy" is not offered`},
		{[]string{"throughput", "--profile-file", file, "--profile", "alpn-h2"}, "profile alpn-h2 expects alpn h2, " +
			"but the run speaks http/1.1 (protocols: http/1.1, http/2, http/3)"},
	} {
		code, stderr, timedOut := invokeBounded(t, 10*time.Second, append(tc.args, "https://127.0.0.1:1/")...)
		if timedOut || code != exitBadUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q: want %d, one line naming %q", tc.args, code, stderr, exitBadUsage,
				tc.want)
		}
	}
}

// TestALPNHAProxy: HAProxy with alpn h2,http/1.1 (it prefers h2) answers
// http/1.1 to a profile that offers only http/1.1, nothing to one that
// offers nothing, and h2 to one that offers both: a mismatch before any load.
func TestALPNHAProxy(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	authority := testdut.NewCA(t)
	seed := testdut.Seeds(t, authority, dir)[1] // ECDHE-ECDSA-AES128-SHA256 on P-256
	seed.Frontend.ALPN = "h2,http/1.1"
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{seed.Frontend})
	ca := filepath.Join(dir, "ca.pem")
	file := filepath.Join(dir, "alpn.yaml")
	if err := os.WriteFile(ca, authority.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	only := strings.Replace(strings.SplitN(alpnProfiles, "---", 2)[0], "[h2, http/1.1]", "[http/1.1]", 1)
	only = strings.Replace(strings.Replace(only, "alpn-http11", "alpn-only", 1), ", alpn: http/1.1}", "}", 1)
	if err := os.WriteFile(file, []byte(alpnProfiles+"---\n"+only), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "https://localhost:" + portOf(h.Addr(seed.Frontend.Name)) + "/"
	for _, tc := range []struct{ profile, alpn, err string }{
		{"alpn-only", "http/1.1", ""},
		{seed.Profile, "", ""},
		{"alpn-http11", "", "negotiated alpn h2, profile alpn-http11 expects http/1.1"},
	} {
		rec := filepath.Join(dir, tc.profile+".json")
		code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-d", "300ms", "--warmup", "0", "-c", "2",
			"--cacert", ca, "--profile-file", file, "--profile", tc.profile, "--json", rec, url)
		if tc.err != "" {
			if code != exitFailed || !strings.Contains(stderr, tc.err) || !strings.Contains(stderr, "no load sent") {
				t.Errorf("%s: exit %d, stderr %q: want %d, %q, no load", tc.profile, code, stderr, exitFailed, tc.err)
			}
			continue
		}
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.profile, code, stderr)
		}
		data, _ := os.ReadFile(rec)
		var r metrics.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Negotiated.ALPN != tc.alpn || r.Errors.Total != 0 || r.Whole.Transactions == 0 {
			t.Errorf("%s: negotiated alpn %q, %d errors, %d transactions: want %q, none, some", tc.profile,
				r.Negotiated.ALPN, r.Errors.Total, r.Whole.Transactions, tc.alpn)
		}
	}
}
