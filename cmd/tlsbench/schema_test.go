package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports/reporttest"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// outputFlags are the flags whose value is a file or directory a command
// writes JSON to.
var outputFlagNames = map[string]bool{"--json": true, "-o": true, "--output": true, "--out": true, "--resume": true}

// validateOutputs validates what an invoked command wrote against its JSON
// Schema: JSON on stdout (--format json) and every .json and .jsonl file
// named by an output flag (a file, or a directory of them: --json DIR,
// qualify --out DIR). Each must carry its schema version.
func validateOutputs(t *testing.T, args []string, stdout string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	for i, a := range args {
		name, value, inline := strings.Cut(a, "=")
		if !outputFlagNames[name] {
			if (a == "--format" || a == "-f") && i+1 < len(args) && args[i+1] == "json" || a == "--format=json" {
				checkJSON(t, args[0]+" --format json (stdout)", []byte(stdout))
			}
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				continue
			}
			value = args[i+1]
		}
		checkOutputPath(t, value)
	}
}

func checkOutputPath(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		return // not written (the command failed before)
	}
	if st.Mode().IsRegular() {
		checkOutputFile(t, path)
		return
	}
	if !st.IsDir() {
		return // a FIFO or a device: what went through it is the reader's
	}
	_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			checkOutputFile(t, p)
		}
		return nil
	})
}

func checkOutputFile(t *testing.T, file string) {
	t.Helper()
	switch {
	case filepath.Base(file) == method.LedgerFile:
		data, err := os.ReadFile(file)
		if err != nil {
			t.Error(err)
			return
		}
		schematest.ValidLines(t, schemas.Ledger, file, data)
		if _, err := method.ReadLedger(file); err != nil {
			t.Errorf("a ledger tlsbench wrote does not read back: %v", err)
		}
	case strings.HasSuffix(file, ".json"):
		data, err := os.ReadFile(file)
		if err != nil {
			t.Error(err)
			return
		}
		checkJSON(t, file, data)
	}
}

// checkJSON validates a JSON output against the schema it names.
func checkJSON(t *testing.T, what string, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		return // -o of another format, or an output cut by an error
	}
	v := schematest.Detect(data)
	if v == "" {
		t.Errorf("%s carries no schema version", what)
		return
	}
	schematest.Valid(t, v, what, data)
	// What tlsbench writes, it reads back: the Go validation agrees.
	var err error
	switch v {
	case schemas.Run:
		_, err = metrics.DecodeRun(data)
	case schemas.Summary:
		_, err = method.DecodeSummary(data)
	case schemas.ImpactRuns:
		var runs struct{ Baseline, Candidate []json.RawMessage }
		if err = json.Unmarshal(data, &runs); err == nil {
			for _, r := range append(runs.Baseline, runs.Candidate...) {
				if _, err = metrics.DecodeRun(r); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		t.Errorf("%s does not read back: %v", what, err)
	}
}

// TestBinaryHasNoSchemaValidator: the JSON Schema validator is for tests
// only; the binary carries the schemas, not the validator.
func TestBinaryHasNoSchemaValidator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	sawSchemas := false
	for _, p := range deps {
		if strings.Contains(p, "jsonschema") || strings.HasSuffix(p, "/schematest") {
			t.Errorf("the tlsbench binary depends on %s", p)
		}
		sawSchemas = sawSchemas || strings.HasSuffix(p, "tlsbench/schemas")
	}
	if !sawSchemas {
		t.Errorf("the tlsbench binary does not embed package schemas")
	}
}

