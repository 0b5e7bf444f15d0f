package reports_test

import (
	"bytes"
	"errors"
	"html"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

var errFull = errors.New("disk full")

// fullWriter takes n bytes, then fails every write.
type fullWriter struct{ n int }

func (f *fullWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestWriteErrors: every renderer of every format returns the first write
// error, whether the writer fails at once, half-way or at the last byte.
func TestWriteErrors(t *testing.T) {
	r := build(t, lab(t))
	c := compare(t, withWAF(), withoutWAF())
	run := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 100})
	tput := reporttest.Run(reporttest.RunSpec{Engine: "throughput", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 5})
	docs := map[string]reports.Document{
		"report":      reports.ReportDoc(r),
		"comparison":  reports.ComparisonDoc(c),
		"impact":      reports.ImpactDoc(&impact.Report{Rounds: []impact.Round{{Round: 1}}}),
		"run":         reports.RunSummary(run),
		"cps":         reports.CPSTable([]*metrics.Run{run}),
		"throughput":  reports.ThroughputTable([]*metrics.Run{tput}),
		"differences": reports.DifferencesTable([]method.Difference{{Engine: "cps", Profile: "p", Field: "group", Values: map[string]string{"a": "X25519", "b": "P-256"}}}),
		"qualify":     reports.QualifyTable(lab(t).Campaign),
		"preliminary": reports.PreliminaryTable(lab(t).Campaign.Summary.Preliminary),
	}
	siege, err := reports.SiegeSummaries([]reports.Input{withWAF()})
	if err != nil {
		t.Fatal(err)
	}
	docs["siege"] = siege
	renderers := map[string]func(io.Writer) error{
		"report csv":      func(w io.Writer) error { return reports.ReportCSV(w, r) },
		"report json":     func(w io.Writer) error { return reports.ReportJSON(w, r) },
		"comparison csv":  func(w io.Writer) error { return reports.ComparisonCSV(w, c) },
		"comparison json": func(w io.Writer) error { return reports.ComparisonJSON(w, c) },
		"histogram log":   func(w io.Writer) error { return reports.HistogramLog(w, []reports.Input{withWAF()}) },
	}
	for name, d := range docs {
		renderers[name+" text"] = d.Text
		renderers[name+" md"] = func(w io.Writer) error { return d.Markdown(w, "x-", nil) }
		renderers[name+" html"] = d.HTML
	}
	for name, render := range renderers {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if buf.Len() == 0 {
			t.Errorf("%s: nothing written", name)
			continue
		}
		for _, n := range []int{0, buf.Len() / 2, buf.Len() - 1} {
			if err := render(&fullWriter{n: n}); !errors.Is(err, errFull) {
				t.Errorf("%s, writer full after %d of %d bytes: error %v, want %v", name, n, buf.Len(), err, errFull)
			}
		}
	}
}

// TestOfferedRate: an open loop's offered rate is printed as given, not
// rounded (issue 40 item 9: --rate 0.5 read "0/s offered").
func TestOfferedRate(t *testing.T) {
	run := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 1})
	run.Load.Mode, run.Load.Rate = "open", 0.5
	var buf bytes.Buffer
	if err := reports.RunSummary(run).Text(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("0.5/s offered")) {
		t.Errorf("no 0.5/s offered in:\n%s", buf.String())
	}
}

// TestPreliminaryMix: a test of an object mix reads its objects in the
// preliminary table, not "body 0 bytes" (issue 40 item 9); each line names
// its protocol (a summary's without one: HTTP/1.1).
func TestPreliminaryMix(t *testing.T) {
	var buf bytes.Buffer
	ps := []method.Prelim{{DUT: "a", Engine: "throughput", Profile: "p", Test: "7.7 mix", Objects: "1k:2,64k"},
		{DUT: "a", Engine: "cps", Profile: "p", BodySize: 1024}, {DUT: "a", Engine: "cps", Protocol: "http/2", Profile: "p",
			BodySize: 2048}}
	if err := reports.PreliminaryTable(ps).Text(&buf); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "; objects 1k:2,64k") || strings.Contains(out, "body 0 bytes") ||
		!strings.Contains(out, "HTTP/1.1; body 1024 bytes") || !strings.Contains(out, "HTTP/2; body 2048 bytes") {
		t.Errorf("preliminary table:\n%s", out)
	}
}

// TestClosesWording: a run summary's closes line says what its transport
// counts, in every format: over HTTP/1.1 the server's FIN, the client's
// deadline and close_notify (unchanged); over HTTP/2 the client's GOAWAY,
// no close_notify; over HTTP/3 the client's CONNECTION_CLOSE, nothing of a
// FIN or a close_notify.
func TestClosesWording(t *testing.T) {
	for _, tc := range []struct {
		protocol, want string
		not            []string
	}{
		{"", "  closes       server first 3, client first (deadline) 2, no close_notify 1\n", []string{"GOAWAY"}},
		{"http/2", "  closes       server first 3, client first (GOAWAY, then close) 2\n", []string{"close_notify",
			"deadline"}},
		{"http/3", "  closes       client first (CONNECTION_CLOSE) 2\n", []string{"close_notify", "deadline",
			"server first"}},
	} {
		run := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4,
			Value: 100})
		run.Protocol, run.Closes = tc.protocol, &metrics.Closes{ServerFirst: 3, ClientFirst: 2, NoCloseNotify: 1}
		if tc.protocol == "http/3" {
			run.Closes.ServerFirst, run.Closes.NoCloseNotify = 0, 0 // as http3's cps counts them
		}
		d := reports.RunSummary(run)
		var text, md, page bytes.Buffer
		for _, err := range []error{d.Text(&text), d.Markdown(&md, "x-", nil), d.HTML(&page)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for name, out := range map[string]string{"text": text.String(), "md": md.String(),
			"html": html.UnescapeString(page.String())} {
			_, closes, _ := strings.Cut(out, "  closes ")
			closes, _, _ = strings.Cut(closes, "\n")
			if !strings.Contains(out, tc.want) || slices.ContainsFunc(tc.not, func(w string) bool {
				return strings.Contains(closes, w)
			}) {
				t.Errorf("%s %s: no %q (nor any of %q in it):\n%s", tc.protocol, name, tc.want, tc.not, out)
			}
		}
	}
}
