package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// TestMergedRecordRates: the merge of two real agents' records (cps on
// loopback, --shard 0/2 and 1/2) is read back as written; the same record
// with its CPS multiplied by 10 is refused by report (one line, exit 2,
// naming cps and the agents' counts) and by DecodeRun.
func TestMergedRecordRates(t *testing.T) {
	dir := t.TempDir()
	files, _ := agentRecords(t, dir, "a", "b")
	out := filepath.Join(dir, "merged.json")
	if code, _, stderr := invoke(t, context.Background(), "merge", files[0], files[1], "-o", out); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.DecodeRun(data); err != nil {
		t.Fatalf("DecodeRun refuses the merged record: %v", err)
	}
	if code, _, stderr := invoke(t, context.Background(), "report", out); code != exitOK {
		t.Fatalf("report of the merged record: exit %d: %s", code, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["cps"] = m["cps"].(float64) * 10
	bad, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "cps-x10.json")
	if err := os.WriteFile(file, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.DecodeRun(bad); err == nil {
		t.Errorf("DecodeRun accepts a merged record with CPS ×10")
	}
	wantUsageError(t, []string{"report", file}, "cps: ")
	wantUsageError(t, []string{"report", file}, "but the agents' transactions over their windows")
}
