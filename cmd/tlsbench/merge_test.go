package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// agentRecord runs cps against the in-process target and makes its record
// that of agent name, shard i of n.
func agentRecord(t *testing.T, dir, name string, i, n int) (string, *metrics.Run) {
	t.Helper()
	file := filepath.Join(dir, name+".json")
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "1s", "--warmup", "0s", "--json", file)
	if code != exitOK {
		t.Fatalf("cps: exit %d: %s", code, stderr)
	}
	r, err := metrics.ReadRun(file)
	if err != nil {
		t.Fatal(err)
	}
	r.Agent = &metrics.Agent{Name: name, Shard: i, Shards: n}
	if err := r.WriteJSON(file); err != nil {
		t.Fatal(err)
	}
	return file, r
}

// TestMerge merges the records of two real runs made as two agents, and
// reads the result with report and compare.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	fileA, a := agentRecord(t, dir, "a", 0, 2)
	fileB, b := agentRecord(t, dir, "b", 1, 2)
	out := filepath.Join(dir, "merged.json")
	code, stdout, stderr := invoke(t, context.Background(), "merge", fileB, fileA, "-o", out)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	m, err := metrics.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, a, b int64
	}{
		{"transactions", m.Transactions, a.Transactions, b.Transactions},
		{"handshakes", m.Handshakes, a.Handshakes, b.Handshakes},
		{"connections opened", m.ConnectionsOpened, a.ConnectionsOpened, b.ConnectionsOpened},
		{"errors", m.Errors.Total, a.Errors.Total, b.Errors.Total},
		{"whole-run transactions", m.Whole.Transactions, a.Whole.Transactions, b.Whole.Transactions},
		{"payload bytes", m.Bytes.Payload, a.Bytes.Payload, b.Bytes.Payload},
		{"wire bytes in", m.Bytes.WireIn, a.Bytes.WireIn, b.Bytes.WireIn},
		{"wire bytes out", m.Bytes.WireOut, a.Bytes.WireOut, b.Bytes.WireOut},
		{"total latencies", m.Latency["total"].Count, a.Latency["total"].Count, b.Latency["total"].Count},
		{"concurrency", int64(m.Load.Concurrency), int64(a.Load.Concurrency), int64(b.Load.Concurrency)},
	} {
		if c.got != c.a+c.b || (c.got == 0 && c.name != "errors") {
			t.Errorf("%s: %d, want %d + %d", c.name, c.got, c.a, c.b)
		}
	}
	h, err := m.Histogram("handshake")
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != a.Latency["handshake"].Count+b.Latency["handshake"].Count {
		t.Errorf("handshake histogram of %d values", h.TotalCount())
	}
	if want := a.CPS + b.CPS; math.Abs(m.CPS-want) > 1e-9*want {
		t.Errorf("CPS %v, want %v + %v", m.CPS, a.CPS, b.CPS)
	}
	if want := a.Client.CPUSeconds + b.Client.CPUSeconds; math.Abs(m.Client.CPUSeconds-want) > 1e-9*want {
		t.Errorf("CPU %v s, want %v + %v", m.Client.CPUSeconds, a.Client.CPUSeconds, b.Client.CPUSeconds)
	}
	if m.Agent != nil || len(m.Agents) != 2 || m.Agents[0].Name != "a" || m.Agents[1].Name != "b" {
		t.Errorf("agent %v, agents %+v", m.Agent, m.Agents)
	}
	for _, s := range m.Series {
		if s.Transactions > 0 && (s.TotalHist == "" || s.TotalP99 == 0) {
			t.Errorf("second %d: %d transactions, no percentiles", s.T, s.Transactions)
		}
	}
	if !strings.Contains(stdout, "negotiated") || !strings.Contains(stdout, "cps ") {
		t.Errorf("no run summary on stdout:\n%s", stdout)
	}
	for _, ag := range []*metrics.Run{a, b} {
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(ag.Agent.Name) + `\s+` + strconv.Itoa(ag.Agent.Shard) + `/2\s+(\d+)\s+[0-9.]+\s+\d+%\s+[+-][0-9.]+`)
		if mm := line.FindStringSubmatch(stdout); mm == nil || mm[1] != strconv.FormatInt(ag.Transactions, 10) {
			t.Errorf("no line for agent %s with %d transactions:\n%s", ag.Agent.Name, ag.Transactions, stdout)
		}
	}

	// The merged record is a record.
	if code, _, stderr := invoke(t, context.Background(), "report", out); code != exitOK {
		t.Errorf("report: exit %d: %s", code, stderr)
	}
	if code, _, stderr := invoke(t, context.Background(), "compare", out, fileA); code != exitOK {
		t.Errorf("compare: exit %d: %s", code, stderr)
	}

	// Another profile: refused, naming both agents.
	other := filepath.Join(dir, "b-other.json")
	b.Profile = "rsa2048-aes128-gcm-sha256"
	if err := b.WriteJSON(other); err != nil {
		t.Fatal(err)
	}
	wantUsageError(t, []string{"merge", fileA, other, "-o", filepath.Join(dir, "no.json")},
		"agent b (shard 1/2) ran profile rsa2048-aes128-gcm-sha256, agent a (shard 0/2) ecdhe-ecdsa-aes128-sha256-p256")
	if _, err := os.Stat(filepath.Join(dir, "no.json")); err == nil {
		t.Error("a refused merge wrote its output")
	}
}

func TestMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	p384 := writeRecord(t, dir, "p384.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 100})
	rsa := writeRecord(t, dir, "rsa.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.RSA, Host: "dut", Level: 4, Value: 100,
		Start: reporttest.T0.Add(time.Minute)})
	notJSON := filepath.Join(dir, "notes.txt")
	notRecord := filepath.Join(dir, "other.json")
	for file, data := range map[string]string{notJSON: "hello", notRecord: `{"name": "something else"}`} {
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "merged.json")
	for _, tc := range []struct {
		args []string
		want string // in the one-line message
	}{
		{[]string{"-o", out}, "no record"},
		{[]string{p384}, "-o FILE is required"},
		{[]string{filepath.Join(dir, "missing.json"), "-o", out}, "missing.json: no such file or directory"},
		{[]string{notJSON, "-o", out}, "not a run record"},
		{[]string{notRecord, "-o", out}, "want a run record"},
		{[]string{p384, rsa, "-o", out}, "agent gen-1@2026-03-01T12:01:00.000Z ran profile rsa2048-aes128-gcm-sha256, agent gen-1@2026-03-01T12:00:00.000Z ecdhe-ecdsa-aes128-sha256-p384"},
		{[]string{p384, p384, "-o", out}, "agent gen-1@2026-03-01T12:00:00.000Z is given twice"},
		{[]string{p384, "-o", filepath.Join(dir, "no", "dir", "m.json")}, "-o"},
		{[]string{"--no-such-flag", p384, "-o", out}, "unknown flag"},
	} {
		wantUsageError(t, append([]string{"merge"}, tc.args...), tc.want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("bad input wrote a merged record")
	}

	code, stdout, _ := invoke(t, context.Background(), "merge", "--help")
	if code != exitOK || !strings.Contains(stdout, "Usage: tlsbench merge RECORD... -o FILE") || !strings.Contains(stdout, "--output") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}

	// Records of one run without --shard merge, numbered in the order given.
	code, stdout, stderr := invoke(t, context.Background(), "merge", p384, writeRecord(t, dir, "p384-2.json",
		reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 50, Start: reporttest.T0.Add(time.Second)}), "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^gen-1@\S+\s+#1\s+100\s+.*\+1000\.0 \(from the first start\)`).MatchString(stdout) {
		t.Errorf("no line for the second record:\n%s", stdout)
	}
}

// wantUsageError runs the CLI with args and checks that it exits 2 with one
// line on stderr that holds want.
func wantUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	code, _, stderr := invoke(t, context.Background(), args...)
	switch {
	case code != exitBadUsage:
		t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, exitBadUsage, stderr)
	case strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n"):
		t.Errorf("%q: want one line on stderr: %q", args, stderr)
	case !strings.Contains(stderr, want):
		t.Errorf("%q: stderr %q does not name %q", args, stderr, want)
	}
}
