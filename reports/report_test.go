package reports_test

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// validCampaignDir checks a campaign directory's summary.json and every
// line of its ledger.jsonl against their JSON Schemas.
func validCampaignDir(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []struct{ file, version string }{{method.SummaryFile, schemas.Summary}, {method.LedgerFile, schemas.Ledger}} {
		data, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Error(err)
			continue
		}
		if f.file == method.LedgerFile {
			schematest.ValidLines(t, f.version, filepath.Join(dir, f.file), data)
		} else {
			schematest.Valid(t, f.version, filepath.Join(dir, f.file), data)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// campaigns caches the synthetic campaigns by name: they are only read.
var campaigns = struct {
	sync.Mutex
	root string
	m    map[string]reports.Input
}{m: map[string]reports.Input{}}

func TestMain(m *testing.M) {
	flag.Parse()
	root, err := os.MkdirTemp("", "reports-test")
	if err != nil {
		panic(err)
	}
	campaigns.root = root
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

// campaign runs a synthetic campaign (once per plan name) and returns it
// as an input named like a results directory.
func campaign(t *testing.T, sc reporttest.Scenario) reports.Input {
	t.Helper()
	campaigns.Lock()
	defer campaigns.Unlock()
	name := "results/" + sc.Plan.Name
	if in, ok := campaigns.m[name]; ok {
		return in
	}
	s, ledger, err := reporttest.Campaign(filepath.Join(campaigns.root, sc.Plan.Name), sc)
	if err != nil {
		t.Fatal(err)
	}
	validCampaignDir(t, filepath.Join(campaigns.root, sc.Plan.Name))
	in := reports.Input{Name: name, Campaign: &reports.Campaign{Dir: name, Plan: sc.Plan, Summary: s, Ledger: ledger}}
	campaigns.m[name] = in
	return in
}

func lab(t *testing.T) reports.Input { return campaign(t, reporttest.Lab()) }

// record is a run record input.
func record(name string, s reporttest.RunSpec) reports.Input {
	if s.Start.IsZero() {
		s.Start = reporttest.T0
	}
	return reports.Input{Name: name, Run: reporttest.Run(s)}
}

// records are run records of two DUTs: two CPS records of adc-a (the
// second with errors), one of adc-b, a throughput record of adc-a.
func records() []reports.Input {
	return []reports.Input{
		record("a-cps-1.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-a.lab.test", Level: 16, Value: 640, CPU: 0.4}),
		record("a-cps-2.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-a.lab.test", Level: 16, Value: 650, Errors: 2, CPU: 0.4,
			Start: reporttest.T0.Add(time.Minute)}),
		record("b-cps.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-b.lab.test", Level: 16, Value: 800, CPU: 0.5,
			Start: reporttest.T0.Add(2 * time.Minute)}),
		record("a-throughput.json", reporttest.RunSpec{Engine: "throughput", Profile: reporttest.P384, Host: "adc-a.lab.test", Level: 8, Value: 5.3,
			CPU: 0.6, Start: reporttest.T0.Add(3 * time.Minute)}),
	}
}

// withWAF and withoutWAF are the two sides of an A/B comparison of records:
// the WAF costs 6.25% of the CPS at the same concurrency. One host name,
// two load balancers (--resolve), as the WAF study measured them.
func withWAF() reports.Input {
	return record("with-waf.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "www.fwtest.com", Address: "10.0.0.6:443",
		Level: 16, Value: 600, Errors: 3, CPU: 0.4})
}

func withoutWAF() reports.Input {
	return record("without-waf.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "www.fwtest.com", Address: "10.0.0.5:443",
		Level: 16, Value: 640, CPU: 0.4, Start: reporttest.T0.Add(time.Minute)})
}

