package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// TestCompareConfirm: compare of two campaigns of one plan says, in every
// format, whether the second confirms the first: one cell beyond the
// stricter tolerance is flagged, the others confirmed or listed as on one
// side only or without a published value (invoke validates the JSON).
func TestCompareConfirm(t *testing.T) {
	dir := t.TempDir()
	first, second := reporttest.Repeat()
	a := writeCampaign(t, dir, "repeat1", first)
	b := writeCampaign(t, dir, "repeat2", second)
	differs := "adc-b cps HTTP/1.1 " + reporttest.P384
	const summary = "2 of 3 cells confirmed within ±5%; 1 differs: adc-b cps HTTP/1.1 " + reporttest.P384 + " (+21.0%)"
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"Does B confirm A?", summary, "the stricter is used", differs + "         640 CPS    774 CPS    +134       +21.0%   DIFFERS (beyond ±5%)",
			"not compared (B: no final run was accepted)", "only in A", "only in B"}},
		{"md", []string{"## Does B confirm A?", summary, "| " + differs + " | 640 CPS | 774 CPS | +134 | +21.0% | DIFFERS (beyond ±5%) |"}},
		{"html", []string{"Does B confirm A?", summary, ">DIFFERS (beyond ±5%)</td>"}},
		{"csv", []string{"b_minus_a,pct_of_a,tolerance_pct,verdict,state_a,state_b", differs + ",published,CPS,640,774.5,,,134.5,21.015625,5,differs,published,published",
			"adc-b cps HTTP/1.1 " + reporttest.RSA + ",published,CPS,1600,,,,,,5,not compared,published,no final run was accepted"}},
		{"json", []string{`"confirmation": {`, `"summary": "` + summary}},
	} {
		args := []string{"compare", "--format", tc.format, a, b}
		md := filepath.Join(dir, "confirm.md")
		if tc.format == "md" { // its charts go beside the file
			args = append(args, "-o", md)
		}
		code, stdout, stderr := invoke(t, context.Background(), args...)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", tc.format, code, stderr)
			continue
		}
		if tc.format == "md" {
			data, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			stdout = string(data)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: no %q in the output", tc.format, w)
			}
		}
		switch tc.format {
		case "csv":
			rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
			if err != nil {
				t.Errorf("csv: %v", err)
			} else if len(rows) < 9 || len(rows[0]) != 13 {
				t.Errorf("csv: %d rows of %d columns", len(rows), len(rows[0]))
			}
		case "json":
			var out struct {
				Confirmation struct {
					Tolerance float64
					Compared  int
					Confirmed int
					Differ    []string
					Cells     []struct {
						Cell    string
						A, B    *float64
						Verdict string
					}
				}
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			c := out.Confirmation
			if c.Tolerance != 0.05 || c.Compared != 3 || c.Confirmed != 2 || len(c.Differ) != 1 || len(c.Cells) != 8 {
				t.Errorf("json: %+v", c)
			}
			for _, cc := range c.Cells {
				if cc.Verdict == "only in A" && cc.B != nil || cc.Verdict == "only in B" && cc.A != nil {
					t.Errorf("json: %s %s has a value on its missing side", cc.Cell, cc.Verdict)
				}
			}
		}
	}

	// Without its plan, A is judged by B's tolerance, and says so.
	if err := os.Remove(filepath.Join(a, "plan.yaml")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := invoke(t, context.Background(), "compare", a, b)
	if code != exitOK {
		t.Fatalf("without plan.yaml: exit %d: %s", code, stderr)
	}
	for _, w := range []string{"A has no plan: B's tolerance", "2 of 3 cells confirmed within ±10%; 1 differs", "DIFFERS (beyond ±10%)"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("without plan.yaml: no %q in\n%s", w, stdout[:min(len(stdout), 2000)])
		}
	}
}
