package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/internal/testdut"
)

// campaignEnv, when set to a directory, makes TestDeviceCountersCampaign
// run the full two-DUT campaign (HAProxy and nginx on loopback, the three
// seed profiles, cps and throughput, each DUT's counters read, exact
// agreement asked) into it, and write its report there (report.txt,
// report.html); it takes minutes. Unset, the test runs a short campaign (one
// seed profile, cps and throughput, short runs) in a temporary directory.
const campaignEnv = "TLSBENCH_DEVICE_CAMPAIGN"

// TestDeviceCountersCampaign: a campaign against HAProxy and nginx with
// their counters read succeeds, and its report has every run's counts
// beside tlsbench's, each exact: none disagrees, none unreadable.
func TestDeviceCountersCampaign(t *testing.T) {
	root := os.Getenv(campaignEnv)
	full := root != ""
	if !full {
		root = t.TempDir()
	}
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seeds := testdut.Seeds(t, ca, dir)
	var fes []testdut.Frontend
	cfg := testdut.NginxConfig{Dir: filepath.Join(dir, "nginx"), StubStatus: true}
	for _, s := range seeds {
		fes = append(fes, s.Frontend)
		cfg.Servers = append(cfg.Servers, testdut.NginxServer{Cert: s.Frontend.Cert, Ciphers: s.Frontend.Ciphers, Curve: s.Frontend.Curves, KeepAlive: true})
	}
	h := testdut.StartHAProxy(t, dir, fes)
	n := testdut.StartNginxT(t, cfg)
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	port := func(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
	method := `  duration: 2s
  warmup: 500ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 8}, probe_duration: 1s, min_gain: 5%}
  accept: {max_generator_cpu: 100%, max_device_disagreement: 0%}
  final: {min_accepted: 3, max_runs: 5, tolerance: 15%}`
	if !full {
		seeds = seeds[:1]
		method = `  duration: 500ms
  warmup: 200ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 300ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%, max_device_disagreement: 0%}
  final: {min_accepted: 3, max_runs: 3, tolerance: 50%}`
	}
	var hEnd, nEnd, fronts, profs []string
	for i, s := range seeds {
		profs = append(profs, s.Profile)
		hEnd = append(hEnd, fmt.Sprintf("%s: \"https://localhost:%s/\"", s.Profile, port(h.Addr(s.Frontend.Name))))
		nEnd = append(nEnd, fmt.Sprintf("%s: \"https://localhost:%s/\"", s.Profile, port(n.Addrs[i])))
		fronts = append(fronts, s.Profile+": "+s.Frontend.Name)
	}
	plan := fmt.Sprintf(`name: device-counters
duts:
  - name: haproxy
    url: "https://localhost:%s/"
    cacert: %s
    endpoints: {%s}
    counters: {kind: haproxy, url: "%s", frontends: {%s}}
  - name: nginx
    url: "https://localhost:%s/"
    cacert: %s
    endpoints: {%s}
    counters: {kind: nginx, url: "%s"}
tests:
  - {engine: cps, path: /1k, profiles: [%[12]s]}
  - {engine: throughput, path: /1k, profiles: [%[12]s]}
method:
%[13]s
`, port(h.Addr(seeds[0].Frontend.Name)), caFile, strings.Join(hEnd, ", "), h.StatsCSV(), strings.Join(fronts, ", "),
		port(n.Addrs[0]), caFile, strings.Join(nEnd, ", "), n.StubStatusURL(), "", "", strings.Join(profs, ", "), method)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(root, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "campaign")
	code, stdout, stderr := invoke(t, context.Background(), "qualify", "-q", "--plan", planFile, "--out", out)
	t.Logf("qualify: exit %d\n%s\n%s", code, stdout, stderr)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"text", "html"} {
		code, _, stderr := invoke(t, context.Background(), "report", out, "--format", f, "-o", filepath.Join(root, "report."+map[string]string{"text": "txt", "html": "html"}[f]))
		if code != exitOK {
			t.Fatalf("report %s: exit %d: %s", f, code, stderr)
		}
	}
	text, err := os.ReadFile(filepath.Join(root, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(text)
	// What was tested: nginx's version as read from its Server header,
	// HAProxy's (no Server header) as its stats page names it, exactly
	// haproxy -v's; every DUT's endpoint of every profile, the chains
	// verified by the CA.
	bed, _, _ := strings.Cut(report, "\nHow\n")
	v, err := exec.Command("haproxy", "-v").Output()
	version := regexp.MustCompile(`HAProxy version (\S+) `).FindSubmatch(v)
	if err != nil || version == nil {
		t.Fatalf("haproxy -v: %v: %s", err, v)
	}
	wantBed := []string{`nginx/1\.`, `\(read: Server header\)`, regexp.QuoteMeta("verified (" + caFile + ")"),
		`haproxy +- +` + regexp.QuoteMeta("HAProxy "+string(version[1])+" (read: stats page)")}
	for i, s := range seeds {
		wantBed = append(wantBed, "haproxy +"+s.Profile+" +https://localhost:"+port(h.Addr(s.Frontend.Name))+"/\n",
			"nginx +"+s.Profile+" +https://localhost:"+port(n.Addrs[i])+"/\n")
	}
	for _, want := range wantBed {
		if !regexp.MustCompile(want).MatchString(bed) {
			t.Errorf("what was tested has no %s:\n%s", want, bed)
		}
	}
	_, devices, ok := strings.Cut(report, "Device counters")
	if !ok {
		t.Fatalf("no device counters in the report:\n%s", report)
	}
	for _, want := range []string{"haproxy", "nginx", "exact"} {
		if !strings.Contains(devices, want) {
			t.Errorf("the report's device counters do not name %q:\n%s", want, devices)
		}
	}
	for _, bad := range []string{"DISAGREES", "unreadable"} {
		if strings.Contains(devices, bad) {
			t.Errorf("the report's device counters say %q:\n%s", bad, devices)
		}
	}
}
