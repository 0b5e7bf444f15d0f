package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanDescribeBadInput: a plan whose description is bad (a missing
// config_file, a field on two lines) is refused by qualify before any run:
// exit 2, one line naming the field and its line.
func TestPlanDescribeBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ describe, want string }{
		{"{config_file: missing.cfg}", "plan.yaml:5: duts.0.describe.config_file missing.cfg: no such file or directory"},
		{`{topology: "client TLS\nserver plaintext"}`, "duts.0.describe.topology must be one line"},
	} {
		file := filepath.Join(dir, "plan.yaml")
		data := "name: x\nduts:\n  - name: a\n    url: https://127.0.0.1:1/\n    describe: " + tc.describe + "\ntests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n"
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := invoke(t, context.Background(), "qualify", "--plan", file, "--out", filepath.Join(dir, "out"))
		if code != exitBadUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("describe %s: exit %d, %q; want exit %d and one line with %q", tc.describe, code, stderr, exitBadUsage, tc.want)
		}
	}
}
