package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestDeviceCountersBadInput: a bad --device-counters, or a plan DUT's bad
// counters, is one line naming the problem and exit 2, before any load.
func TestDeviceCountersBadInput(t *testing.T) {
	dir := t.TempDir()
	const url = "https://127.0.0.1:1/"
	const rsa = "rsa2048-aes128-gcm-sha256"
	var cases []badCase
	for _, cmd := range []string{"cps", "throughput"} {
		for spec, want := range map[string]string{
			"":                                  "empty",
			"haproxy":                           `"haproxy" is not key=value`,
			"kind=haproxy url=http://h/x":       "names its frontend",
			"kind=f5 url=http://h/x":            `kind "f5" is not one of`,
			"kind=nginx url=h/x":                "not an http:// or https:// URL",
			"kind=nginx url=http://h/ timeout=": "timeout",
			"kind=prometheus url=http://h/":     "names a metric per counter",
			"kind=prometheus url=http://h/ sessions=a{b=c}": `want ="value"`,
			"kind=command sessions='unclosed":               "unclosed quote",
		} {
			cases = append(cases, badCase{[]string{cmd, "--device-counters", spec, url}, want})
		}
	}
	method := "method: {duration: 1s, warmup: 0s, cooldown: 0s, explore: {concurrency: {min: 1, max: 2}, probe_duration: 100ms, min_gain: 5%}, " +
		"accept: {max_generator_cpu: 100%}, final: {min_accepted: 1, max_runs: 1, tolerance: 10%}}\n"
	tests := "tests: [{engine: cps, profiles: [" + rsa + "]}]\n"
	for name, p := range map[string]struct{ body, want string }{
		"kind":      {"name: x\nduts: [{name: a, url: \"https://a.test/\", counters: {kind: f5, url: \"http://h/\"}}]\n" + tests + method, `duts: a: counters: kind "f5"`},
		"frontend":  {"name: x\nduts: [{name: a, url: \"https://a.test/\", counters: {kind: haproxy, url: \"http://h/stats;csv\"}}]\n" + tests + method, "names its frontend"},
		"profile":   {"name: x\nduts: [{name: a, url: \"https://a.test/\", counters: {kind: haproxy, url: \"http://h/\", frontends: {nope: fe}}}]\n" + tests + method, `unknown profile "nope"`},
		"metric":    {"name: x\nduts: [{name: a, url: \"https://a.test/\", counters: {kind: prometheus, url: \"http://h/\", metrics: {sessions: \"9x\"}}}]\n" + tests + method, "no metric name"},
		"field":     {"name: x\nduts: [{name: a, url: \"https://a.test/\", counters: {kind: nginx, url: \"http://h/\", colour: red}}]\n" + tests + method, "colour"},
		"tolerance": {"name: x\nduts: [{name: a, url: \"https://a.test/\"}]\n" + tests + strings.Replace(method, "max_generator_cpu: 100%", "max_generator_cpu: 100%, max_device_disagreement: 101%", 1), "max_device_disagreement"},
	} {
		f := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(f, []byte(p.body), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, badCase{[]string{"qualify", "--plan", f, "--out", filepath.Join(dir, "out-"+name)}, p.want})
	}
	for _, tc := range cases {
		code, stderr, timedOut := invokeBounded(t, 20*time.Second, tc.args...)
		switch {
		case timedOut:
			t.Errorf("%q: still running after 20 s", tc.args)
		case code != exitBadUsage:
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitBadUsage, stderr)
		case strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want):
			t.Errorf("%q: stderr %q, want one line naming %q", tc.args, stderr, tc.want)
		}
	}
}

// TestDeviceCountersCLI: cps and throughput with --device-counters against
// HAProxy: the record's device block (valid against the schema), the
// summary's "device counted N, tlsbench counted M"; a wrong source is
// reported on stdout and stderr, with exit 1.
func TestDeviceCountersCLI(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seed := testdut.Seeds(t, ca, dir)[1]
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{seed.Frontend})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "https://localhost:" + h.Addr(seed.Frontend.Name)[strings.LastIndex(h.Addr(seed.Frontend.Name), ":")+1:] + "/1k"
	for _, cmd := range []string{"cps", "throughput"} {
		file := filepath.Join(dir, cmd+".json")
		code, stdout, stderr := invoke(t, context.Background(), cmd, "-q", "-c", "2", "-d", "500ms", "--warmup", "200ms",
			"--profile", seed.Profile, "--cacert", caFile, "--json", file,
			"--device-counters", "kind=haproxy url="+h.StatsCSV()+" frontend="+seed.Frontend.Name, url)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
		}
		if !strings.Contains(stdout, "run sessions: device counted") || !strings.Contains(stdout, "; exact") {
			t.Errorf("%s: the summary has no device counts: %s", cmd, stdout)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var r metrics.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if d := r.Device; d == nil || d.Error != "" || d.Run == nil || d.Run.Sessions == nil {
			t.Fatalf("%s: device block %+v", cmd, d)
		}
		for _, row := range r.DeviceRows() {
			if row.Scope == "run" && row.Diff != 0 {
				t.Errorf("%s: %s", cmd, row.Explain())
			}
		}
	}
	// A wrong frontend fails the first read: no load, exit 1 at once.
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s",
		"--profile", seed.Profile, "--cacert", caFile,
		"--device-counters", "kind=haproxy url="+h.StatsCSV()+" frontend=fe_wrong", url)
	if code != exitFailed || !strings.Contains(stderr, `no frontend "fe_wrong"`) ||
		!strings.Contains(stderr, "no load sent") || stdout != "" {
		t.Errorf("wrong frontend: exit %d, stdout %q, stderr %q; want exit 1 naming it, no load, no summary",
			code, stdout, stderr)
	}
	// Counters that fail after the first read: the run is made, the
	// summary and stderr say why the counts are missing, exit 1.
	once := filepath.Join(dir, "read-once")
	code, stdout, stderr = invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s",
		"--profile", seed.Profile, "--cacert", caFile,
		"--device-counters", fmt.Sprintf(
			`kind=command sessions="sh -c 'test -e %[1]s && echo gone || { touch %[1]s; echo 0; }'"`, once), url)
	if code != exitFailed || !strings.Contains(stderr, `printed "gone"`) ||
		!strings.Contains(stdout, `ERROR        the device's counters could not be read`) {
		t.Errorf("counters gone after the first read: exit %d, stdout %q, stderr %q; want exit 1 naming it on both",
			code, stdout, stderr)
	}
}

