package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/reports"
)

// The quick RFC 9411 suite against real TLS terminators on loopback, with
// the RFC's profile (NetSecOPEN's ECDHE-RSA-AES128-GCM-SHA256, RSA 2048,
// P-256): nginx serving the objects itself, its stub_status the device's
// counters; HAProxy in front of a pool of plain backends that the campaign
// starts and counts. Every run's KPIs are cross-checked with the device's
// own counts (requests and connections, exact over the run), the ramps are
// in every final run's series, each object of the mix is drawn and
// counted, and the report has the RFC 9411 section of every test.

// suiteObjectSizes are the sizes, in bytes, the quick suite asks for: its
// CPS and latency tests' (1k, 16k) and the mix's.
func suiteObjectSizes(t *testing.T) []int64 {
	t.Helper()
	sizes := []int64{1024, 16384}
	mix, err := httpreq.ParseObjects(plan.SuiteMix)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range mix {
		sizes = append(sizes, o.Size)
	}
	return sizes
}

// suitePlanFile writes the quick suite's plan against dut (and the pool of
// backends, if any), its tests carried over http ("": HTTP/1.1), and
// returns its path.
func suitePlanFile(t *testing.T, dir string, dut plan.DUT, backends *plan.Backends, http string) string {
	t.Helper()
	pl, err := plan.SuitePlan(plan.SuiteRFC9411, true, []plan.DUT{dut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl.Backends = backends
	for i := range pl.Tests {
		pl.Tests[i].HTTP = http
	}
	data, err := pl.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// runSuite runs the plan and checks the campaign: every test published,
// every run's device counts exact over the run, ramps in the series, the
// mix's objects all drawn, the report's RFC 9411 section; every run over
// http ("": HTTP/1.1), as its record says.
func runSuite(t *testing.T, planFile, out, http string) {
	t.Helper()
	start := time.Now()
	code, stdout, stderr := invoke(t, context.Background(), "qualify", "-q", "--plan", planFile, "--out", out)
	t.Logf("%s\n%s", time.Since(start).Round(time.Second), stdout)
	if code != exitOK {
		t.Fatalf("qualify: exit %d\n%s", code, stderr)
	}
	tests, _, err := plan.Suite(plan.SuiteRFC9411, true)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, method.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := method.DecodeSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range tests {
		i := slices.IndexFunc(sum.Rows, func(r method.Row) bool { return r.Test == w.Name })
		if i < 0 || sum.Rows[i].Value == nil || *sum.Rows[i].Value <= 0 {
			t.Errorf("%s: no published value in summary.json", w.Name)
		}
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	checkSuiteRuns(t, entries)
	want := map[string]string{"": "http/1.1", "2": "http/2"}[http]
	for _, e := range entries {
		if e.Run != nil && e.Run.ProtocolName() != want {
			t.Errorf("%s: a run over %s, want %s", e.Key, e.Run.ProtocolName(), want)
		}
	}
	code, text, stderr := invoke(t, context.Background(), "report", out)
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	_, section, ok := strings.Cut(text, "\nRFC 9411\n")
	if !ok {
		t.Fatalf("the report has no RFC 9411 section:\n%s", text)
	}
	for _, w := range tests {
		if !strings.Contains(section, ": "+w.Name+" (rfc9411)") {
			t.Errorf("the report's RFC 9411 section has no %q", w.Name)
		}
	}
	for _, want := range []string{"the criteria", "RFC 9411 specifies", "failed transactions", "TCP resets"} {
		if !strings.Contains(section, want) {
			t.Errorf("the report's RFC 9411 section has no %q", want)
		}
	}
}

// checkSuiteRuns checks each run of the ledger: the device's counts over
// the run agree with tlsbench's; a final run's series ramps up, sustains,
// ramps down; a run of the mix drew every object, and its objects add up to
// its transactions.
func checkSuiteRuns(t *testing.T, entries []*method.Entry) {
	t.Helper()
	mix, err := httpreq.ParseObjects(plan.SuiteMix)
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, e := range entries {
		r := e.Run
		if r == nil || e.Phase == vocab.Preliminary {
			continue
		}
		if r.Device == nil || r.Device.Run == nil || r.Device.Error != "" {
			t.Errorf("%s: no device counts over the run: %+v", e.Key, r.Device)
			continue
		}
		for _, row := range r.DeviceRows() {
			if row.Scope == "run" && !row.Agrees {
				t.Errorf("%s: %s", e.Key, row.Explain())
			}
		}
		checked++
		if e.Phase == vocab.Final {
			var phases []string
			for _, s := range r.Series {
				if len(phases) == 0 || phases[len(phases)-1] != s.Phase {
					phases = append(phases, s.Phase)
				}
			}
			// §7.9's ramp-up opens its connections at half §7.6's CPS:
			// a few dozen take less than a second, none of the series'.
			up := slices.Contains(phases, "ramp_up") || e.Test == "7.9 1k" && r.Timeline != nil && r.Timeline.RampUpS > 0
			if !up || !slices.Contains(phases, "sustain") || !slices.Contains(phases, "ramp_down") || r.Timeline == nil {
				t.Errorf("%s: phases %v, timeline %+v: want the ramps around the sustain phase", e.Key, phases,
					r.Timeline)
			}
		}
		if e.Test == "7.7 mix" && r.Errors.Total == 0 {
			var n int64
			for _, o := range r.Objects {
				n += o.Transactions
			}
			if len(r.Objects) != len(mix) || n != r.Transactions {
				t.Errorf("%s: %d objects adding to %d transactions, want %d objects adding to %d", e.Key,
					len(r.Objects), n, len(mix), r.Transactions)
			}
		}
	}
	if checked == 0 {
		t.Error("no run of the ledger was checked")
	}
	t.Logf("%d runs' device counts agree with tlsbench's over the run", checked)
}

// rfcLeaf is the RSA 2048 certificate of the suite's first profile.
func rfcLeaf(t *testing.T, dir string) (*cipher.CA, string, string) {
	t.Helper()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "RSA", Bits: 2048})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return ca, cert, caFile
}

func TestSuiteNginx(t *testing.T) { suiteNginx(t, "") }

// TestSuiteNginxHTTP2: the same suite over HTTP/2 (nginx's http2 on its
// TLS listener), every run's device counts exact.
func TestSuiteNginxHTTP2(t *testing.T) { suiteNginx(t, "2") }

func suiteNginx(t *testing.T, http string) {
	if testing.Short() {
		t.Skip("a campaign of about a minute")
	}
	t.Parallel() // with the other campaigns: each waits on its runs' durations
	testdut.RequireNginx(t)
	dir := t.TempDir()
	_, cert, caFile := rfcLeaf(t, dir)
	www := filepath.Join(dir, "www", "bytes")
	if err := os.MkdirAll(www, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range suiteObjectSizes(t) {
		if err := os.WriteFile(filepath.Join(www, fmt.Sprint(n)), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, NoFile: 4096, StubStatus: true,
		Servers: []testdut.NginxServer{{Cert: cert, Ciphers: "ECDHE-RSA-AES128-GCM-SHA256", Curve: "prime256v1",
			KeepAlive: true, HTTP2: http == "2"}}})
	port := n.Addrs[0][strings.LastIndex(n.Addrs[0], ":")+1:]
	dut := plan.DUT{Name: "nginx", URL: "https://localhost:" + port + "/", CACert: caFile,
		Counters: &devcount.Source{Kind: devcount.KindNginx, URL: n.StubStatusURL()}}
	runSuite(t, suitePlanFile(t, dir, dut, nil, http), filepath.Join(dir, "campaign"), http)
}

func TestSuiteHAProxyBackends(t *testing.T) { suiteHAProxy(t, "") }

// TestSuiteHAProxyHTTP2: the same suite over HTTP/2 (HAProxy's alpn
// h2,http/1.1 in front of the plain HTTP/1.1 pool).
func TestSuiteHAProxyHTTP2(t *testing.T) { suiteHAProxy(t, "2") }

func suiteHAProxy(t *testing.T, http string) {
	if testing.Short() {
		t.Skip("a campaign of about a minute")
	}
	t.Parallel() // with the other campaigns: each waits on its runs' durations
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	_, cert, caFile := rfcLeaf(t, dir)
	first := consecutivePorts(t, 4)
	fe := testdut.Frontend{Name: "fe_rfc9411", Cert: cert, Ciphers: "ECDHE-RSA-AES128-GCM-SHA256", Curves: "P-256"}
	if http == "2" {
		fe.ALPN = "h2,http/1.1"
	}
	for i := range 4 {
		fe.Backends = append(fe.Backends, fmt.Sprintf("127.0.0.1:%d", first+i))
	}
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{fe})
	port := h.Addr(fe.Name)[strings.LastIndex(h.Addr(fe.Name), ":")+1:]
	dut := plan.DUT{Name: "haproxy", URL: "https://localhost:" + port + "/", CACert: caFile}
	out := filepath.Join(dir, "campaign")
	runSuite(t, suitePlanFile(t, dir, dut, &plan.Backends{Count: 4, Listen: fmt.Sprintf("127.0.0.1:%d", first)}, http),
		out, http)
	data, err := os.ReadFile(filepath.Join(out, reports.BackendsFile))
	if err != nil {
		t.Fatal(err)
	}
	counts, err := reports.DecodeBackends(data)
	if err != nil || len(counts.Backends) != 5 {
		t.Fatalf("%s: %v, want 4 backends and the total", reports.BackendsFile, err)
	}
	// Round robin: every backend answered its share, within one per run.
	lo, hi := counts.Backends[0].Requests, counts.Backends[0].Requests
	for _, b := range counts.Backends[:4] {
		lo, hi = min(lo, b.Requests), max(hi, b.Requests)
	}
	t.Logf("backends: %+v", counts.Backends)
	if hi-lo > int64(len(counts.Runs))+4 {
		t.Errorf("round robin spread the requests from %d to %d over %d runs", lo, hi, len(counts.Runs))
	}
}
