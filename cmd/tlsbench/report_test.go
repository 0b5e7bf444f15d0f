package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// writeRecord writes a synthetic run record and returns its file.
func writeRecord(t *testing.T, dir, name string, s reporttest.RunSpec) string {
	t.Helper()
	if s.Start.IsZero() {
		s.Start = reporttest.T0
	}
	file := filepath.Join(dir, name)
	if err := reporttest.Run(s).WriteJSON(context.Background(), file, nil, nil); err != nil {
		t.Fatal(err)
	}
	return file
}

// writeCampaign runs a synthetic campaign into dir/name.
func writeCampaign(t *testing.T, dir, name string, sc reporttest.Scenario) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if _, _, err := reporttest.Campaign(out, sc); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportAndCompare runs report and compare on synthetic campaigns and
// run records, in every format.
func TestReportAndCompare(t *testing.T) {
	dir := t.TempDir()
	fw1 := writeCampaign(t, dir, "fw1", reporttest.Firmware("fw1", "adc-a", 1))
	fw2 := writeCampaign(t, dir, "fw2", reporttest.Firmware("fw2", "adc-a-fw2", 0.9))
	waf := writeRecord(t, dir, "with-waf.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "www.fwtest.com", Level: 16, Value: 600, CPU: 0.4})
	noWAF := writeRecord(t, dir, "without-waf.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "www.fwtest.com", Level: 16, Value: 640, CPU: 0.4,
		Start: reporttest.T0.Add(time.Minute)})

	t.Run("report", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want []string // on stdout
		}{
			// Two campaigns' DUTs side by side, and a record's DUT beside them.
			{[]string{fw1, fw2, waf}, []string{"Throughput (Gbps, payload)", "adc-a-fw2", "(0.90×)", "5.30 Gbps", "4.77 Gbps",
				"www.fwtest.com", "Methodology appendix", "Method: fw2", "Final runs at 16 concurrent connections"}},
			{[]string{"--format", "csv", fw1}, []string{"dut,profile,cipher,group,gbps,cps", "adc-a,ecdhe-ecdsa-aes128-sha256-p384,ECDHE-ECDSA-AES128-SHA256"}},
			{[]string{"-f", "json", fw2}, []string{`"table": [`, `"appendix": [`, `"curves": {`}},
			{[]string{"--format", "html", waf, noWAF}, []string{"<!DOCTYPE html>", "<svg"}},
		} {
			code, stdout, stderr := invoke(t, context.Background(), append([]string{"report"}, tc.args...)...)
			if code != exitOK {
				t.Errorf("report %q: exit %d: %s", tc.args, code, stderr)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("report %q: no %q in the output", tc.args, w)
				}
			}
		}
	})

	t.Run("markdown", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "waf.md")
		if code, _, stderr := invoke(t, context.Background(), "report", waf, noWAF, "--format", "md", "-o", out); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		md, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`).FindAllStringSubmatch(string(md), -1)
		// The CPS bars, the best record's series and latency.
		if got, want := len(links), 3; got != want {
			t.Errorf("%d charts, want %d", got, want)
		}
		for _, l := range links {
			f, err := os.Open(filepath.Join(filepath.Dir(out), l[1]))
			if err != nil {
				t.Errorf("chart not beside the report: %v", err)
				continue
			}
			if _, err := png.Decode(f); err != nil {
				t.Errorf("%s: %v", l[1], err)
			}
			f.Close()
		}
	})

	t.Run("hlog", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "waf.hlog")
		if code, _, stderr := invoke(t, context.Background(), "report", "--format", "hlog", "-o", out, waf); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := metrics.ReadRun(waf)
		if err != nil {
			t.Fatal(err)
		}
		rd := hdr.NewHistogramLogReader(bytes.NewReader(data))
		for p := range vocab.NumTimed {
			h, err := rd.NextIntervalHistogram()
			if err != nil || h == nil {
				t.Fatalf("%s: %v, %v", p, h, err)
			}
			want, _ := rec.Histogram(p.String())
			if h.Tag() != p.String() || !h.Equals(want) {
				t.Errorf("%s: tag %q, %d values; the record's histogram has %d", p, h.Tag(), h.TotalCount(), want.TotalCount())
			}
		}
	})

	t.Run("compare records", func(t *testing.T) {
		code, stdout, stderr := invoke(t, context.Background(), "compare", waf, noWAF)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// 1200 transactions against 1280: −80, −6.25%.
		if !regexp.MustCompile(`transactions\s+1,200\s+1,280\s+-80\s+-6.25%`).MatchString(stdout) {
			t.Errorf("no transactions line with its deltas:\n%s", stdout)
		}
		if !strings.Contains(stdout, "Little's law") {
			t.Error("concurrency is not said to come from Little's law")
		}
	})

	t.Run("compare campaigns", func(t *testing.T) {
		code, stdout, stderr := invoke(t, context.Background(), "compare", "--format", "json", fw2, fw1)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var c struct {
			Cells []struct {
				Cell string
				Rows []struct {
					Metric   string
					A, B     float64
					Delta    float64
					DeltaPct *float64 `json:"delta_pct"`
				}
			}
		}
		if err := json.Unmarshal([]byte(stdout), &c); err != nil {
			t.Fatal(err)
		}
		if got, want := len(c.Cells), 2; got != want {
			t.Fatalf("%d cells, want %d", got, want)
		}
		tx := c.Cells[0].Rows[0]
		if tx.Metric != "transactions" || tx.A != 1152 || tx.B != 1280 || tx.Delta != -128 || tx.DeltaPct == nil || *tx.DeltaPct != -10 {
			t.Errorf("%s: %+v", c.Cells[0].Cell, tx)
		}
		out := filepath.Join(t.TempDir(), "cmp.html")
		if code, _, stderr := invoke(t, context.Background(), "compare", "--format", "html", "-o", out, fw2, fw1); code != exitOK {
			t.Fatalf("html: exit %d: %s", code, stderr)
		}
		if data, err := os.ReadFile(out); err != nil || strings.Count(string(data), "<svg") != 2 {
			t.Errorf("html: %d charts, %v", strings.Count(string(data), "<svg"), err)
		}
	})
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	record := writeRecord(t, dir, "cps.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 100})
	tput := writeRecord(t, dir, "tput.json", reporttest.RunSpec{Engine: "throughput", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 1})
	write := func(name, data string) string {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	notRecord := write("other.json", `{"name": "something else"}`)
	notJSON := write("notes.txt", "hello")
	interrupted := filepath.Dir(write("interrupted/ledger.jsonl", ""))
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	campaign := filepath.Dir(write("campaign/summary.json", `{"schema": "tlsbench/summary/v1", "name": "c", "rows": [], "cells": []}`))
	write("campaign/ledger.jsonl", "")
	badLedger := filepath.Dir(write("bad-ledger/summary.json", `{"schema": "tlsbench/summary/v1", "name": "c"}`))
	write("bad-ledger/ledger.jsonl", "not json\n{\"key\": \"x\"}\n")
	for _, tc := range []struct {
		args []string
		want string // in the one-line message
	}{
		{[]string{"report"}, "no input"}, // nothing to report
		{[]string{"report", filepath.Join(dir, "missing.json")}, "no such file or directory"},          // missing file
		{[]string{"report", notRecord}, "want a run record or a campaign directory"},                   // JSON of something else
		{[]string{"report", notJSON}, "not a run record"},                                              // not JSON
		{[]string{"report", empty}, "not a campaign directory"},                                        // a directory of nothing
		{[]string{"report", interrupted}, "the campaign did not finish"},                               // no summary yet
		{[]string{"report", filepath.Join(campaign, "summary.json")}, "give its directory"},            // a campaign's file
		{[]string{"report", badLedger}, "line 1 is not a ledger entry"},                                // a damaged ledger
		{[]string{"report", "--format", "docx", record}, `unknown --format "docx"`},                    // unknown format
		{[]string{"report", "--format", "md", record}, "give -o FILE"},                                 // md charts need a place
		{[]string{"report", "--no-such-flag", record}, "unknown flag"},                                 // unknown flag
		{[]string{"report", "-o", filepath.Join(dir, "no", "dir", "r.txt"), record}, "-o"},             // unwritable output
		{[]string{"compare", record}, "want two inputs"},                                               // one input
		{[]string{"compare", record, record, record}, "want two inputs"},                               // three inputs
		{[]string{"compare", "--format", "hlog", record, record}, `unknown --format "hlog"`},           // report's format only
		{[]string{"compare", record, campaign}, "not of a kind"},                                       // a record and a campaign
		{[]string{"compare", record, tput}, "compare runs of one engine"},                              // two engines
		{[]string{"compare", record, filepath.Join(dir, "missing.json")}, "no such file or directory"}, // missing B
		{[]string{"compare", campaign, campaign}, "no cell in common"},                                 // nothing to compare
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitBadUsage, stderr)
			continue
		}
		if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%q: %d lines on stderr, want one: %q", tc.args, lines, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q does not name %q", tc.args, stderr, tc.want)
		}
	}
}