func build(t *testing.T, inputs ...reports.Input) *reports.Report {
	t.Helper()
	r, err := reports.Build(inputs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func compare(t *testing.T, a, b reports.Input) *reports.ComparisonReport {
	t.Helper()
	c, err := reports.CompareInputs(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGolden(t *testing.T) {
	labReport := build(t, lab(t))
	recordsReport := build(t, records()...)
	recordsCmp := compare(t, withWAF(), withoutWAF())
	firmwareCmp := compare(t, campaign(t, reporttest.Firmware("fw2", "adc-a-fw2", 0.9)), campaign(t, reporttest.Firmware("fw1", "adc-a", 1)))
	for _, tc := range []struct {
		file   string
		render func(io.Writer) error
	}{
		// A two-DUT campaign: the table side by side with ratios; the
		// appendix with a rejected run, a rejected probe, an
		// inconsistent cell.
		{"report-lab.txt", func(w io.Writer) error { return reports.ReportDoc(labReport).Text(w) }},
		{"report-lab.md", func(w io.Writer) error { return reports.ReportDoc(labReport).Markdown(w, "lab-", nil) }},
		{"report-lab.csv", func(w io.Writer) error { return reports.ReportCSV(w, labReport) }},
		{"report-lab.json", func(w io.Writer) error { return reports.ReportJSON(w, labReport) }},
		// Run records grouped by DUT, engine and profile.
		{"report-records.txt", func(w io.Writer) error { return reports.ReportDoc(recordsReport).Text(w) }},
		{"report-records.md", func(w io.Writer) error { return reports.ReportDoc(recordsReport).Markdown(w, "records-", nil) }},
		{"report-records.csv", func(w io.Writer) error { return reports.ReportCSV(w, recordsReport) }},
		{"report-records.json", func(w io.Writer) error { return reports.ReportJSON(w, recordsReport) }},
		// Two records, A against the baseline B.
		{"compare-records.txt", func(w io.Writer) error { return reports.ComparisonDoc(recordsCmp).Text(w) }},
		{"compare-records.md", func(w io.Writer) error { return reports.ComparisonDoc(recordsCmp).Markdown(w, "cmp-", nil) }},
		{"compare-records.csv", func(w io.Writer) error { return reports.ComparisonCSV(w, recordsCmp) }},
		{"compare-records.json", func(w io.Writer) error { return reports.ComparisonJSON(w, recordsCmp) }},
		// Two one-DUT campaigns, cell by cell across DUT names.
		{"compare-campaigns.txt", func(w io.Writer) error { return reports.ComparisonDoc(firmwareCmp).Text(w) }},
		{"compare-campaigns.json", func(w io.Writer) error { return reports.ComparisonJSON(w, firmwareCmp) }},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf); err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if strings.HasSuffix(tc.file, ".json") {
			schematest.Valid(t, schematest.Detect(buf.Bytes()), tc.file, buf.Bytes())
		}
		golden := filepath.Join("testdata", "golden", tc.file)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./reports -update to create it)", err)
		}
		if got := buf.String(); got != string(want) {
			t.Errorf("%s differs from the golden file (go test ./reports -update rewrites it):\n%s", tc.file, firstDiff(got, string(want)))
		}
	}
}

// firstDiff shows the first line that differs.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got: %q\nwant: %q", i+1, a, b)
		}
	}
	return ""
}

