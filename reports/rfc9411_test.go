package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
	in := rfcCampaign(t, named)
	r := build(t, in)
	if named { // the suite's table: each value beside its verdict, in the report and qualify's table
		c, s := *in.Campaign, *in.Campaign.Summary
		s.Rows = nil // the suite's rows, as a campaign writes them
		for _, cell := range s.Cells {
			s.Rows = append(s.Rows, method.Row{DUT: cell.DUT, Profile: cell.Profile, Test: cell.Test, Value: &cell.Value,
				Unit: cell.Unit, Runs: &method.RunCount{Accepted: cell.Accepted, Total: cell.Total}})
		}
		c.Summary = &s
		var q bytes.Buffer
		if err := reports.QualifyTable(&c).Text(&q); err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{"PASS", "FAIL", "FAIL"} {
			if s := r.Suite[i]; s.Verdict != want || !regexp.MustCompile(s.Test+` .* `+want).MatchString(q.String()) {
				t.Errorf("suite %s: verdict %q, want %s; qualify's table:\n%s", s.Test, s.Verdict, want, q.String())
			}
		}
	}
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
		"§7.6 HTTPS connections per second: 7.6 1k (rfc) over HTTP/1.1",
		"§7.7 HTTPS throughput: 7.7 1m (rfc)",
		"§7.8 HTTPS transaction latency: 7.8 1k (rfc)",
		"connections per second: 6", "throughput (payload): ", "transactions per second: ",
		"PASS", "FAIL", "TCP resets not measured", "target objective 50% (limit < 5%)",
		"RFC 9411 specifies", "300 s (RFC 9411, as tlsbench reads it", "shorter: a short method's window",
		"16 KiB ×1", "TTLB", "5.10 ms", "RFC 9411 §6.3",
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
	// The deviations, exactly: the synthetic records' suites are not the
	// RFC's, their sizes not recorded (§7.6, §7.7) or two objects in one run
	// (§7.8), their windows short and their plan tests without ramps. What
	// follows the RFC is none: §7.6's and §7.8's one transaction per
	// connection, §7.7's 10, §7.8's 50% of §7.6.
	timeline := map[string]string{"ramp up": "10 s shorter", "startup (warm-up)": "4 s shorter",
		"sustain":   "298 s shorter: a short method's window, too short for the RFC's sustain phase",
		"ramp down": "10 s shorter"}
	for i, want := range []map[string]string{
		{"cipher suite and key": "ECDHE-ECDSA-AES128-SHA256 is not among the RFC's recommended suites",
			"object sizes": "its size is not recorded"},
		{"cipher suite and key": "ECDHE-ECDSA-AES128-SHA256 is not among the RFC's recommended suites",
			"object sizes": "its size is not recorded"},
		{"cipher suite and key": "AES128-GCM-SHA256 is not among the RFC's recommended suites",
			"object sizes": "not one of the RFC's objects for this test"},
	} {
		maps.Copy(want, timeline)
		checkDeviations(t, r, i, want)
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

// checkDeviations checks a test's one result's parameters: the deviations
// (by parameter name) are want's, and the other rows have none.
func checkDeviations(t *testing.T, r *reports.Report, i int, want map[string]string) {
	t.Helper()
	tt := r.RFC9411[i]
	if len(tt.Results) != 1 {
		t.Fatalf("test %s: %d results, want 1", tt.Name, len(tt.Results))
	}
	got, ps := map[string]string{}, tt.Results[0].Params
	if len(ps) < 8 {
		t.Errorf("test %s: %d parameters, want the suite, objects, transactions per connection, 4 phases, "+
			"clients, servers (and §7.8's load)", tt.Name, len(ps))
	}
	for _, p := range ps {
		if p.Deviation != "" {
			got[p.Name] = p.Deviation
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("test %s: deviations\n%q\nwant\n%q\nparameters %+v", tt.Name, got, want, tt.Results[0].Params)
	}
}

// TestRFC9411Deviations: a run that does what RFC 9411 (and NetSecOPEN's
// reference) specifies has no deviation in any row, and each departure from
// it, alone, is the one deviation its row states.
func TestRFC9411Deviations(t *testing.T) {
	// Conforming: the plan's ramps 10 s, one of the RFC's suites with its
	// key, windows of 300 s and warm-ups of 5 s as measured (to 3 digits),
	// §7.6's and §7.8's object 64 KB, §7.7's NetSecOPEN's mix, in its KB.
	in := rfcCampaign(t, true)
	camp := in.Campaign
	camp.Plan.Tests = slices.Clone(camp.Plan.Tests)
	for i := range camp.Plan.Tests {
		camp.Plan.Tests[i].RampUp, camp.Plan.Tests[i].RampDown = plan.Duration(10*time.Second), plan.Duration(10*time.Second)
	}
	for _, cell := range camp.Summary.Cells {
		r := method.PublishedRun(camp.Ledger, cell)
		r.Negotiated = metrics.Negotiated{Version: "TLS1.2", OpenSSL: "ECDHE-ECDSA-AES128-GCM-SHA256",
			Group: "P-256", CertKey: "ECDSA P-256", SuitePinned: true}
		r.DurationS, r.WarmupS = 300.0004, 4.9996
		r.Objects = []metrics.ObjectStats{{Size: 64000, Weight: 2}}
		if cell.Engine == "throughput" {
			r.Objects = nil
			for _, size := range []int64{200, 6000, 8000, 9000, 10000, 25000, 26000, 35000, 59000, 347000} {
				r.Objects = append(r.Objects, metrics.ObjectStats{Size: size, Weight: 1})
			}
		}
	}
	type change struct {
		test  int // 0 §7.6, 1 §7.7, 2 §7.8
		name  string
		apply func(*plan.Test, *metrics.Run)
		want  map[string]string
	}
	for _, c := range []change{
		{-1, "conforming", func(*plan.Test, *metrics.Run) {}, nil},
		{1, "§7.7 1 transaction per connection", func(pt *plan.Test, _ *metrics.Run) { pt.RequestsPerConn = 1 },
			map[string]string{"transactions per connection": "not the RFC's 10 (NetSecOPEN)"}},
		{1, "§7.7 kept-alive connections", func(pt *plan.Test, _ *metrics.Run) { pt.RequestsPerConn = 0 },
			map[string]string{"transactions per connection": "not the RFC's 10 (NetSecOPEN)"}},
		{0, "§7.6 10 transactions per connection", func(pt *plan.Test, _ *metrics.Run) { pt.RequestsPerConn = 10 },
			map[string]string{"transactions per connection": "not the RFC's 1"}},
		{2, "§7.8 10 a connection, 1 s apart", func(pt *plan.Test, _ *metrics.Run) {
			pt.RequestsPerConn, pt.Pause = 10, plan.Duration(time.Second)
		}, map[string]string{"transactions per connection": "not the RFC's 1 and 10 (NetSecOPEN)"}},
		{0, "§7.6 64 KiB", func(_ *plan.Test, r *metrics.Run) { r.Objects[0].Size = 65536 },
			map[string]string{"object sizes": "sizes in KiB (1024 bytes); NetSecOPEN's KB are 1000 bytes"}},
		{0, "§7.6 32 KB", func(_ *plan.Test, r *metrics.Run) { r.Objects[0].Size = 32000 },
			map[string]string{"object sizes": "not one of the RFC's objects for this test"}},
		{1, "§7.7 the mix unequally weighted", func(_ *plan.Test, r *metrics.Run) { r.Objects[3].Weight = 2 },
			map[string]string{"object sizes": "not one of the RFC's objects for this test"}},
		{1, "§7.7 the mix less one object", func(_ *plan.Test, r *metrics.Run) { r.Objects = r.Objects[1:] },
			map[string]string{"object sizes": "not one of the RFC's objects for this test"}},
		{2, "§7.8 256 KB (§7.7's, not §7.8's)", func(_ *plan.Test, r *metrics.Run) { r.Objects[0].Size = 256000 },
			map[string]string{"object sizes": "not one of the RFC's objects for this test"}},
		{0, "§7.6 a 2 s window", func(_ *plan.Test, r *metrics.Run) { r.DurationS = 2 },
			map[string]string{"sustain": "298 s shorter: a short method's window, too short for the RFC's sustain phase"}},
		{1, "§7.7 a 600 s window", func(_ *plan.Test, r *metrics.Run) { r.DurationS = 600 },
			map[string]string{"sustain": "300 s longer"}},
		{2, "§7.8 ramps of 5 s and 30 s", func(pt *plan.Test, _ *metrics.Run) {
			pt.RampUp, pt.RampDown = plan.Duration(5*time.Second), plan.Duration(30*time.Second)
		}, map[string]string{"ramp up": "5 s shorter", "ramp down": "20 s longer"}},
		{0, "§7.6 warm-up 1 s", func(_ *plan.Test, r *metrics.Run) { r.WarmupS = 1 },
			map[string]string{"startup (warm-up)": "4 s shorter"}},
		{0, "§7.6 TLS 1.1", func(_ *plan.Test, r *metrics.Run) { r.Negotiated.Version = "TLS1.1" },
			map[string]string{"cipher suite and key": "neither TLS 1.2 nor TLS 1.3"}},
		{1, "§7.7 AES256 with a P-256 key", func(_ *plan.Test, r *metrics.Run) {
			r.Negotiated.OpenSSL, r.Negotiated.CertKey = "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDSA P-256"
		}, map[string]string{"cipher suite and key": "certificate ECDSA P-256: the RFC pairs " +
			"ECDHE-ECDSA-AES256-GCM-SHA384 with ECDSA P-384 or ECDSA P-521"}},
		{1, "§7.7 TLS 1.3", func(_ *plan.Test, r *metrics.Run) {
			r.Negotiated = metrics.Negotiated{Version: "TLS1.3", OpenSSL: "TLS_AES_256_GCM_SHA384", CertKey: "RSA 2048"}
		}, nil},
		{2, "§7.9: 10 a connection (480 + 300)/10 = 78 s apart, ramps of 480 s, 1 KB", func(pt *plan.Test, r *metrics.Run) {
			as79(pt, r, 78*time.Second)
		}, nil},
		{2, "§7.9 1 s apart", func(pt *plan.Test, r *metrics.Run) { as79(pt, r, time.Second) },
			map[string]string{"transactions per connection": "not the RFC's 10, (ramp-up + sustain)/10 apart (NetSecOPEN) (1m18s here)"}},
		{2, "§7.8 at 40%", func(pt *plan.Test, _ *metrics.Run) { pt.Share = 0.4 },
			map[string]string{"load": "not 50% of a published maximum of §7.6 or §7.7"}},
		{2, "§7.8 closed loop", func(pt *plan.Test, _ *metrics.Run) { pt.Of, pt.Share = "", 0 },
			map[string]string{"load": "not 50% of a published maximum of §7.6 or §7.7"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var restore func()
			if c.test >= 0 { // the change, undone after
				pt, applied := &camp.Plan.Tests[c.test], 0
				savedTest := *pt
				for _, cell := range camp.Summary.Cells {
					if cell.Engine == pt.Engine && cell.Profile == pt.Profiles[0] {
						run := method.PublishedRun(camp.Ledger, cell)
						saved := *run
						saved.Objects = slices.Clone(run.Objects)
						restore = func() { *pt, *run = savedTest, saved }
						c.apply(pt, run)
						applied++
					}
				}
				if applied != 1 {
					t.Fatalf("test %s: %d cells, want 1", pt.Name, applied)
				}
				defer restore()
			}
			r := build(t, in)
			if len(r.RFC9411) != 3 {
				t.Fatalf("%d RFC 9411 tests, want 3", len(r.RFC9411))
			}
			for i := range r.RFC9411 {
				want := map[string]string{}
				if i == c.test {
					want = c.want
				}
				checkDeviations(t, r, i, want)
			}
		})
	}
}

// as79 makes a conforming §7.8 test and run §7.9's, but for the pause.
func as79(pt *plan.Test, r *metrics.Run, pause time.Duration) {
	pt.RFC9411, pt.RequestsPerConn, pt.Pause = "7.9", 10, plan.Duration(pause)
	pt.RampUp, pt.RampDown = plan.Duration(480*time.Second), plan.Duration(480*time.Second)
	r.Objects[0].Size = 1000
}
