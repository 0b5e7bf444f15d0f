package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/outfile/outfiletest"
)

// TestOutputStdout: "-" is standard output for --json (the text then goes
// to stderr) and for report -o.
func TestOutputStdout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, stdout, stderr := invoke(t, ctx, "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s", "--json", "-")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rec struct {
		Engine       string `json:"engine"`
		Transactions int64  `json:"transactions"`
	}
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil || rec.Engine != "cps" || rec.Transactions == 0 {
		t.Fatalf("stdout is not the record (%v): %.200q", err, stdout)
	}
	if !strings.Contains(stderr, "CPS (SR=0)") {
		t.Errorf("the table is not on stderr: %q", stderr)
	}
	file := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	code, viaDash, stderr := invoke(t, ctx, "report", "-o", "-", file)
	_, plain, _ := invoke(t, ctx, "report", file)
	if code != exitOK || viaDash != plain || !strings.Contains(plain, "Published table") {
		t.Errorf("report -o -: exit %d (%s), same as without -o: %v", code, stderr, viaDash == plain)
	}
}

// TestJSONThroughSymlinkToFIFO: --json names a symbolic link to a FIFO; the
// record goes through it and the link stays a link.
func TestJSONThroughSymlinkToFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo, got := outfiletest.FIFO(t, dir, "fifo", json.Valid, time.Minute)
	link := filepath.Join(dir, "run.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, _, stderr := invoke(t, ctx, "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s", "--json", link)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	select {
	case data := <-got:
		if !json.Valid(data) || !strings.Contains(string(data), `"engine": "cps"`) {
			t.Errorf("the FIFO received %.200q", data)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the FIFO received nothing")
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symbolic link", link)
	}
}
