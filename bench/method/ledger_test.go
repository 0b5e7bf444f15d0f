package method_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
)

// TestLedgerDamage: only a last line torn by a crash (no newline at its
// end, not JSON) is dropped, and Dropped says how many bytes; a whole line
// that is not JSON, anywhere, or a JSON line that is not a valid entry, is
// refused naming the file and the line, and the file is left byte for
// byte; a last entry whose newline is missing is kept.
func TestLedgerDamage(t *testing.T) {
	dir := t.TempDir()
	exec := &fakeExec{}
	want, err := campaign(t, testPlan("a"), exec, dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	if len(lines) < 6 {
		t.Fatalf("only %d ledger lines", len(lines))
	}
	first5 := strings.Join(lines[:5], "")
	for _, tc := range []struct {
		name, data string
		want       string // the error's words; "" opens
		entries    int    // when it opens
		dropped    int
		after      string // the file once opened
	}{
		{"torn last line", first5 + lines[5][:len(lines[5])/2], "", 5, len(lines[5]) / 2, first5},
		{"torn only line", lines[0][:10], "", 0, 10, ""},
		{"no newline after the last entry", first5 + strings.TrimSuffix(lines[5], "\n"), "", 6, 0, first5 + lines[5]},
		{"garbage last line", first5 + "garbage\n", "line 6 is not a ledger entry", 0, 0, ""},
		{"garbage only line", "garbage\n", "line 1 is not a ledger entry", 0, 0, ""},
		{"garbage in the middle", lines[0] + "{\"key\":\n" + strings.Join(lines[1:5], ""),
			"line 2 is not a ledger entry", 0, 0, ""},
		{"blank line", lines[0] + "\n" + lines[1], "line 2 is not a ledger entry", 0, 0, ""},
		{"JSON, not an entry", first5 + `{"key": 1}` + "\n", "line 6: ", 0, 0, ""},
		{"JSON, not an entry, no newline", first5 + `{"key": "x"}`, "line 6: ", 0, 0, ""},
	} {
		d := t.TempDir()
		file := filepath.Join(d, method.LedgerFile)
		if err := os.WriteFile(file, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := method.OpenLedger(d)
		after, _ := os.ReadFile(file)
		if tc.want != "" {
			if err == nil {
				l.Close()
				t.Errorf("%s: opened, want an error naming %q", tc.name, tc.want)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, file) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("%s: error %q, want one line naming %s and %q", tc.name, msg, file, tc.want)
			}
			if !bytes.Equal(after, []byte(tc.data)) {
				t.Errorf("%s: the refused ledger was changed: %d bytes, was %d", tc.name, len(after), len(tc.data))
			}
			if _, err := method.ReadLedger(file); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: ReadLedger: %v, want %q", tc.name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if n := len(l.Entries()); n != tc.entries || l.Dropped() != tc.dropped || string(after) != tc.after {
			t.Errorf("%s: %d entries, %d bytes dropped, file of %d bytes; want %d, %d, %d",
				tc.name, n, l.Dropped(), len(after), tc.entries, tc.dropped, len(tc.after))
		}
		l.Close()
	}
	// The campaign resumes from the torn ledger: the torn run is made again.
	file := filepath.Join(dir, method.LedgerFile)
	if err := os.WriteFile(file, []byte(first5+lines[5][:len(lines[5])/2]), 0o644); err != nil {
		t.Fatal(err)
	}
	again := &fakeExec{}
	got, err := campaign(t, testPlan("a"), again, dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again.calls != exec.calls-5 || len(got.Cells) != len(want.Cells) {
		t.Errorf("resumed: %d runs made again, want %d", again.calls, exec.calls-5)
	}
}
