package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// chartPackages are the chart renderer and what only it brings in (its
// fonts, its canvases).
var chartPackages = []string{"gonum.org/v1/plot", "codeberg.org/go-fonts/", "codeberg.org/go-latex/", "codeberg.org/go-pdf/",
	"git.sr.ht/~sbinet/gg", "github.com/ajstarks/svgo", "github.com/golang/freetype"}

func chartPackage(p string) bool {
	for _, c := range chartPackages {
		if strings.HasPrefix(p, c) {
			return true
		}
	}
	return false
}

// TestLeanBuildHasNoCharts: the agent's build (-tags nocharts) depends on
// no package of the chart renderer; the default build does.
func TestLeanBuildHasNoCharts(t *testing.T) {
	for _, tc := range []struct {
		tags   []string
		charts bool
	}{
		{nil, true},
		{[]string{"-tags", "nocharts"}, false},
	} {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, tc.tags...), ".")...).Output()
		if err != nil {
			t.Fatalf("go list -deps %q: %v", tc.tags, err)
		}
		var found []string
		for _, p := range strings.Fields(string(out)) {
			if chartPackage(p) {
				found = append(found, p)
			}
		}
		if got := len(found) > 0; got != tc.charts {
			t.Errorf("go list -deps %q: chart packages %q, want some: %v", tc.tags, found, tc.charts)
		}
	}
}

// TestLeanBinary builds the agent's binary as the Dockerfile does (static,
// -tags nocharts), checks that it carries no chart package (its build
// information and its symbols), and that report --format html and md say on
// one line that charts are not in this build and still write the tables.
func TestLeanBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tlsbench")
	build := exec.Command("go", "build", "-tags", "nocharts", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nocharts: %v\n%s", err, out)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(info), "-tags=nocharts") || !strings.Contains(string(info), "CGO_ENABLED=0") {
		t.Errorf("go version -m: not a static nocharts build:\n%s", info)
	}
	for _, l := range strings.Split(string(info), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "dep" && chartPackage(f[1]) {
			t.Errorf("the lean binary has the module %s", f[1])
		}
	}
	syms, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(syms, []byte("gonum.org/v1/plot")); n > 0 {
		t.Errorf("the lean binary has %d symbols of gonum.org/v1/plot", n)
	}
	if st, err := os.Stat(bin); err == nil {
		t.Logf("lean binary: %d bytes (not stripped)", st.Size())
	}

	camp := writeCampaign(t, dir, "fw1", reporttest.Firmware("fw1", "adc-a", 1))
	md := filepath.Join(dir, "report.md")
	for _, tc := range []struct {
		args []string
		file string // the output, if not stdout
		want string // a table of it
	}{
		{[]string{"report", "--format", "html", camp}, "", "<table"},
		{[]string{"report", "--format", "md", "-o", md, camp}, md, "|---|"},
	} {
		cmd := exec.Command(bin, tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%q: %v: %s", tc.args, err, stderr.String())
			continue
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "charts are not in this build") {
			t.Errorf("%q: stderr %q, want one line saying charts are not in this build", tc.args, stderr.String())
		}
		doc := stdout.Bytes()
		if tc.file != "" {
			if doc, err = os.ReadFile(tc.file); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Contains(doc, []byte(tc.want)) || bytes.Contains(doc, []byte("<svg")) || bytes.Contains(doc, []byte(".png)")) {
			t.Errorf("%q: want tables (%q) and no chart:\n%.2000s", tc.args, tc.want, doc)
		}
	}
	if pngs, _ := filepath.Glob(filepath.Join(dir, "*.png")); len(pngs) > 0 {
		t.Errorf("report --format md wrote charts %q", pngs)
	}
}