// countingProfile is a profile countingTarget serves (its certificate is
// RSA 2048, crypto/tls offers ECDHE).
const countingProfile = "ecdhe-rsa-aes128-gcm-sha256-p256"

// countingTarget is a TLS server on loopback (tlsbench's -k) that counts
// the connections it accepts: the load a run sent it.
func countingTarget(t *testing.T) (url string, conns *atomic.Int64) {
	t.Helper()
	conns = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL + "/", conns
}

// TestDeviceCountersHangSignal: a command counter that hangs (its timeout
// the longest allowed) and one SIGINT to the real binary: the process and
// every process its counter started (the command, a shell's child) are
// gone within a second, and no load was sent. And a counter that hangs
// once the load has started (its first read answered): the same within a
// second, the run cut short.
func TestDeviceCountersHangSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "tlsbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	url, conns := countingTarget(t)
	once := filepath.Join(t.TempDir(), "read")
	for _, tc := range []struct{ name, counter string }{
		{"sleep", "sleep 600"},
		{"shell", `sh -c "sleep 600; echo 1"`},
		{"during the load", `sh -c "test -e ` + once + ` && sleep 600; touch ` + once + `; echo 0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			before := conns.Load()
			cmd := exec.Command(bin, "cps", "-q", "-k", "--profile", countingProfile, "-c", "1",
				"-d", "30s", "--warmup", "200ms",
				"--device-counters", "kind=command sessions='"+tc.counter+"' timeout=1m", url)
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// The counter's processes, once the sleep has started.
			var kids []int
			exited := false
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				kids = kids[:0]
				hasSleep := false
				for p, comm := range testdut.Descendants(cmd.Process.Pid) {
					kids = append(kids, p)
					hasSleep = hasSleep || comm == "sleep"
				}
				if hasSleep {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("no sleep started under tlsbench (%d) in 15 s: %v; stderr %q", cmd.Process.Pid, kids, stderr.String())
				}
			}
			defer func() { // whatever the outcome, nothing of the test is left
				if !exited { // its pid is still its own
					for p := range testdut.Descendants(cmd.Process.Pid) {
						kids = append(kids, p)
					}
				}
				_ = cmd.Process.Kill()
				for _, p := range kids {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			}()
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			select {
			case <-done:
				exited = true
			case <-time.After(time.Second):
				t.Fatalf("tlsbench still running a second after one SIGINT; stderr %q", stderr.String())
			}
			t.Logf("tlsbench exited %s after the SIGINT", time.Since(sent).Round(time.Millisecond))
			if live := testdut.Running(kids, time.Second-time.Since(sent)); len(live) > 0 {
				t.Errorf("the counter's processes %v still running a second after the SIGINT (of %v)", live, kids)
			}
			code, n := cmd.ProcessState.ExitCode(), conns.Load()-before
			if tc.name == "during the load" {
				if code != exitFailed || n == 0 || !strings.Contains(stderr.String(), "could not be read") {
					t.Errorf("exit %d, %d connections, stderr %q; want 1, the load, the counts missing", code, n, stderr.String())
				}
				return
			}
			if code != exitFailed || !strings.Contains(stderr.String(), "interrupted") ||
				!strings.Contains(stderr.String(), "no load sent") {
				t.Errorf("exit %d, stderr %q; want 1 and interrupted, no load sent", code, stderr.String())
			}
			if n != 0 {
				t.Errorf("the target counted %d connections", n)
			}
		})
	}
}

// TestQualifyCountersUnreadable: a DUT whose counters cannot be read (the
// port refuses) stops the campaign at the preliminary phase with that
// reason: exit 1, no exploration run in the ledger, no table calling the
// runs inconsistent.
func TestQualifyCountersUnreadable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.yaml")
	plan := `name: unreadable
duts: [{name: ref, url: reference, counters: {kind: nginx, url: "http://127.0.0.1:1/stub_status"}}]
tests:
  - {engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}
method:
  duration: 300ms
  warmup: 50ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 150ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%, max_device_disagreement: 0%}
  final: {min_accepted: 1, max_runs: 2, tolerance: 60%}
`
	if err := os.WriteFile(file, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "campaign")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, stdout, stderr := invoke(t, ctx, "qualify", "-q", "--plan", file, "--out", out)
	last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
	if code != exitFailed || !strings.Contains(last, "preliminary: DUT ref") || !strings.Contains(last, "refused") ||
		!strings.Contains(last, "no load sent") {
		t.Errorf("exit %d, last line %q; want 1 and the preliminary failure naming the refused counters", code, last)
	}
	if strings.Contains(stdout, "inconsistent") || strings.Contains(stdout, "quieter") {
		t.Errorf("a table was published:\n%s", stdout)
	}
	ledger, err := os.ReadFile(filepath.Join(out, "ledger.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if n := bytes.Count(ledger, []byte("\n")); n != 0 {
		t.Errorf("the ledger holds %d runs:\n%s", n, ledger)
	}
}
