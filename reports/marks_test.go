package reports_test

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// markedLab is the lab campaign with every caveat on some cell: adc-a's
// P-384 CPS generator-bound at the search's ceiling, its RSA CPS unstable
// and not saturating the device, its P-384 Gbps re-explored below its
// discarded first finals; adc-b unverified (insecure) and its RSA CPS
// inconsistent; and adc-a's RSA Gbps empty, its only probe rejected
// generator-bound.
func markedLab(t *testing.T) reports.Input {
	in := lab(t)
	c := *in.Campaign
	s := *c.Summary
	s.Cells = nil
	for _, cell := range c.Summary.Cells {
		x := *cell
		s.Cells = append(s.Cells, &x)
	}
	c.Summary, c.Ledger = &s, slices.Clone(c.Ledger)
	p := *c.Plan
	p.DUTs = slices.Clone(p.DUTs)
	p.DUTs[1].Insecure = true
	c.Plan = &p
	gen := s.Cells[0]
	for i, e := range c.Ledger {
		if e == method.FinalEntry(c.Ledger, gen, method.PublishedSeq(gen.Runs)) {
			x, run := *e, *e.Run
			run.Client.Utilization, run.Client.Cores, run.Client.GeneratorBound = 0.93, 1, true
			x.Run = &run
			c.Ledger[i] = &x
		}
	}
	gen.AtCeiling = true
	s.Cells[1].Unstable, s.Cells[1].Consistent, s.Cells[1].DeviceNotSaturated = "exploration 1.90k, finals 1.60k", false, true
	s.Cells[2].Reexplored = &method.Reexploration{Level: 32, Value: 5.9, Explored: 6.4,
		Finals: []method.FinalRun{{Seq: 1, Value: 5.9, Accepted: true}}}
	s.Cells = append(s.Cells, &method.Cell{DUT: "adc-a", Engine: "throughput", Profile: reporttest.RSA,
		Failed:      "the exploratory phase found no load level with an accepted run",
		Exploration: []method.Probe{{Level: 2, Reasons: []string{"generator-bound: its CPU was 93% of 1 cores, above 90%"}}}})
	in.Campaign = &c
	return in
}

// markWants are what every document of markedLab shows: each cell's marks,
// each mark's line in the legend, and why the empty cell is empty.
var markWants = []string{"[g,c]", "[u,s]", "[r,d]", "[i,v]", "±",
	"[i] inconsistent:", "[u] unstable:", "[r] re-explored:", "[d] discarded finals:", "[g] generator-bound:",
	"[v] not verified:", "[c] at the ceiling:", "[s] device not saturated:",
	"[d] discarded finals: 5.30 Gbps published, below the discarded first finals", "[g] generator-bound: its CPU was 93% of 1 cores",
	"no accepted run", "the exploratory phase found no load level with an accepted run: generator-bound: its CPU was 93%"}

// TestMarks: every caveat is marked in its cell, explained in a note and in
// the legend, in the text, Markdown and HTML reports and qualify's table;
// the CSV and the JSON name the marks; the empty cell says why in each.
func TestMarks(t *testing.T) {
	in := markedLab(t)
	r := build(t, in)
	for _, f := range []struct {
		name   string
		render func(io.Writer) error
		want   []string
	}{
		{"text", func(w io.Writer) error { return reports.ReportDoc(r).Text(w) }, markWants},
		{"markdown", func(w io.Writer) error { return reports.ReportDoc(r).Markdown(w, "x-", nil) }, markWants},
		{"html", func(w io.Writer) error { return reports.ReportDoc(r).HTML(w) }, markWants},
		{"qualify", func(w io.Writer) error { return reports.QualifyTable(in.Campaign).Text(w) },
			append(markWants, "RUNS a/t")},
		{"csv", func(w io.Writer) error { return reports.ReportCSV(w, r) }, []string{"gbps_marks,cps_marks",
			"generator_bound at_ceiling", "unstable device_not_saturated", "reexplored discarded_finals",
			"inconsistent insecure", "the exploratory phase found no load level with an accepted run: generator-bound"}},
		{"json", func(w io.Writer) error { return reports.ReportJSON(w, r) }, []string{`"at_ceiling"`, `"generator_bound"`,
			`"unstable"`, `"device_not_saturated"`, `"reexplored"`, `"discarded_finals"`, `"inconsistent"`, `"insecure"`,
			`"why": "the exploratory phase found no load level with an accepted run: generator-bound`}},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(buf.String(), "\\_", "_") // Markdown's escapes
		for _, w := range f.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q", f.name, w)
			}
		}
		if t.Failed() {
			t.Logf("%s:\n%s", f.name, out)
		}
	}
}

// TestMarksInPDF prints markedLab's report with Chromium and reads it back
// with pdftotext: the marks, the legend and the empty cell's reason are on
// the page.
func TestMarksInPDF(t *testing.T) {
	file, _ := printPDF(t, markedLab(t))
	text := strings.Join(strings.Fields(poppler(t, "pdftotext", "-layout", file, "-")), " ")
	for _, w := range []string{"[g,c]", "[u,s]", "[r,d]", "[i,v]", "[c] at the ceiling:", "[d] discarded finals:",
		"[v] not verified:", "±", "generator-bound: its CPU was 93% of 1 cores"} {
		if !strings.Contains(text, w) {
			t.Errorf("the PDF has no %q", w)
		}
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}

// TestThreeSignificantDigits: the published values keep three significant
// digits (12.56 Gbps was "13 Gbps", 1,712 CPS "1.7k").
func TestThreeSignificantDigits(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{reports.FormatGbps(12.56), "12.6 Gbps"}, {reports.FormatGbps(0.82), "0.820 Gbps"},
		{reports.FormatGbps(105.4), "105 Gbps"}, {reports.FormatGbps(0), "0 Gbps"},
		{reports.FormatCPS(1712), "1.71k"}, {reports.FormatCPS(361), "361"}, {reports.FormatCPS(104_600), "105k"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
