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
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestNamesBadInput: bad server names and bad name flags (issue 29, item
// 4) each exit 2 with one line naming the problem, before any load.
func TestNamesBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	good := write("good.txt", "# sites\na.test\n\nb.test\n")
	empty := write("empty.txt", "# nothing but comments\n\n   \n")
	badName := write("bad.txt", "a.test\n# fine so far\nbad_name.test\n")
	dup := write("dup.txt", "a.test\nb.test\nA.TEST\n")
	ip := write("ip.txt", "192.0.2.7\n")
	long := write("long.txt", "a."+strings.Repeat("b", 5000)+"\n")
	const url = "https://127.0.0.1:1/"
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--sni-list: open", []string{"cps", "--sni-list", filepath.Join(dir, "missing"), url}},
		{"is a directory", []string{"cps", "--sni-list", dir, url}},
		{"has no server name", []string{"cps", "--sni-list", empty, url}},
		{"line 3: \"bad_name.test\" is not a host name", []string{"cps", "--sni-list", badName, url}},
		{"line 3: \"A.TEST\" repeats line 1", []string{"cps", "--sni-list", dup, url}},
		{"IP address", []string{"cps", "--sni-list", ip, url}},
		{"a line longer than 4 KiB", []string{"cps", "--sni-list", long, url}},
		{"give one", []string{"cps", "--sni-list", good, "--sni-count", "3", url}},
		{"give one", []string{"cps", "--sni-list", good, "--sni", "a.test", url}},
		{"bad --sni-count 0", []string{"cps", "--sni-count", "0", url}},
		{"bad --sni-count -3", []string{"cps", "--sni-count", "-3", url}},
		{"bad --sni-count 100001", []string{"cps", "--sni-count", "100001", url}},
		{"--sni-count", []string{"cps", "--sni-count", "many", url}},
		{"want one %d", []string{"cps", "--sni-count", "3", "--sni", "plain.test", url}},
		{"want one %d", []string{"cps", "--sni-count", "3", "--sni", "a%d-%d.test", url}},
		{"want one %d", []string{"cps", "--sni-count", "3", "--sni", "a%s.test", url}},
		{`name "a_1.test"`, []string{"cps", "--sni-count", "3", "--sni", "a_%d.test", url}},
		{"needs --sni-count", []string{"cps", "--sni", "www%d.test", url}},
		{"--sni-list: open", []string{"throughput", "--sni-list", filepath.Join(dir, "missing"), url}},
		{"bad --names 0", []string{"serve", "--names", "0"}},
		{"give --names", []string{"serve", "--names-pattern", "x%d.test"}},
		{"bad --names-pattern", []string{"serve", "--names", "3", "--names-pattern", "x.test"}},
		{"not with --cert or --plain", []string{"serve", "--names", "3", "--plain"}},
	} {
		code, stderr, timedOut := invokeBounded(t, 20*time.Second, c.args...)
		switch {
		case timedOut:
			t.Errorf("%q: still running after 20 s", c.args)
		case code != exitBadUsage:
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.args, code, exitBadUsage, stderr)
		case strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n"):
			t.Errorf("%q: stderr %q, want one line", c.args, stderr)
		case !strings.Contains(stderr, c.want):
			t.Errorf("%q: stderr %q does not say %q", c.args, stderr, c.want)
		}
	}
}

// readRecord reads a run record written with --json.
func readRecord(t *testing.T, file string) *metrics.Run {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r metrics.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestNamesInProcess: --sni-count without a URL measures the in-process
// reference target serving the same names: no error, every name counted,
// the record's target named by the first name and the flags echoed.
func TestNamesInProcess(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "4", "-d", "1s", "--warmup", "0s",
		"--sni-count", "40", "--json", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readRecord(t, file)
	n := r.Names
	if n == nil || n.Count != 40 || n.First != "www1.tlsbench.test" || r.Target.ServerName != n.First {
		t.Fatalf("names %+v, target %+v", n, r.Target)
	}
	if r.Errors.Total != 0 || n.Connections != r.Whole.Transactions || n.ConnectionsMin < 1 {
		t.Errorf("errors %+v, names %d connections (%d to %d), whole run %+v", r.Errors, n.Connections,
			n.ConnectionsMin, n.ConnectionsMax, r.Whole)
	}
	var echo loadEcho
	if err := json.Unmarshal(r.Config, &echo); err != nil || echo.SNICount != 40 {
		t.Errorf("echo %s: %v", r.Config, err)
	}
}

// TestServeNamesAndMeasure: `serve --names 30` and `cps --sni-count 30`
// agree out of the box; asking one name more, that name's connections fail
// as cert_name (it gets the default certificate), the others pass.
func TestServeNamesAndMeasure(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testdut.SyncBuffer
	done := make(chan int, 1)
	const profile = "ecdhe-ecdsa-aes128-sha256-p256"
	go func() {
		done <- run(ctx, []string{"serve", "--port", "0", "--profile", profile, "--names", "30", "--ca-out", ca}, &out,
			&errb)
	}()
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == profile {
				addr = f[1]
			}
		}
	}
	if addr == "" {
		t.Fatalf("serve printed no address: %q %q", out.String(), errb.String())
	}
	for _, count := range []string{"30", "31"} {
		file := filepath.Join(dir, count+".json")
		code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "4", "-d", "1s", "--warmup", "0s",
			"--profile", profile, "--cacert", ca, "--sni-count", count, "--json", file, "https://"+addr+"/1k")
		if code != exitOK {
			t.Fatalf("--sni-count %s: exit %d: %s", count, code, stderr)
		}
		r := readRecord(t, file)
		n := r.Names
		t.Logf("--sni-count %s: %d connections, %d to %d per name, errors %v", count, n.Connections,
			n.ConnectionsMin, n.ConnectionsMax, r.Errors.ByClass)
		if count == "30" && (r.Errors.Total != 0 || n.FailedNames != 0 || n.ConnectionsMin < 1) {
			t.Errorf("errors %+v, names %+v: want none failed, every name used", r.Errors, n.Failed)
		}
		if count == "31" && (n.FailedNames != 1 || n.Failed[0].Name != "www31.tlsbench.test" ||
			r.Errors.ByClass[vocab.ClassCertName] != r.Errors.Total || r.Errors.Total == 0) {
			t.Errorf("errors %+v, failed names %+v: want www31.tlsbench.test's, as cert_name", r.Errors, n.Failed)
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve exit %d: %s", code, errb.String())
	}
}
