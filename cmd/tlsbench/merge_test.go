package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// agentRecords runs cps as n agents of one distributed run (--shard i/n,
// one --start-at), at once against one reference target, and returns
// their records, agent i named by names[i].
func agentRecords(t *testing.T, dir string, names ...string) ([]string, []*metrics.Run) {
	t.Helper()
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	url := "https://localhost:" + portOf(l.Addr) + "/1k"
	start := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	files := make([]string, len(names))
	errs := make(chan string, len(names))
	for i, name := range names {
		files[i] = filepath.Join(dir, name+".json")
		go func() {
			code, _, stderr := invoke(t, context.Background(), "cps", url, "--cacert", ca, "--profile", p.Name, "-q", "-c", "2", "-d", "1s",
				"--warmup", "0s", "--shard", fmt.Sprintf("%d/%d", i, len(names)), "--start-at", start, "--agent", name, "--json", files[i])
			if code != exitOK {
				errs <- fmt.Sprintf("cps: exit %d: %s", code, stderr)
				return
			}
			errs <- ""
		}()
	}
	for range names {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
	var runs []*metrics.Run
	for _, file := range files {
		r, err := metrics.ReadRun(file)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return files, runs
}

// TestMerge merges the records of two real runs made as two agents, and
// reads the result with report and compare.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	files, runs := agentRecords(t, dir, "a", "b")
	fileA, a, fileB, b := files[0], runs[0], files[1], runs[1]
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
		{"total latencies", m.Percentiles(vocab.PhaseTotal).Count, a.Percentiles(vocab.PhaseTotal).Count, b.Percentiles(vocab.PhaseTotal).Count},
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
	if h.TotalCount() != a.Percentiles(vocab.PhaseHandshake).Count+b.Percentiles(vocab.PhaseHandshake).Count {
		t.Errorf("handshake histogram of %d values", h.TotalCount())
	}
	if want := *a.CPS + *b.CPS; math.Abs(*m.CPS-want) > 1e-9*want {
		t.Errorf("CPS %v, want %v + %v", *m.CPS, *a.CPS, *b.CPS)
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

	// The agents measured one device, and the merged record names it.
	if a.Target.LeafSHA256 == "" || a.Target != b.Target || m.Target != a.Target {
		t.Errorf("targets: agent a %+v, agent b %+v, merged %+v", a.Target, b.Target, m.Target)
	}

	// Another profile, another device, another time: refused, naming both
	// agents.
	edited := func(name string, edit func(r *metrics.Run)) string {
		t.Helper()
		r, err := metrics.ReadRun(fileB)
		if err != nil {
			t.Fatal(err)
		}
		edit(r)
		file := filepath.Join(dir, name)
		if err := r.WriteJSON(context.Background(), file, nil, nil); err != nil {
			t.Fatal(err)
		}
		return file
	}
	for _, tc := range []struct {
		name string
		edit func(r *metrics.Run)
		want string
	}{
		{"profile", func(r *metrics.Run) { r.Profile = "rsa2048-aes128-gcm-sha256" },
			"agent b (shard 1/2) ran profile rsa2048-aes128-gcm-sha256, agent a (shard 0/2) ecdhe-ecdsa-aes128-sha256-p256"},
		{"address", func(r *metrics.Run) { r.Target.Address = "127.0.0.2:" + portOf(r.Target.Address) },
			"agent b (shard 1/2) measured dialled address 127.0.0.2:" + portOf(a.Target.Address) + ", agent a (shard 0/2) " + a.Target.Address + ": not one device"},
		{"certificate", func(r *metrics.Run) { r.Target.LeafSHA256 = strings.Repeat("0", 64) },
			"agent b (shard 1/2) measured leaf certificate (SHA-256) " + strings.Repeat("0", 64) + ", agent a (shard 0/2) " + a.Target.LeafSHA256},
		{"DUT name", func(r *metrics.Run) { r.Target.DUT = "lb-2" }, "agent b (shard 1/2) measured DUT lb-2, agent a (shard 0/2) nothing"},
		// The same run 25 s later: the windows are disjoint.
		{"25 s later", func(r *metrics.Run) {
			r.Started, r.Ended = r.Started.Add(25*time.Second), r.Ended.Add(25*time.Second)
			for i := range r.Series {
				r.Series[i].Unix += 25
			}
		}, fmt.Sprintf("steady windows of agent a (shard 0/2) (%s–%s) and agent b (shard 1/2) (%s–%s) overlap by",
			window(a, 0).Format(windowTime), window(a, a.DurationS).Format(windowTime),
			window(b, 25).Format(windowTime), window(b, 25+b.DurationS).Format(windowTime))},
	} {
		other := edited("b-"+strings.ReplaceAll(tc.name, " ", "-")+".json", tc.edit)
		wantUsageError(t, []string{"merge", fileA, other, "-o", filepath.Join(dir, "no.json")}, tc.want)
		if _, err := os.Stat(filepath.Join(dir, "no.json")); err == nil {
			t.Errorf("%s: a refused merge wrote its output", tc.name)
		}
	}
}

// windowTime is how merge's refusals write times.
const windowTime = "2006-01-02T15:04:05.000Z07:00"

// window returns r's steady start plus s seconds, in UTC.
func window(r *metrics.Run, s float64) time.Time {
	return r.Started.Add(time.Duration((r.SteadyStartS + s) * float64(time.Second))).UTC()
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

	// Records of one run without --shard merge, numbered in the order
	// given (their steady windows share 95%).
	code, stdout, stderr := invoke(t, context.Background(), "merge", p384, writeRecord(t, dir, "p384-2.json",
		reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 50, Start: reporttest.T0.Add(100 * time.Millisecond)}), "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^gen-1@\S+\s+#1\s+100\s+.*\+100\.0 \(from the first start\)`).MatchString(stdout) {
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