// TestPublishedTable checks the side-by-side table against the summary.
func TestPublishedTable(t *testing.T) {
	in := lab(t)
	r := build(t, in)
	if got, want := strings.Join(r.DUTs, ","), "adc-a,adc-b"; got != want {
		t.Errorf("DUTs %s, want %s", got, want)
	}
	if got, want := len(r.Table), 2; got != want {
		t.Fatalf("%d rows, want %d (one per profile)", got, want)
	}
	published := map[string]*float64{}
	for _, row := range in.Campaign.Summary.Rows {
		published[row.DUT+" cps "+row.Profile] = row.CPS
		published[row.DUT+" gbps "+row.Profile] = row.Gbps
	}
	p384 := r.Table[0]
	a, b := p384.Results[0], p384.Results[1]
	for _, c := range []struct {
		name      string
		got, want *float64
	}{
		// Each DUT's values are the campaign's published ones.
		{"adc-a CPS", a.CPS, published["adc-a cps "+reporttest.P384]},
		{"adc-b CPS", b.CPS, published["adc-b cps "+reporttest.P384]},
		{"adc-a Gbps", a.Gbps, published["adc-a gbps "+reporttest.P384]},
		{"adc-b Gbps", b.Gbps, published["adc-b gbps "+reporttest.P384]},
	} {
		if c.got == nil || c.want == nil || *c.got != *c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The ratio is adc-b's value over adc-a's; the first DUT has none.
	if a.CPSRatio != nil || b.CPSRatio == nil {
		t.Fatalf("ratios %v %v", a.CPSRatio, b.CPSRatio)
	}
	if got, want := *b.CPSRatio, *b.CPS / *a.CPS; math.Abs(got-want) > 1e-12 {
		t.Errorf("adc-b CPS ratio %v, want %v", got, want)
	}
	// adc-a's second P-384 run was rejected: the published value is the
	// best accepted (0.99 of the peak, to the transaction).
	if got, want := *a.CPS, 640*0.99; math.Abs(got-want) > 0.5 {
		t.Errorf("adc-a CPS %v, want %v", got, want)
	}
	if got, want := p384.Cipher+" "+p384.Group, "ECDHE-ECDSA-AES128-SHA256 secp384r1 (P-384)"; got != want {
		t.Errorf("cipher and group %q, want %q", got, want)
	}
	// adc-b's RSA CPS runs disagreed.
	if rsa := r.Table[1].Results[1]; rsa.Consistent || !slices.Contains(rsa.CPSCell.Marks, "inconsistent") {
		t.Errorf("adc-b RSA: consistent %v, marks %q", rsa.Consistent, rsa.CPSCell.Marks)
	}
	if got, want := len(r.Appendix), 6; got != want {
		t.Errorf("%d appendix sections, want %d", got, want)
	}
	for _, s := range r.Appendix {
		if s.Chosen == nil || len(s.Chosen.Curves["handshake"]) == 0 || len(s.Chosen.Series) == 0 {
			t.Errorf("%s %s %s: no published run, curves or series", s.DUT, s.Engine, s.Profile)
		}
	}
	if got, want := len(r.Environment), 1; got != want {
		t.Errorf("%d environments, want %d", got, want)
	}
}

// TestRecordsTable: records are grouped by DUT, engine and profile; the
// best accepted record of a group is published; one with errors is not.
func TestRecordsTable(t *testing.T) {
	r := build(t, records()...)
	if got, want := strings.Join(r.DUTs, ","), "adc-a.lab.test,adc-b.lab.test"; got != want {
		t.Errorf("DUTs %s, want %s", got, want)
	}
	res := r.Table[0].Results[0]
	for _, c := range []struct {
		name      string
		got, want any
	}{
		// adc-a's better CPS record had errors: the other is published.
		{"adc-a CPS", *res.CPS, 640.0},
		{"adc-a Gbps", math.Round(*res.Gbps*100) / 100, 5.3},
		{"adc-a CPS records", res.CPSRuns, method.RunCount{Accepted: 1, Total: 2}},
		{"adc-b ratio", *r.Table[0].Results[1].CPSRatio, 800.0 / 640},
		{"note", res.Note, "1 of 2 CPS records not accepted by the default rule"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestSameDUTNames: two campaigns whose DUTs have one name are told apart
// by their directories.
func TestSameDUTNames(t *testing.T) {
	a := campaign(t, reporttest.Firmware("v1", "adc", 1))
	b := campaign(t, reporttest.Firmware("v2", "adc", 0.9))
	r := build(t, a, b)
	if got, want := strings.Join(r.DUTs, ","), "adc [v1],adc [v2]"; got != want {
		t.Errorf("DUTs %q, want %q", got, want)
	}
	if got := *r.Table[0].Results[1].CPSRatio; math.Abs(got-0.9) > 0.02 {
		t.Errorf("v2 ÷ v1 = %v, want about 0.9", got)
	}
}

// TestMarkdownCharts: every chart the Markdown links is saved, as a PNG.
func TestMarkdownCharts(t *testing.T) {
	saved := map[string][]byte{}
	var buf bytes.Buffer
	err := reports.ReportDoc(build(t, campaign(t, reporttest.Firmware("fw1", "adc-a", 1)))).Markdown(&buf, "fw1-", func(name string, data []byte) error {
		saved[name] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`).FindAllStringSubmatch(buf.String(), -1)
	// Two bar charts, and per cell its exploration, series and latency.
	if got, want := len(links), 2+2*3; got != want {
		t.Errorf("%d charts linked, want %d", got, want)
	}
	for _, l := range links {
		data, ok := saved[l[1]]
		if !ok {
			t.Errorf("%s linked, not saved", l[1])
			continue
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%s: %v", l[1], err)
			continue
		}
		// The bar charts have one category (one profile, one DUT):
		// strips sized to their bar; the others are full charts.
		b := img.Bounds()
		strip := strings.HasSuffix(l[1], "-cps.png") || strings.HasSuffix(l[1], "-throughput.png")
		if b.Dx() < 500 || b.Dy() < 150 || strip && b.Dy() > 240 || !strip && b.Dy() < 400 {
			t.Errorf("%s: %v pixels", l[1], b)
		}
	}
}

// external matches a reference to something outside the file: an src or
// href attribute, or a CSS url(), that is not a data: URL or a fragment.
var external = regexp.MustCompile(`(?i)(?:\b(?:src|href)\s*=\s*["']?|url\(\s*["']?)([^"'\s>)]*)`)

// outside lists what html could fetch from outside itself.
func outside(html string) []string {
	var out []string
	for _, m := range external.FindAllStringSubmatch(html, -1) {
		if !strings.HasPrefix(m[1], "data:") && !strings.HasPrefix(m[1], "#") {
			out = append(out, m[0])
		}
	}
	for _, tag := range []string{"<script", "<link", "@import", "@font-face", "<img", "<iframe", "<object"} {
		if strings.Contains(strings.ToLower(html), tag) {
			out = append(out, tag)
		}
	}
	return out
}

func TestHTMLSelfContained(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(io.Writer) error
		charts int
	}{
		// Two bar charts, and per cell its exploration, series and latency.
		{"campaign", func(w io.Writer) error { return reports.ReportDoc(build(t, lab(t))).HTML(w) }, 2 + 6*3},
		// Two bar charts, and per group of records its series and latency.
		{"records", func(w io.Writer) error { return reports.ReportDoc(build(t, records()...)).HTML(w) }, 2 + 3*2},
		// One latency chart per comparison.
		{"comparison", func(w io.Writer) error { return reports.ComparisonDoc(compare(t, withWAF(), withoutWAF())).HTML(w) }, 1},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		html := buf.String()
		if refs := outside(html); len(refs) > 0 {
			t.Errorf("%s: not self-contained: %q", tc.name, refs)
		}
		if got, want := strings.Count(html, "<svg"), tc.charts; got != want {
			t.Errorf("%s: %d charts, want %d", tc.name, got, want)
		}
		if got, want := strings.Count(html, "</svg>"), tc.charts; got != want {
			t.Errorf("%s: %d charts closed, want %d", tc.name, got, want)
		}
		if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.HasSuffix(html, "</html>\n") {
			t.Errorf("%s: not a whole HTML document", tc.name)
		}
	}
}

// TestSelfContainedCheck: the check finds what it is meant to find.
func TestSelfContainedCheck(t *testing.T) {
	for _, tc := range []struct {
		html string
		bad  bool
	}{
		{`<img src="https://example.com/x.png">`, true},             // an image from the web
		{`<a href="report.css">`, true},                             // a file beside it
		{`<div style="background:url(x.png)">`, true},               // a CSS url()
		{`<use xlink:href="#clip1"/>`, false},                       // a fragment
		{`<image xlink:href="data:image/png;base64,AAAA"/>`, false}, // inline data
	} {
		if got := len(outside(tc.html)) > 0; got != tc.bad {
			t.Errorf("%q: found outside %v, want %v", tc.html, got, tc.bad)
		}
	}
}

// TestComparisonNumbers checks the deltas of two records.
func TestComparisonNumbers(t *testing.T) {
	c := compare(t, withWAF(), withoutWAF())
	if got, want := len(c.Cells), 1; got != want {
		t.Fatalf("%d comparisons, want %d", got, want)
	}
	cmp := c.Cells[0].RunComparison
	for _, tc := range []struct {
		metric           string
		a, b, delta, pct float64
	}{
		// 600 and 640 CPS over 2 s.
		{"transactions", 1200, 1280, -80, -6.25},
		{"failed", 3, 0, 3, math.NaN()},
		{"CPS", 600, 640, -40, -6.25},
		// 1024-byte bodies; MB are 2^20 bytes, as Siege counts.
		{"data transferred", 1200.0 / 1024, 1280.0 / 1024, -80.0 / 1024, -6.25},
	} {
		d, ok := cmp.Row(tc.metric)
		if !ok {
			t.Errorf("no %s row", tc.metric)
			continue
		}
		if !near(d.A, tc.a) || !near(d.B, tc.b) || !near(d.Delta, tc.delta) {
			t.Errorf("%s: %v, %v, Δ %v; want %v, %v, Δ %v", tc.metric, d.A, d.B, d.Delta, tc.a, tc.b, tc.delta)
		}
		switch {
		case math.IsNaN(tc.pct) && d.DeltaPct != nil:
			t.Errorf("%s: Δ%% %v, want none (B is 0)", tc.metric, *d.DeltaPct)
		case !math.IsNaN(tc.pct) && (d.DeltaPct == nil || !near(*d.DeltaPct, tc.pct)):
			t.Errorf("%s: Δ%% %v, want %v", tc.metric, d.DeltaPct, tc.pct)
		}
	}
	// The synthetic latencies follow Little's law at 16 connections.
	if d, _ := cmp.Row("concurrency"); math.Abs(d.A-16) > 1.5 || math.Abs(d.B-16) > 1.5 {
		t.Errorf("concurrency %v and %v, want about 16", d.A, d.B)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestCampaignComparisonProtocols: cells are matched by protocol too: an
// HTTP/2 cell is not held against HTTP/1.1's of the same engine and profile.
func TestCampaignComparisonProtocols(t *testing.T) {
	after := campaign(t, reporttest.Firmware("fw2", "adc-a-fw2", 0.9))
	before := campaign(t, reporttest.Firmware("fw1", "adc-a", 1))
	ca, sum := *after.Campaign, *after.Campaign.Summary // the cached campaign's copy
	sum.Cells = nil
	for _, cell := range after.Campaign.Summary.Cells {
		c := *cell
		if c.Engine == vocab.EngineCPS {
			c.Protocol = "http/2"
		}
		sum.Cells = append(sum.Cells, &c)
	}
	ca.Summary, after.Campaign = &sum, &ca
	c := compare(t, after, before)
	var cells []string
	for _, cc := range c.Cells {
		cells = append(cells, cc.Cell)
	}
	if want := []string{"throughput HTTP/1.1 " + reporttest.P384}; !slices.Equal(cells, want) {
		t.Errorf("cells compared %q, want %q", cells, want)
	}
	want := []string{"cps HTTP/2 " + reporttest.P384 + ": only in A", "cps HTTP/1.1 " + reporttest.P384 + ": only in B"}
	if !slices.Equal(c.Unmatched, want) {
		t.Errorf("unmatched %q, want %q", c.Unmatched, want)
	}
}

// TestCampaignComparison: one-DUT campaigns compare cell by cell across
// DUT names, by their published runs.
func TestCampaignComparison(t *testing.T) {
	after := campaign(t, reporttest.Firmware("fw2", "adc-a-fw2", 0.9))
	before := campaign(t, reporttest.Firmware("fw1", "adc-a", 1))
	c := compare(t, after, before)
	if got, want := len(c.Cells), 2; got != want {
		t.Fatalf("%d cells compared, want %d (unmatched %v)", got, want, c.Unmatched)
	}
	cell := c.Cells[0]
	if got, want := cell.Cell, "cps HTTP/1.1 "+reporttest.P384; got != want {
		t.Errorf("cell %q, want %q", got, want)
	}
	d, _ := cell.Row("CPS")
	// Both published their second final run (factor 1.0).
	if !near(d.A, 576) || !near(d.B, 640) || !near(*d.DeltaPct, -10) {
		t.Errorf("CPS %v vs %v (%v%%), want 576 vs 640 (-10%%)", d.A, d.B, *d.DeltaPct)
	}
	tx, _ := cell.Row("transactions")
	if got, want := tx.Delta, tx.A-tx.B; got != want || tx.A != 1152 || tx.B != 1280 {
		t.Errorf("transactions %v vs %v, Δ %v", tx.A, tx.B, tx.Delta)
	}
}

func TestComparisonErrors(t *testing.T) {
	labIn := lab(t)
	for _, tc := range []struct {
		a, b reports.Input
		want string
	}{
		// A record and a campaign.
		{withWAF(), labIn, "not of a kind"},
		// Records of two engines.
		{withWAF(), records()[3], "compare runs of one engine"},
		// Two DUTs against one: cells cannot be matched by name.
		{labIn, campaign(t, reporttest.Firmware("fw1", "adc-z", 1)), "has 2 DUTs"},
	} {
		_, err := reports.CompareInputs(tc.a, tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s vs %s: error %v, want %q", tc.a.Name, tc.b.Name, err, tc.want)
		}
	}
}

// TestHistogramLogOfCampaign: hlog takes the published run of each cell.
func TestHistogramLogOfCampaign(t *testing.T) {
	var buf bytes.Buffer
	if err := reports.HistogramLog(&buf, []reports.Input{lab(t)}); err != nil {
		t.Fatal(err)
	}
	// Six cells, six phases each.
	if got, want := strings.Count(buf.String(), "\nTag="), 6*int(vocab.NumTimed); got != want {
		t.Errorf("%d intervals, want %d", got, want)
	}
	if !strings.Contains(buf.String(), "Tag=adc-b.throughput."+reporttest.P384+".total,") {
		t.Errorf("no tagged total of adc-b's throughput:\n%s", buf.String())
	}
}

// TestNothingSucceeded: records none of which the default rule accepts
// (one without a successful transaction, one with errors) publish nothing,
// say why and are not consistent, in every format; they render without
// NaN, Inf or a chart.
func TestNothingSucceeded(t *testing.T) {
	r := build(t, record("refused.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Errors: 5}),
		record("errors.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 700, Errors: 3,
			Start: reporttest.T0.Add(time.Minute)}))
	got := r.Table[0].Results[0]
	if got.CPS != nil || got.Consistent || got.CPSRuns != (method.RunCount{Accepted: 0, Total: 2}) {
		t.Errorf("result %+v: want no CPS, not consistent, 0 of 2 accepted", got)
	}
	why := regexp.MustCompile(`no accepted run: [^;]*no successful transaction; errors: \d+ .*reset`)
	if !why.MatchString(got.Note) {
		t.Errorf("note %q does not say why (%s)", got.Note, why)
	}
	if s := r.Appendix[0]; s.Value != nil || s.Consistent || s.Chosen != nil || !why.MatchString(s.Failed) {
		t.Errorf("section: value %v, consistent %v, chosen %v, failed %q", s.Value, s.Consistent, s.Chosen != nil, s.Failed)
	}
	for _, f := range []struct {
		name   string
		render func(io.Writer, *reports.Report) error
		want   []string // what says that nothing is published, and why
	}{
		{"csv", reports.ReportCSV, []string{"\ndut," + reporttest.P384 + ",[^,]*,[^,]*,,,,,0,0,0,2,false,\"?CPS: no accepted run: "}},
		{"json", reports.ReportJSON, []string{`"cps": null`, `"consistent": false`, `"value": null`}},
		{"text", func(w io.Writer, r *reports.Report) error { return reports.ReportDoc(r).Text(w) },
			[]string{reporttest.P384 + `\s.*no accepted run\s*\n`, `Nothing published: no accepted run: `}},
		{"html", func(w io.Writer, r *reports.Report) error { return reports.ReportDoc(r).HTML(w) },
			[]string{`>no accepted run<`, `Nothing published: no accepted run: `}},
		{"markdown", func(w io.Writer, r *reports.Report) error { return reports.ReportDoc(r).Markdown(w, "x-", nil) },
			[]string{`\| no accepted run \|`, `Nothing published: no accepted run: `}},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf, r); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("%s: NaN or Inf in:\n%s", f.name, out)
		}
		for _, w := range append(f.want, `no accepted run: [^\n]*no successful transaction`) {
			if !regexp.MustCompile(w).MatchString(out) {
				t.Errorf("%s: no %s in:\n%s", f.name, w, out)
			}
		}
		// Neither record's value is published, nor is either the published run.
		for _, bad := range []string{"; published: ", "Published run", `"consistent": true`, ",true,", "<svg"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %q in:\n%s", f.name, bad, out)
			}
		}
	}
}

// TestNothingAcceptedInCampaign: a campaign cell none of whose final runs
// was accepted (adc-b's CPS RSA in the second Repeat campaign) publishes
// nothing, is not consistent and says why, with the runs' reasons, in the
// table's notes and the appendix, as the qualify table does.
func TestNothingAcceptedInCampaign(t *testing.T) {
	_, second := reporttest.Repeat()
	in := campaign(t, second)
	r := build(t, in)
	why := regexp.MustCompile(`CPS: no accepted run: errors: 5 \([^)]*\) above the tolerance \(0, 0%\): reset ×5 \(5 runs\)`)
	for _, row := range r.Table {
		for _, res := range row.Results {
			if row.Profile != reporttest.RSA || res.DUT != "adc-b" {
				continue
			}
			if res.CPS != nil || res.Consistent || !why.MatchString(res.Note) {
				t.Errorf("adc-b RSA: CPS %v, consistent %v, note %q; want none, false, %s", res.CPS, res.Consistent, res.Note, why)
			}
		}
	}
	var buf bytes.Buffer
	if err := reports.QualifyTable(in.Campaign).Text(&buf); err != nil {
		t.Fatal(err)
	}
	if !why.MatchString(buf.String()) || !strings.Contains(buf.String(), reports.NoAccepted) {
		t.Errorf("qualify table does not say why:\n%s", buf.String())
	}
}

// TestFewerThanThree: a campaign whose plan sets final.min_accepted 1 or 2
// says in every format, the qualify table included, that each value is the
// best of that many accepted runs, and nothing says three.
func TestFewerThanThree(t *testing.T) {
	three := regexp.MustCompile(`(?i)three|third|best of 3\b|\b3 (best|accepted)`)
	for _, n := range []int{1, 2} {
		sc := reporttest.Firmware(fmt.Sprintf("min-accepted-%d", n), "adc-f", 1)
		sc.Plan.Method.Final.MinAccepted = n
		in := campaign(t, sc)
		for _, cell := range in.Campaign.Summary.Cells {
			if cell.Accepted != n || !cell.Consistent {
				t.Fatalf("min_accepted %d: cell %s %s: %d accepted, consistent %v", n, cell.Engine, cell.Profile, cell.Accepted, cell.Consistent)
			}
		}
		r := build(t, in)
		say := fmt.Sprintf("(?i)best of %d accepted run", n)
		for _, f := range []struct {
			name   string
			render func(io.Writer) error
			want   int // how many times it says so, at least
		}{
			{"csv", func(w io.Writer) error { return reports.ReportCSV(w, r) }, 2},
			{"json", func(w io.Writer) error { return reports.ReportJSON(w, r) }, 2},
			{"text", func(w io.Writer) error { return reports.ReportDoc(r).Text(w) }, 5},
			{"html", func(w io.Writer) error { return reports.ReportDoc(r).HTML(w) }, 5},
			{"markdown", func(w io.Writer) error { return reports.ReportDoc(r).Markdown(w, "x-", nil) }, 5},
			{"qualify", func(w io.Writer) error { return reports.QualifyTable(in.Campaign).Text(w) }, 2},
		} {
			var buf bytes.Buffer
			if err := f.render(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			// Each of the two cells in the notes (and, in the documents,
			// the table's explanation and each cell's outcome).
			if got := len(regexp.MustCompile(say).FindAllString(out, -1)); got < f.want {
				t.Errorf("min_accepted %d, %s: %q %d times, want at least %d:\n%s", n, f.name, say, got, f.want, out)
			}
			if m := three.FindString(out); m != "" {
				t.Errorf("min_accepted %d, %s: says %q:\n%s", n, f.name, m, out)
			}
		}
	}
}

// TestDifferences: what the DUTs' preliminary results differed in (a
// campaign run with --allow-differences) is in the appendix.
func TestDifferences(t *testing.T) {
	in := lab(t)
	s := *in.Campaign.Summary
	s.Differences = []method.Difference{{Engine: "cps", Profile: reporttest.P384, Field: "cert_key",
		Values: map[string]string{"adc-a": "ECDSA P-256", "adc-b": "ECDSA P-384"}}}
	c := *in.Campaign
	c.Summary = &s
	in.Campaign = &c
	var buf bytes.Buffer
	if err := reports.ReportDoc(build(t, in)).Text(&buf); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`cps\s+` + reporttest.P384 + `\s+cert_key\s+ECDSA P-256\s+ECDSA P-384`).MatchString(buf.String()) {
		t.Errorf("no differences table:\n%s", buf.String())
	}
}

// TestReportProtocols: a profile measured over HTTP/1.1 and HTTP/2 is two
// rows, each in a table whose heading names its protocol, in every format;
// a record without a protocol (made before it) is HTTP/1.1's; the appendix,
// a run's summary and the engines' table name it too.
func TestReportProtocols(t *testing.T) {
	h2 := record("a-cps-h2.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-a.lab.test",
		Level: 16, Value: 900, CPU: 0.4, Start: reporttest.T0.Add(4 * time.Minute)})
	h2.Run.Protocol = "http/2"
	r := build(t, append(records(), h2)...)
	var rows []string
	for _, row := range r.Table {
		rows = append(rows, row.Protocol+" "+row.Profile)
	}
	if want := []string{"http/1.1 " + reporttest.P384, "http/2 " + reporttest.P384}; !slices.Equal(rows, want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	if v := r.Table[1].Results[0].CPS; v == nil || *v != 900 {
		t.Errorf("HTTP/2 row's CPS %v, want 900", v)
	}
	var text, md, html, csv bytes.Buffer
	for _, err := range []error{reports.ReportDoc(r).Text(&text), reports.ReportDoc(r).Markdown(&md, "p-", nil),
		reports.ReportDoc(r).HTML(&html), reports.ReportCSV(&csv, r)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"text": text.String(), "md": md.String(), "html": html.String()} {
		for _, want := range []string{"CPS (SR=0) over HTTP/1.1", "CPS (SR=0) over HTTP/2", "Throughput (Gbps, payload) over HTTP/1.1",
			"adc-a.lab.test · cps over HTTP/2 · " + reporttest.P384} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q", name, want)
			}
		}
		if strings.Contains(out, "Throughput (Gbps, payload) over HTTP/2") {
			t.Errorf("%s: an HTTP/2 throughput table without an HTTP/2 throughput record", name)
		}
	}
	if !strings.Contains(text.String(), "  - CPS (SR=0) over HTTP/2: 1 run records") {
		t.Errorf("text: the tests listed without HTTP/2's:\n%s", text.String())
	}
	if !strings.Contains(csv.String(), ",900,") || !regexp.MustCompile(`(?m),900,.*,http/2$`).MatchString(csv.String()) {
		t.Errorf("CSV: no HTTP/2 line of 900 CPS:\n%s", csv.String())
	}
	var sum, tab bytes.Buffer
	if err := reports.RunSummary(h2.Run).Text(&sum); err != nil {
		t.Fatal(err)
	}
	if err := reports.CPSTable([]*metrics.Run{h2.Run, records()[0].Run}).Text(&tab); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "protocol     HTTP/2") || !strings.Contains(tab.String(), "HTTP/2") ||
		!strings.Contains(tab.String(), "HTTP/1.1") {
		t.Errorf("summary or table without the protocols:\n%s\n%s", sum.String(), tab.String())
	}
}
