package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// TestReportPDF: report --format pdf prints the two-DUT campaign with the
// Debian package's Chromium (found on PATH, or named by --chromium) into
// the -o file, atomically (no temporary file is left beside it); without a
// browser it fails with one line naming what is missing (exit 1: not bad
// input); bad flags are exit 2.
func TestReportPDF(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no %s (Debian package chromium)", chromium)
		}
		t.Skipf("no %s (Debian package chromium)", chromium)
	}
	dir := t.TempDir()
	lab := writeCampaign(t, dir, "lab", reporttest.Lab())
	outDir := t.TempDir()
	out := filepath.Join(outDir, "lab.pdf")
	for _, args := range [][]string{
		{"report", "--format", "pdf", "-o", out, lab},
		{"report", "--format", "pdf", "--chromium", chromium, "-o", out, lab},
	} {
		code, _, stderr := invoke(t, context.Background(), args...)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil || !strings.HasPrefix(string(data), "%PDF-") || len(data) < 10000 {
			t.Fatalf("%q: %s is not a PDF (%d bytes, %v)", args, out, len(data), err)
		}
		if entries, _ := os.ReadDir(outDir); len(entries) != 1 {
			t.Errorf("%q: %d files beside the PDF, want none", args, len(entries)-1)
		}
	}
	// No browser on PATH.
	t.Setenv("PATH", t.TempDir())
	code, _, stderr := invoke(t, context.Background(), "report", "--format", "pdf", "-o", out, lab)
	if code != exitFailed || !strings.Contains(stderr, "no headless Chromium") || !strings.Contains(stderr, "--chromium PATH") ||
		strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("no browser: exit %d, %q; want exit %d and one line naming the browser", code, stderr, exitFailed)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--format", "pdf", "--chromium", filepath.Join(dir, "no-such-browser"), "-o", out, lab}, "no-such-browser"},
		{[]string{"report", "--format", "pdf", lab}, "give -o FILE"},
		{[]string{"report", "--format", "html", "--chromium", chromium, lab}, "--chromium is for --format pdf"},
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", tc.args, code, stderr, exitBadUsage, tc.want)
		}
	}
}
