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
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s",
		"--profile", seed.Profile, "--cacert", caFile,
		"--device-counters", "kind=haproxy url="+h.StatsCSV()+" frontend=fe_wrong", url)
	if code != exitFailed || !strings.Contains(stderr, `no frontend "fe_wrong"`) || !strings.Contains(stdout, `ERROR        the device's counters could not be read`) {
		t.Errorf("wrong frontend: exit %d, stdout %q, stderr %q; want exit 1 naming it on both", code, stdout, stderr)
	}
}
