package method_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// TestLedgerAndSummaryValidated: a ledger line or a summary edited by hand
// into something invalid is refused on read, the line and field named;
// the schema refuses it too.
func TestLedgerAndSummaryValidated(t *testing.T) {
	dir := t.TempDir()
	s, err := campaign(t, testPlan("a"), &fakeExec{}, dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := method.WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	ledger, err := os.ReadFile(filepath.Join(dir, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(ledger, []byte("\n"))
	summary, err := os.ReadFile(filepath.Join(dir, method.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(data []byte, f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, _ := json.Marshal(m)
		return out
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"no schema", func(m map[string]any) { delete(m, "schema") }, `line 2: schema "", want "tlsbench/ledger/v1"`},
		{"negative run count", func(m map[string]any) { m["run"].(map[string]any)["transactions"] = -1 }, "line 2: run.transactions: -1 is negative"},
		{"unknown phase", func(m map[string]any) { m["phase"] = "warmup" }, `line 2: phase: "warmup" is not one of`},
		{"misspelled", func(m map[string]any) { m["acepted"] = true }, "line 2: acepted: unknown field"},
		{"misspelled in the run", func(m map[string]any) { m["run"].(map[string]any)["negotiated"].(map[string]any)["grup"] = "x" }, "line 2: run.negotiated.grup: unknown field"},
	} {
		line := edit(bytes.TrimSuffix(lines[1], []byte("\n")), tc.edit)
		if schematest.Check(schemas.Ledger, line) == nil {
			t.Errorf("%s: the ledger schema accepts it", tc.name)
		}
		file := filepath.Join(t.TempDir(), method.LedgerFile)
		data := append(append(append([]byte(nil), lines[0]...), line...), '\n')
		data = append(data, bytes.Join(lines[2:], nil)...)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := method.ReadLedger(file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: ReadLedger: %v, want one line naming %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"no schema", func(m map[string]any) { delete(m, "schema") }, `schema "", want "tlsbench/summary/v1"`},
		{"negative value", func(m map[string]any) { m["cells"].([]any)[0].(map[string]any)["value"] = -1e308 }, "cells[0].value: -1e+308 is negative"},
		{"unknown engine", func(m map[string]any) { m["cells"].([]any)[0].(map[string]any)["engine"] = "warp" }, `cells[0].engine: "warp" is not one of`},
		{"more accepted than made", func(m map[string]any) {
			m["rows"].([]any)[0].(map[string]any)["cps_runs"].(map[string]any)["accepted"] = 99
		}, "rows[0].cps_runs.accepted: 99 is more than total"},
		{"misspelled", func(m map[string]any) { m["rows"].([]any)[0].(map[string]any)["cipherr"] = "x" }, "rows[0].cipherr: unknown field"},
	} {
		data := edit(summary, tc.edit)
		if tc.name != "more accepted than made" && schematest.Check(schemas.Summary, data) == nil {
			t.Errorf("summary %s: the schema accepts it", tc.name)
		}
		if _, err := method.DecodeSummary(data); err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("summary %s: DecodeSummary: %v, want %q", tc.name, err, tc.want)
		}
	}
}
