package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resumePlan is a campaign's plan.yaml whose DUT refuses connections: a
// resumed campaign that gets as far as its preliminary phase fails there
// at once.
const resumePlan = "name: r\nduts: [{name: a, url: \"https://127.0.0.1:1/\"}]\n" +
	"tests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n" +
	"method: {duration: 1s, warmup: 0s, cooldown: 0s, explore: {concurrency: {min: 1, max: 2}, probe_duration: 100ms}, " +
	"final: {min_accepted: 1, max_runs: 1, tolerance: 10%}}\n"

// resumeDir makes a campaign directory with resumePlan and a ledger.
func resumeDir(t *testing.T, ledger string) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "ledger.jsonl")
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(resumePlan), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(ledger), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// TestResumeDamagedLedger: qualify --resume refuses a ledger with a whole
// line that is not an entry (exit 2, one line naming the file and the
// line) and leaves it byte for byte; a last line torn by a crash is
// dropped and said on stderr, and the campaign goes on.
func TestResumeDamagedLedger(t *testing.T) {
	for _, tc := range []struct{ name, ledger, want string }{
		{"garbage only line", "garbage\n", "line 1 is not a ledger entry"},
		{"JSON, not an entry", `{"key": 1}` + "\n", "line 1: "},
		{"torn, then garbage", "garbage\n{\"ke", "line 1 is not a ledger entry"},
	} {
		dir, file := resumeDir(t, tc.ledger)
		code, stderr, timedOut := invokeBounded(t, 20*time.Second, "qualify", "-q", "--resume", dir)
		if timedOut || code != exitBadUsage || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, file) || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d (timed out %v), stderr %q; want 2 and one line naming %s and %q",
				tc.name, code, timedOut, stderr, file, tc.want)
		}
		if after, _ := os.ReadFile(file); string(after) != tc.ledger {
			t.Errorf("%s: ledger changed to %q", tc.name, after)
		}
	}
	torn := `{"key":"preliminary|a|cps|rsa2048-aes128-gcm-sha256","pha`
	dir, file := resumeDir(t, torn)
	code, stderr, timedOut := invokeBounded(t, 60*time.Second, "qualify", "-q", "--resume", dir)
	said := file + ": dropped its last line, " + strconv.Itoa(len(torn)) + " bytes torn by a crash"
	if timedOut || !strings.Contains(stderr, said) {
		t.Errorf("torn: exit %d (timed out %v), stderr %q; want it to say %q", code, timedOut, stderr, said)
	}
	if !strings.Contains(stderr, "campaign r in "+dir) {
		t.Errorf("torn: the campaign did not go on: %q", stderr)
	}
	if after, _ := os.ReadFile(file); strings.Contains(string(after), torn) {
		t.Errorf("torn: the torn line is still in the ledger: %q", after)
	}
}
