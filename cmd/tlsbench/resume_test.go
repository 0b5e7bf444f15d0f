package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestResumeCommand: cps --resume against the in-process reference target
// writes a record its schema and the Go validation accept, with the split
// of the handshakes, and its table shows the session reuse and the split
// (a run without --resume keeps the CPS (SR=0) column).
func TestResumeCommand(t *testing.T) {
	for _, tc := range []struct {
		profile, mode string
	}{
		{"ecdhe-ecdsa-aes128-sha256-p256", "tickets"},
		{"tls13-aes128-gcm-x25519", "psk"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "run.json")
			code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "500ms", "--warmup",
				"100ms", "--resume", "0.5", "--profile", tc.profile, "--json", file)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "SR ") || !strings.Contains(stdout, "0.5 "+tc.mode) ||
				!strings.Contains(stdout, "RESUMED/s") || strings.Contains(stdout, "CPS (SR=0)") {
				t.Errorf("table without the session reuse:\n%s", stdout)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkJSON(t, file, data)
			r, err := metrics.DecodeRun(data)
			if err != nil {
				t.Fatal(err)
			}
			x := r.Resumption
			if x == nil || x.Mode != tc.mode || x.Resumed == 0 || x.Full == 0 || x.Full+x.Resumed != r.Transactions {
				t.Fatalf("resumption %+v of %d transactions", x, r.Transactions)
			}
			if r.Whole.Resumed < x.Resumed || r.Preflight.Resumed != 1 {
				t.Errorf("whole run %+v, preflight %+v: the window's %d resumed are among them", r.Whole, r.Preflight,
					x.Resumed)
			}
		})
	}
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "200ms", "--warmup", "0s")
	if code != exitOK || !strings.Contains(stdout, "CPS (SR=0)") || strings.Contains(stdout, "RESUMED") {
		t.Errorf("SR=0 run: exit %d, table:\n%s%s", code, stdout, stderr)
	}
}

// TestResumeTableCountsHandshakes: with --requests-per-conn, the SR table's
// CPS is handshakes per second (full + resumed), not requests (issue 40,
// item 4): requests per second have their own column, about M times more.
// The throughput table of a resuming run shows its SR (item 3).
func TestResumeTableCountsHandshakes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "500ms", "--warmup",
		"100ms", "--resume", "0.5", "--requests-per-conn", "10", "--json", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := metrics.DecodeRun(data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(stdout, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "REQ/S") })
	if i < 0 || i+1 >= len(lines) || r.Resumption == nil {
		t.Fatalf("no SR table with REQ/S:\n%s", stdout)
	}
	split := regexp.MustCompile(`\s{2,}`)
	cols, row := split.Split(lines[i], -1), split.Split(lines[i+1], -1)
	cell := func(name string) string {
		if j := slices.Index(cols, name); j >= 0 && j < len(row) {
			return row[j]
		}
		return ""
	}
	x := r.Resumption
	hs, req := fmt.Sprintf("%.1f", x.FullPerS+x.ResumedPerS), fmt.Sprintf("%.1f", metrics.Value(r.CPS))
	if cell("CPS") != hs || cell("REQ/S") != req || metrics.Value(r.CPS) < 5*(x.FullPerS+x.ResumedPerS) {
		t.Errorf("CPS %q, REQ/S %q; want %s handshakes/s, %s requests/s (10 a connection):\n%s", cell("CPS"),
			cell("REQ/S"), hs, req, stdout)
	}
	// throughput resumes when it reconnects, and its table says so.
	code, stdout, stderr = invoke(t, context.Background(), "throughput", "-q", "-c", "2", "-d", "500ms", "--warmup",
		"100ms", "--resume", "0.5", "--requests-per-conn", "5")
	if code != exitOK || !strings.Contains(stdout, "0.5 tickets") || !strings.Contains(stdout, "RESUMED/s") {
		t.Errorf("throughput --resume: exit %d, no SR in the table:\n%s%s", code, stdout, stderr)
	}
}

// TestResumeRefusedByNginx: against an nginx with tickets off, --resume
// fails the preflight with not_resumed and sends no load, at any
// --requests-per-conn and for throughput too (issue 40 item 2: load was
// sent, exit 0); nginx's access log holds one request per run, the
// preflight's first (its second connection fails at the handshake).
func TestResumeRefusedByNginx(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seed := testdut.Seeds(t, ca, dir)[0]
	access := filepath.Join(dir, "access.log")
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: filepath.Join(dir, "nginx"), Servers: []testdut.NginxServer{
		{Cert: seed.Frontend.Cert, Ciphers: seed.Frontend.Ciphers, Curve: seed.Frontend.Curves, KeepAlive: true,
			Extra: []string{"access_log " + access + ";"}}}})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "https://localhost:" + portOf(n.Addrs[0])
	for i, args := range [][]string{
		{"cps", "--resume", "1", "--requests-per-conn", "10", url + "/1k"},
		{"cps", "--resume", "1e-9", url + "/1k"},
		{"throughput", "--resume", "0.5", "--requests-per-conn", "5", url + "/1m"},
	} {
		args = append(args, "-q", "-d", "2s", "--profile", seed.Profile, "--cacert", caFile, "--resolve",
			"localhost:"+portOf(n.Addrs[0])+":127.0.0.1")
		code, stdout, stderr := invoke(t, context.Background(), args...)
		if code != exitFailed || !strings.Contains(stderr, "not_resumed") || !strings.Contains(stderr, "no load sent") ||
			stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want exit %d, not_resumed, no load", args, code, stdout, stderr,
				exitFailed)
		}
		data, _ := os.ReadFile(access)
		if got := strings.Count(string(data), "\n"); got != i+1 {
			t.Errorf("%q: nginx logged %d requests in all, want the preflights' %d", args, got, i+1)
		}
	}
}
