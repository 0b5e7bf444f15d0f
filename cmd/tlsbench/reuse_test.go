package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestQualifySessionReuse: a plan's cps test at resume 0.5 beside one at
// SR=0 against the reference target (started resuming: serve --resumption).
// The SR row's final runs resumed sessions and were accepted (acceptance
// takes the resumption asked for); the campaign publishes SSL TPS with
// session reuse (SR=0.5) beside SR=0, each row with its footnote, in the
// table, text, Markdown, HTML and CSV; the SR=0 cell stays SR=0; the
// progress and compare name the SR cell apart. (TCP
// retransmissions are not judged: a loaded machine drops loopback SYNs.)
func TestQualifySessionReuse(t *testing.T) {
	const p = "ecdhe-ecdsa-aes128-sha256-p256"
	out, stdout, stderr := qualifyPlan(t, `name: reuse
duts: [{name: ref, url: reference}]
tests:
  - {engine: cps, profiles: [`+p+`]}
  - {engine: cps, resume: 0.5, profiles: [`+p+`]}
method:
  duration: 300ms
  warmup: 50ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 150ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%, max_retransmit_rate: 100%} # loopback on a loaded machine
  final: {min_accepted: 2, max_runs: 4, tolerance: 60%}
`)
	data, err := os.ReadFile(filepath.Join(out, method.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := method.DecodeSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 2 || s.Cells[0].SR != 0 || s.Cells[1].SR != 0.5 {
		t.Fatalf("cells %+v, want SR=0 then SR=0.5", s.Cells)
	}
	for _, c := range s.Cells {
		if c.Accepted < 2 {
			t.Fatalf("cell SR=%g: %d accepted (%s): %+v %+v", c.SR, c.Accepted, c.Failed, c.Runs, c.Exploration)
		}
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	finals := map[float64]int{}
	for _, e := range entries {
		if e.Phase != vocab.Final {
			continue
		}
		x := e.Run.Resumption
		switch {
		case strings.Contains(e.Key, "|SR=0.5|") && (x == nil || x.Ratio != 0.5 || x.Resumed == 0):
			t.Errorf("%s: resumption %+v, want sessions resumed at 0.5", e.Key, x)
		case !strings.Contains(e.Key, "|SR=") && x != nil:
			t.Errorf("%s: resumption %+v in an SR=0 run", e.Key, x)
		case x != nil:
			finals[x.Ratio]++
		default:
			finals[0]++
		}
	}
	if finals[0] == 0 || finals[0.5] == 0 {
		t.Errorf("final runs by SR %v, want both", finals)
	}
	rows := []string{"SSL TPS with session reuse", "0.5 (tickets)",
		"[1] SR=0 (every handshake full), 1 request(s) per connection, object 1024 B, TLS1.2 ECDHE-ECDSA-AES128-SHA256, " +
			"key ECDSA P-256, group P-256, HTTP/1.1",
		"[2] SR=0.5 (tickets), 1 request(s) per connection, object 1024 B"}
	for _, w := range rows {
		if !strings.Contains(stdout, w) {
			t.Errorf("qualify's table lacks %q:\n%s", w, stdout)
		}
	}
	if !strings.Contains(stderr, "final       ref cps SR=0.5 "+p+" run 1/") {
		t.Errorf("the progress does not name the SR test:\n%s", stderr)
	}
	// compare: the SR cell is a cell of its own, not the SR=0 one's.
	if code, text, errs := invoke(t, context.Background(), "compare", out, out); code != exitOK ||
		!strings.Contains(text, "2 of 2 cells confirmed") || !strings.Contains(text, "cps HTTP/1.1 "+p+" SR=0.5 ") {
		t.Errorf("compare: exit %d: %s\n%s", code, errs, text)
	}
	md := filepath.Join(t.TempDir(), "r.md")
	for _, f := range []string{"text", "md", "html", "csv"} {
		args := []string{"report", out, "--format", f}
		if f == "md" {
			args = append(args, "-o", md)
		}
		code, text, stderr := invoke(t, context.Background(), args...)
		if code != exitOK {
			t.Fatalf("report --format %s: exit %d: %s", f, code, stderr)
		}
		if f == "md" {
			b, _ := os.ReadFile(md)
			text = string(b)
		}
		want := rows
		if f == "csv" { // a line per row: sr and footnote columns
			want = []string{",0,\"SR=0 (every handshake full), 1 request(s) per connection",
				",0.5,\"SR=0.5 (tickets), 1 request(s) per connection, object 1024 B"}
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("report --format %s lacks %q:\n%s", f, w, text)
			}
		}
		if strings.Contains(text, "resumed by design") {
			t.Errorf("report --format %s refuses the SR row:\n%s", f, text)
		}
	}
	// The PDF's first page, read as a person would (pdftotext).
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skipf("no chromium for the PDF: %v", err)
	}
	pdf := filepath.Join(t.TempDir(), "r.pdf")
	if code, _, stderr := invoke(t, context.Background(), "report", out, "--format", "pdf", "-o", pdf); code != exitOK {
		t.Fatalf("report --format pdf: exit %d: %s", code, stderr)
	}
	page, err := exec.Command("pdftotext", "-layout", "-f", "1", "-l", "1", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, w := range []string{"SSL TPS with session reuse", "0.5 (tickets)", "[1] SR=0 (every handshake full)",
		"[2] SR=0.5 (tickets)"} {
		if !strings.Contains(string(page), w) {
			t.Errorf("the PDF's first page lacks %q:\n%s", w, page)
		}
	}
}