// TestSchemaCommand: schema lists every schema and prints each, valid JSON
// with its $id; an unknown one is exit 2.
func TestSchemaCommand(t *testing.T) {
	code, stdout, stderr := invoke(t, context.Background(), "schema")
	if code != exitOK {
		t.Fatalf("schema: exit %d: %s", code, stderr)
	}
	for v, file := range schemas.Files {
		if !strings.Contains(stdout, v) {
			t.Errorf("schema lists no %s: %q", v, stdout)
		}
		for _, name := range []string{v, file, strings.TrimSuffix(file, ".json")} {
			code, out, stderr := invoke(t, context.Background(), "schema", name)
			var doc struct {
				ID string `json:"$id"`
			}
			if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || !strings.HasSuffix(doc.ID, "/"+file) {
				t.Errorf("schema %s: exit %d, $id %q, stderr %q", name, code, doc.ID, stderr)
			}
		}
	}
	if code, _, stderr := invoke(t, context.Background(), "schema", "tlsbench/run/v9"); code != exitBadUsage || strings.Count(stderr, "\n") != 1 {
		t.Errorf("schema tlsbench/run/v9: exit %d, stderr %q; want exit 2 and one line", code, stderr)
	}
}

// TestReportRejectsBrokenRecords: a hand-edited record that is not valid
// is refused by report, compare and merge with exit 2 and one line naming
// the file and the field; the schema refuses it too.
func TestReportRejectsBrokenRecords(t *testing.T) {
	dir := t.TempDir()
	good := writeRecord(t, dir, "good.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 100})
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Valid(t, schemas.Run, good, data)
	for _, tc := range []struct {
		name   string
		edit   func(m map[string]any)
		field  string // named in the message
		schema bool   // the schema catches it too
	}{
		{"unknown-engine", func(m map[string]any) { m["engine"] = "warp" }, `engine: "warp" is not one of cps, throughput`, true},
		{"negative-count", func(m map[string]any) { m["transactions"] = -5 }, "transactions: -5 is negative", true},
		{"huge-negative-cps", func(m map[string]any) { m["cps"] = -1e308 }, "cps: -1e+308 is negative", true},
		{"misspelled-field", func(m map[string]any) { m["transactionz"] = m["transactions"] }, "transactionz: unknown field", true},
		{"percentiles-out-of-order", func(m map[string]any) {
			p := m["latency_us"].(map[string]any)["total"].(map[string]any)
			p["p90"], p["p99"] = p["p99"], p["p90"]
		}, "latency_us.total.p99 (", false},
		{"missing-field", func(m map[string]any) { delete(m["target"].(map[string]any), "url") }, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			bad, _ := json.MarshalIndent(m, "", "  ")
			file := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(file, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := schematest.Check(schemas.Run, bad); tc.schema && err == nil {
				t.Errorf("the schema accepts %s", tc.name)
			}
			if tc.field == "" {
				return // encoding/json cannot tell a missing string from an empty one
			}
			for _, args := range [][]string{{"report", file}, {"compare", file, good}, {"merge", "-o", filepath.Join(dir, "m.json"), file}} {
				code, stdout, stderr := invoke(t, context.Background(), args...)
				if code != exitBadUsage {
					t.Errorf("%s: exit %d, want %d (stdout %q)", args, code, exitBadUsage, stdout)
				}
				if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, file+": "+tc.field) {
					t.Errorf("%s: stderr %q, want one line naming %s and %q", args, stderr, file, tc.field)
				}
			}
		})
	}
}

// TestImpactOutputsMatchSchema: impact's result (--format json) and its
// rounds' records (--json FILE) carry their schema versions and are valid
// against their schemas (checked by invoke).
func TestImpactOutputsMatchSchema(t *testing.T) {
	a, b, ca := impactTargets(t, 0)
	file := filepath.Join(t.TempDir(), "rounds.json")
	code, stdout, stderr := invoke(t, context.Background(), "impact", "-q", "--baseline", a, "--candidate", b, "--cacert", ca,
		"-c", "2", "-d", "500ms", "--warmup", "100ms", "--rounds", "2", "--cooldown", "0s", "--format", "json", "--json", file, "--profile", "ecdhe-ecdsa-aes128-gcm-sha256-p256")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := schematest.Detect(data); got != schemas.ImpactRuns {
		t.Errorf("--json file names schema %q, want %q", got, schemas.ImpactRuns)
	}
	if got := schematest.Detect([]byte(stdout)); got != schemas.Impact {
		t.Errorf("--format json names schema %q, want %q", got, schemas.Impact)
	}
}
