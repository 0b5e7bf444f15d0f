package plan_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/profiles"
)

func profilesSet() *profiles.Set { return profiles.Builtin() }

const goodPlan = `name: adc-qualification
duts:
  - name: adc-a
    url: https://www.fwtest.com:443/
    resolve: 10.0.0.5
    cacert: lab-ca.crt
    endpoints:
      ecdhe-ecdsa-aes128-sha256-p384: https://www.fwtest.com:8444/
tests:
  - {engine: cps, path: /1k, profiles: [ecdhe-ecdsa-aes128-sha256-p384, ecdhe-ecdsa-aes128-sha256-p256, rsa2048-aes128-gcm-sha256]}
  - {engine: throughput, path: /1m, profiles: [ecdhe-ecdsa-aes128-sha256-p384, ecdhe-ecdsa-aes128-sha256-p256, rsa2048-aes128-gcm-sha256]}
method:
  duration: 30s
  warmup: 5s
  cooldown: 2s
  explore: {concurrency: {min: 1, max: 1024}, probe_duration: 5s, min_gain: 3%}
  accept: {max_errors: 0, max_error_rate: 0, max_generator_cpu: 90%}
  final: {min_accepted: 3, max_runs: 10, tolerance: 3%}
`

func TestParsePlan(t *testing.T) {
	p, err := plan.ParsePlan("plan.yaml", []byte(goodPlan), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	m := p.Method
	if time.Duration(m.Duration) != 30*time.Second || m.Explore.MinGain != 0.03 || m.Accept.MaxGeneratorCPU != 0.9 || m.Final.Tolerance != 0.03 {
		t.Errorf("method %+v", m)
	}
	if p.DUTs[0].Endpoints["ecdhe-ecdsa-aes128-sha256-p384"] != "https://www.fwtest.com:8444/" {
		t.Errorf("endpoints %v", p.DUTs[0].Endpoints)
	}
	// A plan without a method gets the default one; the resolved plan
	// round-trips.
	p2, err := plan.ParsePlan("p.yaml", []byte("name: x\nduts: [{name: a, url: 'https://a/'}]\ntests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n"), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if p2.Method != plan.DefaultMethod() {
		t.Errorf("method %+v, want the default", p2.Method)
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p3, err := plan.ParsePlan("resolved.yaml", data, profilesSet())
	if err != nil {
		t.Fatalf("resolved plan does not parse: %v\n%s", err, data)
	}
	if p3.Method != p.Method {
		t.Errorf("round trip: %+v, want %+v", p3.Method, p.Method)
	}
}

// TestNoiseLimits: max_other_cpu and max_steal are off (0) unless the plan
// sets them; set, they round-trip through the resolved plan, and the
// default plan's resolved form does not name them.
func TestNoiseLimits(t *testing.T) {
	if a := plan.DefaultMethod().Accept; a.MaxOtherCPU != 0 || a.MaxSteal != 0 {
		t.Errorf("default accept %+v: noise limits should be off", a)
	}
	data := strings.Replace(goodPlan, "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_other_cpu: 25%, max_steal: 5%", 1)
	p, err := plan.ParsePlan("plan.yaml", []byte(data), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Method.Accept; a.MaxOtherCPU != 0.25 || a.MaxSteal != 0.05 {
		t.Fatalf("accept %+v", a)
	}
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p2, err := plan.ParsePlan("resolved.yaml", out, profilesSet())
	if err != nil || p2.Method != p.Method {
		t.Fatalf("round trip %+v, %v; want %+v", p2.Method, err, p.Method)
	}
	def, err := plan.ParsePlan("plan.yaml", []byte(goodPlan), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if out, err = def.Marshal(); err != nil || strings.Contains(string(out), "max_other_cpu") || strings.Contains(string(out), "max_steal") {
		t.Errorf("resolved default plan names the unset noise limits (%v):\n%s", err, out)
	}
}

func TestBadPlans(t *testing.T) {
	for _, tc := range []struct {
		name, edit, with string
		line             int
		want             string
	}{
		{"unknown field", "  warmup: 5s", "  warmup: 5s\n  ramp: 3s", 15, "ramp"},
		{"unknown profile", "rsa2048-aes128-gcm-sha256]}\n  - {engine: throughput", "rsa2048-nope]}\n  - {engine: throughput", 10, `unknown profile "rsa2048-nope"`},
		{"tolerance out of range", "tolerance: 3%", "tolerance: 150%", 18, "final.tolerance"},
		{"tolerance not a percentage", "tolerance: 3%", "tolerance: lots", 18, "bad percentage"},
		{"bad duration", "duration: 30s", "duration: soon", 13, "bad duration"},
		{"unknown engine", "{engine: cps", "{engine: h2", 10, `engine "h2"`},
		{"http URL", "url: https://www.fwtest.com:443/", "url: http://www.fwtest.com/", 4, "scheme must be https"},
		{"bad resolve", "resolve: 10.0.0.5", "resolve: lb.local", 5, "not an IP address"},
		{"concurrency range", "min: 1, max: 1024", "min: 8, max: 2", 16, "explore.concurrency"},
		{"max_runs below min_accepted", "max_runs: 10", "max_runs: 2", 18, "max_runs 2 is below"},
		{"generator CPU zero", "max_generator_cpu: 90%", "max_generator_cpu: 0%", 17, "max_generator_cpu"},
		{"other CPU out of range", "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_other_cpu: 120%", 17, "accept.max_other_cpu 120% is out of range"},
		{"steal negative", "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_steal: -0.1", 17, "accept.max_steal"},
		{"other CPU not a percentage", "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_other_cpu: busy", 17, "bad percentage"},
		{"retransmit rate negative", "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_retransmit_rate: -1%", 17, "accept.max_retransmit_rate -1% is out of range"},
		{"reset rate out of range", "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_reset_rate: 150%", 17, "accept.max_reset_rate 150% is out of range"},
		{"reconnect share out of range", "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_reconnect_share: 150%", 17, "accept.max_reconnect_share 150% is out of range"},
		{"endpoint of an unknown profile", "ecdhe-ecdsa-aes128-sha256-p384: https://www.fwtest.com:8444/", "nope: https://www.fwtest.com:8444/", 8, `unknown profile "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(goodPlan, tc.edit) {
				t.Fatalf("edit %q not in the plan", tc.edit)
			}
			data := strings.Replace(goodPlan, tc.edit, tc.with, 1)
			_, err := plan.ParsePlan("plan.yaml", []byte(data), profilesSet())
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one line naming plan.yaml and %q", msg, tc.want)
			}
			if want := "plan.yaml:" + strconv.Itoa(tc.line) + ":"; !strings.Contains(msg, want) {
				t.Errorf("error %q does not name line %d", msg, tc.line)
			}
		})
	}
}

// FuzzParsePlan: any bytes give a plan or a one-line error.
func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(goodPlan))
	f.Add([]byte("name: x\nduts: [{name: a, url: 'https://a/'}]\ntests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n"))
	set := profilesSet()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := plan.ParsePlan("fuzz.yaml", data, set)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			return
		}
		if _, err := p.Marshal(); err != nil {
			t.Errorf("a valid plan does not marshal: %v", err)
		}
	})
}

// TestRepeatAndProcesses: final.repeat and a DUT's processes parse and
// round-trip; bad values are one-line errors naming the field's line.
func TestRepeatAndProcesses(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "haproxy.pid")
	if err := os.WriteFile(pidFile, []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := strings.Replace(goodPlan, "tolerance: 3%}", "tolerance: 3%, repeat: 3}", 1)
	data = strings.Replace(data, "    resolve: 10.0.0.5\n",
		"    resolve: 10.0.0.5\n    processes: [nginx, "+pidFile+"]\n", 1)
	p, err := plan.ParsePlan("plan.yaml", []byte(data), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if p.Method.Final.Repeat != 3 || strings.Join(p.DUTs[0].Processes, ",") != "nginx,"+pidFile {
		t.Errorf("repeat %d, processes %v", p.Method.Final.Repeat, p.DUTs[0].Processes)
	}
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := plan.ParsePlan("resolved.yaml", out, profilesSet()); err != nil || p2.Method != p.Method || len(p2.DUTs[0].Processes) != 2 {
		t.Errorf("round trip: %v\n%s", err, out)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"tolerance: 3%}", "tolerance: 3%, repeat: 21}", "final.repeat 21 is out of range"},
		{"tolerance: 3%}", "tolerance: 3%, repeat: -1}", "final.repeat -1 is out of range"},
		{"    resolve: 10.0.0.5\n", "    resolve: 10.0.0.5\n    processes: ['']\n", "processes"},
		{"    resolve: 10.0.0.5\n", "    resolve: 10.0.0.5\n    processes: [a-process-name-too-long]\n", "processes"},
	} {
		_, err := plan.ParsePlan("plan.yaml", []byte(strings.Replace(goodPlan, tc.from, tc.to, 1)), profilesSet())
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", tc.to, err, tc.want)
		}
	}
}

// TestRepeatZeroAndPidFiles: a plan that says final.repeat: 0 is refused
// as --repeat 0 is (leaving it out is once), and a DUT's pid file must
// exist and hold a PID when the plan is read: one line naming the field's
// line and the file.
func TestRepeatZeroAndPidFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pid")
	if err := os.WriteFile(garbage, []byte("not a pid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nginx.pid")
	withProcs := func(procs string) string {
		return strings.Replace(goodPlan, "    resolve: 10.0.0.5\n", "    resolve: 10.0.0.5\n    processes: ["+procs+"]\n", 1)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"repeat 0", strings.Replace(goodPlan, "tolerance: 3%}", "tolerance: 3%, repeat: 0}", 1),
			"method: final.repeat 0 is out of range [1, 20]"},
		{"missing pid file", withProcs("nginx, " + missing), "processes: pid file " + missing + ": no such file"},
		{"garbage pid file", withProcs(garbage), "processes: pid file " + garbage + ": holds no PID"},
		{"directory", withProcs(dir + "/"), "processes: pid file " + dir + "/: not a regular file"},
	} {
		_, err := plan.ParsePlan("plan.yaml", []byte(tc.data), profilesSet())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "plan.yaml:") ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming plan.yaml's line and %q", tc.name, err, tc.want)
		}
	}
	// Left out, final.repeat is once; 1 is once too.
	for _, data := range []string{goodPlan, strings.Replace(goodPlan, "tolerance: 3%}", "tolerance: 3%, repeat: 1}", 1)} {
		if _, err := plan.ParsePlan("plan.yaml", []byte(data), profilesSet()); err != nil {
			t.Error(err)
		}
	}
}

// TestParseTargetUnicodeHostPort: a Unicode host is turned into its A-label
// and keeps its port (plan.BaseURL, which ParseTarget replaced, dropped it).
func TestParseTargetUnicodeHostPort(t *testing.T) {
	tg, err := plan.ParseTarget("https://bücher.test:4443/x?q=1", "/1k")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Address != "xn--bcher-kva.test:4443" || tg.Port != "4443" || tg.HostHeader != "xn--bcher-kva.test:4443" ||
		tg.ServerName != "xn--bcher-kva.test" || tg.Path != "/x?q=1" || tg.URL.String() != "https://xn--bcher-kva.test:4443/x?q=1" {
		t.Errorf("got %+v", tg)
	}
	if tg, err = plan.ParseTarget("https://h.test", "/1k"); err != nil || tg.Address != "h.test:443" || tg.Path != "/1k" {
		t.Errorf("defaults: %+v, %v", tg, err)
	}
}
