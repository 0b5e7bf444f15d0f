package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/reports"
)

// consecutivePorts returns the first of n consecutive ports free on
// 127.0.0.1 now (another process may take one before the pool binds it).
func consecutivePorts(t *testing.T, n int) int {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		first := ln.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{ln}
		for p := first + 1; p < first+n && p <= 65535; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				break
			}
			lns = append(lns, l)
		}
		for _, l := range lns {
			l.Close()
		}
		if len(lns) == n {
			return first
		}
	}
	t.Skipf("no %d consecutive free ports", n)
	return 0
}

// TestBackendsCampaign: a campaign whose plan has backends starts the pool,
// HAProxy in front of it forwards every request there, each run's record
// has the backends' requests as its device counters, exact, and the pool's
// counts are written beside the ledger.
func TestBackendsCampaign(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seed := testdut.Seeds(t, ca, dir)[1] // P-256
	first := consecutivePorts(t, 4)
	fe := seed.Frontend
	for i := range 4 {
		fe.Backends = append(fe.Backends, fmt.Sprintf("127.0.0.1:%d", first+i))
	}
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{fe})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := fmt.Sprintf(`name: backends
duts:
  - {name: haproxy, url: "https://localhost:%s/", cacert: %s}
backends: {count: 4, listen: "127.0.0.1:%d"}
tests:
  - {engine: cps, path: /1k, profiles: [%s]}
method:
  duration: 500ms
  warmup: 200ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 300ms, min_gain: 5%%}
  accept: {max_generator_cpu: 100%%, max_device_disagreement: 0%%}
  final: {min_accepted: 3, max_runs: 3, tolerance: 50%%}
`, h.Addr(fe.Name)[strings.LastIndex(h.Addr(fe.Name), ":")+1:], caFile, first, seed.Profile)
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "campaign")
	code, stdout, stderr := invoke(t, context.Background(), "qualify", "-q", "--plan", planFile, "--out", out)
	if code != exitOK {
		t.Fatalf("qualify: exit %d\n%s\n%s", code, stdout, stderr)
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	var runs, probes int64
	for _, e := range entries {
		if x := e.ResumptionProbe; x != nil {
			probes += x.Requests
		}
		if e.Run == nil || e.Run.Device == nil || e.Run.Device.Run == nil || e.Run.Device.Run.Requests == nil {
			t.Fatalf("%s: no backends' requests in the record", e.Key)
		}
		for _, row := range e.Run.DeviceRows() {
			if row.Scope == "run" && row.Diff != 0 {
				t.Errorf("%s: %s", e.Key, row.Explain())
			}
		}
		runs += *e.Run.Device.Run.Requests
	}
	data, err := os.ReadFile(filepath.Join(out, reports.BackendsFile))
	if err != nil {
		t.Fatal(err)
	}
	counts, err := reports.DecodeBackends(data)
	if err != nil || len(counts.Backends) != 5 || len(counts.Runs) != len(entries) {
		t.Fatalf("%s: %v, want 4 backends and the total, %d runs\n%s", reports.BackendsFile, err, len(entries), data)
	}
	// The runs' requests, and the preliminary phase's resumption probe's
	// (outside any run, in the ledger).
	total := counts.Backends[4].Requests
	t.Logf("%d runs: %d requests in their records, %d the resumption probe's; the backends answered %d",
		len(entries), runs, probes, total)
	if total != runs+probes || probes == 0 {
		t.Errorf("the backends answered %d requests, the runs' records count %d and the probe's %d", total, runs,
			probes)
	}
	code, text, stderr := invoke(t, context.Background(), "report", out)
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	_, block, ok := strings.Cut(text, "Backends: backends")
	want := fmt.Sprintf("they counted %d, tlsbench %d transactions and preflights (exact in %d of %d runs", runs, runs,
		len(entries), len(entries))
	if !ok || !strings.Contains(block, want) || !strings.Contains(block, "backend-4") {
		t.Errorf("the report's backends block does not say %q:\n%s", want, block)
	}
	t.Logf("%s", block)
}
