package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/internal/testdut"
)

// startServe runs `tlsbench serve --port 0` with args in a child process
// (its CPU is then not the generator's) until the test ends, and returns the
// address of each profile's listener, read from its ready line.
func startServe(t *testing.T, args ...string) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"serve", "--port", "0"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	s, err := testdut.StartServed(context.Background(), "serve", cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	addrs := map[string]string{}
	for _, l := range s.Listeners {
		addrs[l.Profile] = l.Addr
	}
	return addrs
}

// TestQualifyUnsupported: a device that serves one of the two profiles
// asked for. The preliminary table shows the refusal, the published table
// says "not supported: …" for that profile, the other is measured, and the
// HTML report is written and named. A plan that says stop_on_unsupported
// stops in the preliminary phase instead.
func TestQualifyUnsupported(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	addrs := startServe(t, "--profile", "rsa2048-aes128-gcm-sha256", "--ca-out", ca)
	port := portOf(addrs["rsa2048-aes128-gcm-sha256"])
	if port == "" {
		t.Fatalf("no listener: %v", addrs)
	}
	dut := "dev=https://localhost:" + port + "/"
	out := filepath.Join(dir, "campaign")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, stdout, stderr := invoke(t, ctx, "qualify", "-q", "--quick", "--dut", dut, "--cacert", ca, "--test", "cps",
		"--profile", "ecdhe-ecdsa-aes128-sha256-p256", "--profile", "rsa2048-aes128-gcm-sha256", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	var prelimECDSA, prelimRSA, tableECDSA string
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case strings.Contains(line, "cps") && strings.Contains(line, "ecdhe-ecdsa-aes128-sha256-p256"):
			prelimECDSA = line
		case strings.Contains(line, "cps") && strings.Contains(line, "rsa2048-aes128-gcm-sha256"):
			prelimRSA = line
		case strings.HasPrefix(line, "dev ") && strings.Contains(line, "not supported"):
			tableECDSA = line
		}
	}
	if !strings.Contains(prelimECDSA, "not supported: ") || !strings.Contains(prelimECDSA, "handshake") {
		t.Errorf("preliminary line of the refused profile: %q\n%s", prelimECDSA, stdout)
	}
	if !strings.Contains(prelimRSA, "AES128-GCM-SHA256") {
		t.Errorf("preliminary line of the served profile: %q", prelimRSA)
	}
	if !strings.Contains(tableECDSA, "not supported: ") {
		t.Errorf("published table has no not-supported row:\n%s", stdout)
	}
	var s struct {
		Rows []struct {
			Profile     string
			CPS         *float64
			Unsupported string
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 2 || s.Rows[0].Unsupported == "" || s.Rows[0].CPS != nil || s.Rows[1].Unsupported != "" || s.Rows[1].CPS == nil || *s.Rows[1].CPS <= 0 {
		t.Errorf("summary rows: %s\n%s\n%s", data, stdout, stderr)
	}
	html := filepath.Join(out, "report.html")
	if !strings.Contains(stdout, "report: "+html) {
		t.Errorf("the report's path is not printed:\n%s", stdout)
	}
	if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), "not supported") {
		t.Errorf("report.html: %v, mentions not supported: %v", err, strings.Contains(string(page), "not supported"))
	}

	// The plan asks to stop on a refusal.
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte(`name: strict
duts: [{name: dev, url: "https://localhost:`+port+`/", cacert: "`+ca+`"}]
tests:
  - {engine: cps, profiles: [rsa2048-aes128-gcm-sha256, ecdhe-ecdsa-aes128-sha256-p256]}
method:
  duration: 200ms
  warmup: 0s
  cooldown: 0s
  explore: {concurrency: {min: 1, max: 2}, probe_duration: 100ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%}
  final: {min_accepted: 1, max_runs: 1, tolerance: 60%}
  stop_on_unsupported: true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = invoke(t, ctx, "qualify", "-q", "--plan", plan, "--out", filepath.Join(dir, "strict"))
	if code != exitFailed || !strings.Contains(stderr, "preliminary: DUT dev, cps ecdhe-ecdsa-aes128-sha256-p256") {
		t.Errorf("stop_on_unsupported: exit %d: %s", code, stderr)
	}
}

// TestUnicodeHost: a Unicode host name is measured under its A-label: SNI
// and verification against a certificate that names xn--bcher-kva.test.
func TestUnicodeHost(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	addrs := startServe(t, "--profile", "rsa2048-aes128-gcm-sha256", "--hostname", "xn--bcher-kva.test", "--ca-out", ca)
	port := portOf(addrs["rsa2048-aes128-gcm-sha256"])
	file := filepath.Join(dir, "run.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, _, stderr := invoke(t, ctx, "cps", "-q", "-c", "1", "-d", "200ms", "--warmup", "0s", "--profile", "rsa2048-aes128-gcm-sha256",
		"--cacert", ca, "--resolve", "bücher.test:"+port+":127.0.0.1", "--json", file, "https://bücher.test:"+port+"/1k")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rec struct {
		Target struct {
			ServerName string `json:"server_name"`
		} `json:"target"`
		Transactions int64 `json:"transactions"`
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Target.ServerName != "xn--bcher-kva.test" || rec.Transactions == 0 {
		t.Errorf("server name %q, %d transactions", rec.Target.ServerName, rec.Transactions)
	}
}
