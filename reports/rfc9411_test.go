package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// rfcTests are the plan tests of rfcCampaign: §7.6 CPS of P-384 at /1k,
// §7.7 throughput of P-384 at /1m, §7.8 latency of RSA at /1k at half of
// §7.6's rate.
var rfcTests = []plan.Test{
	{Engine: "cps", Path: "/1k", Profiles: []string{reporttest.P384}, Name: "7.6 1k", RFC9411: "7.6"},
	{Engine: "throughput", Path: "/1m", Profiles: []string{reporttest.P384}, Name: "7.7 1m", RFC9411: "7.7",
		RequestsPerConn: 10},
	{Engine: "cps", Path: "/1k", Profiles: []string{reporttest.RSA}, Name: "7.8 1k", RFC9411: "7.8",
		Of: "7.6 1k", Share: 0.5},
}

// rfcCampaign is a one-DUT campaign of the three rfcTests. It is run as the
// study's tests (the synthetic records would fail the criteria the suite's
// campaign judges its runs by, and none would be published), and named
// after: each cell and ledger entry is given its test's name through its
// JSON ("test"), which campaigns whose cells name their test carry (and
// others drop, their runs then matched by engine, profile and path). The
// published runs are then given what the synthetic records lack: §7.6's a
// tcp block and open connections (it passes), §7.8's too, an open loop at
// twice the rate it made (it misses its target) and two objects' TTFB and
// TTLB; §7.7's keeps no tcp block (not measured: it fails).
func rfcCampaign(t *testing.T, named bool) reports.Input {
	t.Helper()
	sc := reporttest.Firmware("rfc", "adc-a", 1)
	p := sc.Plan
	p.Tests = nil
	for _, rt := range rfcTests {
		p.Tests = append(p.Tests, plan.Test{Engine: rt.Engine, Path: rt.Path, Profiles: rt.Profiles})
	}
	s, ledger, err := reporttest.Campaign(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	p.Tests = rfcTests
	if named {
		for i, cell := range s.Cells {
			s.Cells[i] = withTestName(t, cell, cell.Engine, cell.Profile)
		}
		for i, e := range ledger {
			ledger[i] = withTestName(t, e, e.Engine, e.Profile)
		}
	}
	for _, cell := range s.Cells {
		r := method.PublishedRun(ledger, cell)
		if r == nil {
			t.Fatalf("cell %s %s has no published run", cell.Engine, cell.Profile)
		}
		if cell.Engine == "throughput" {
			// A record of a system without TCP_INFO: its resets cannot be
			// seen, and criterion b is not measured.
			r.TCP = &metrics.TCP{Unavailable: metrics.TCPUnavailable}
			continue
		}
		r.ConnectionsOpened = r.Transactions
		r.TCP = &metrics.TCP{Connections: r.Transactions}
		for i := range r.Series {
			r.Series[i].OpenConns = 16
		}
		if cell.Profile == reporttest.RSA {
			r.Load.Mode, r.Load.Rate = "open", 2*float64(r.Transactions)/r.DurationS
			for _, size := range []int64{1024, 16384} {
				r.Objects = append(r.Objects, metrics.ObjectStats{Size: size, Weight: 1, Transactions: 100,
					TTFB: metrics.Percentiles{Count: 100, Min: 800, Mean: 1500, P50: 1400, P90: 2000, P99: 3000, Max: 4200},
					TTLB: metrics.Percentiles{Count: 100, Min: 900, Mean: 1700, P50: 1600, P90: 2300, P99: 3500, Max: 5100}})
			}
		}
	}
	return reports.Input{Name: "results/rfc", Campaign: &reports.Campaign{Dir: "results/rfc", Plan: p, Summary: s,
		Ledger: ledger}}
}

// withTestName is x (a cell or a ledger entry of engine and profile)
// decoded from its JSON with its test's name added.
func withTestName[T any](t *testing.T, x *T, engine vocab.Engine, profile string) *T {
	t.Helper()
	var m map[string]any
	data, err := json.Marshal(x)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range rfcTests {
		if rt.Engine == engine && rt.Profiles[0] == profile {
			m["test"] = rt.Name
		}
	}
	if data, err = json.Marshal(m); err == nil {
		x = new(T)
		err = json.Unmarshal(data, x)
	}
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRFC9411Section(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(fmt.Sprintf("named=%v", named), func(t *testing.T) { testRFC9411Section(t, named) })
	}
}

func testRFC9411Section(t *testing.T, named bool) {
	r := build(t, rfcCampaign(t, named))
	if len(r.RFC9411) != 3 {
		t.Fatalf("%d RFC 9411 tests, want 3: %+v", len(r.RFC9411), r.RFC9411)
	}
	for i, want := range []struct {
		pass   bool
		reason string
	}{{true, ""}, {false, "TCP resets"}, {false, "target objective"}} {
		tt := r.RFC9411[i]
		if len(tt.Results) != 1 || tt.Results[0].Verdict == nil {
			t.Fatalf("test %s: results %+v", tt.Name, tt.Results)
		}
		if v := tt.Results[0].Verdict; v.Pass != want.pass || v.Reason() != want.reason {
			t.Errorf("test %s: verdict %+v, want pass %v, reason %q", tt.Name, v, want.pass, want.reason)
		}
	}
	var text, md, js bytes.Buffer
	doc := reports.ReportDoc(r)
	if err := doc.Text(&text); err != nil {
		t.Fatal(err)
	}
	if err := doc.Markdown(&md, "", nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"§7.6 HTTPS connections per second: 7.6 1k (rfc)",
		"§7.7 HTTPS throughput: 7.7 1m (rfc)",
		"§7.8 HTTPS transaction latency: 7.8 1k (rfc)",
		"connections per second: 6", "throughput (payload): ", "transactions per second: ",
		"PASS", "FAIL", "TCP resets not measured", "target objective 50% (limit < 5%)",
		"RFC 9411 specifies", "300 s (RFC 9411, as tlsbench reads it", "shorter: a short method's window",
		"NetSecOPEN's KB are 1000 bytes", "16 KiB", "TTLB", "5.10 ms", "RFC 9411 §6.3",
		"50% of the maximum of §7.6 or §7.7", "50% of 7.6 1k's published rate",
		"Runs matched to the test " + r.RFC9411[0].Matched,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report has no %q", want)
		}
	}
	if m := r.RFC9411[0].Matched; !named && !strings.Contains(m, "by engine, profile and request path") {
		t.Errorf("cells without their test's name matched %s", m)
	}
	// What follows the RFC is no deviation: §7.7's 10 transactions per
	// connection, §7.8's 50% of §7.6.
	if strings.Contains(text.String(), "not the RFC's 10") {
		t.Error("§7.7 with 10 requests per connection reported as a deviation")
	}
	if strings.Contains(text.String(), "not 50% of a published maximum") {
		t.Error("§7.8 at 50% of §7.6's rate reported as a deviation")
	}
	for _, want := range []string{"## RFC 9411", "| Parameter | RFC 9411 specifies | this run | deviation |",
		"| TCP resets |", "| Criterion | Level | RFC 9411 | Value | Result | How |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown report has no %q", want)
		}
	}
	if err := reports.ReportJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	schematest.Valid(t, schematest.Detect(js.Bytes()), "report.json", js.Bytes())
}

// A campaign without RFC 9411 tests has no such section.
func TestRFC9411SectionAbsent(t *testing.T) {
	r := build(t, lab(t))
	var text bytes.Buffer
	if err := reports.ReportDoc(r).Text(&text); err != nil {
		t.Fatal(err)
	}
	if len(r.RFC9411) != 0 || strings.Contains(text.String(), "RFC 9411 specifies") {
		t.Errorf("a plain campaign has an RFC 9411 section: %+v", r.RFC9411)
	}
}
