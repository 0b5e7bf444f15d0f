package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation's checks: the command reference is the generated one,
// every relative link of the Markdown files resolves, and the README fits
// on a screen with the two commands of its top.

const repoRoot = "../.."

// TestCommandsDocIsGenerated: docs/COMMANDS.md is exactly what
// `tlsbench man --format markdown` prints, so it cannot drift from the
// flags; after changing a command's help or flags, run
// `go generate ./cmd/tlsbench`.
func TestCommandsDocIsGenerated(t *testing.T) {
	code, got, stderr := invoke(t, context.Background(), "man", "--format", "markdown")
	if code != exitOK || stderr != "" {
		t.Fatalf("man --format markdown: exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join(repoRoot, "docs", "COMMANDS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(g), len(w)); i++ {
			gl, wl := lineAt(g, i), lineAt(w, i)
			if gl != wl {
				t.Fatalf("docs/COMMANDS.md differs from `tlsbench man --format markdown` at line %d:\n"+
					"committed: %q\ngenerated: %q\nrun: go generate ./cmd/tlsbench", i+1, wl, gl)
			}
		}
	}
	// The reference holds every command and every flag.
	for _, c := range allCommandFlags() {
		if !strings.Contains(got, "\n## `tlsbench "+c.name+"`\n") {
			t.Errorf("no section for the command %q", c.name)
		}
		for _, f := range flagList(c.fs) {
			if !strings.Contains(got, "--"+f.Name) {
				t.Errorf("%s: no flag --%s", c.name, f.Name)
			}
		}
	}
	if code, _, stderr := invoke(t, context.Background(), "man", "--format", "pdf"); code != exitBadUsage ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "roff or markdown") {
		t.Errorf("man --format pdf: exit %d, %q; want exit %d and one line naming the formats", code, stderr, exitBadUsage)
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}

// markdownFiles are the repository's documentation: README.md,
// CHANGELOG.md and docs/*.md.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "CHANGELOG.md")}, files...)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

var (
	mdLink    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*$`)
	mdCode    = regexp.MustCompile("`[^`]*`")
)

// mdAnchors are the anchors GitHub makes for a file's headings (a repeated
// heading gets -1, -2, …).
func mdAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range mdProse(text) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := mdSlug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// mdProse is a file's lines, those of fenced code blocks (and the fences)
// blanked, so that the index of a line is its number less one.
func mdProse(text string) []string {
	out := strings.Split(text, "\n")
	fenced := false
	for i, line := range out {
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		if fence {
			fenced = !fenced
		}
		if fence || fenced {
			out[i] = ""
		}
	}
	return out
}

// TestDocLinks: every relative link in README.md, CHANGELOG.md and
// docs/*.md names a file or directory that exists, and its #anchor, if
// any, a heading of that file.
func TestDocLinks(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = mdAnchors(string(data))
		return anchors[file]
	}
	links := 0
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range mdProse(string(data)) {
			for _, m := range mdLink.FindAllStringSubmatch(mdCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %v", file, n+1, target, err)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
					t.Errorf("%s:%d: link %q: no heading %q in %s", file, n+1, target, anchor, dest)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found: the link pattern is wrong")
	}
}

// TestReadmeFitsOnAScreen: README.md is at most 250 lines, and its first
// code block holds `make run` and `make test`, both targets of the
// Makefile.
func TestReadmeFitsOnAScreen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\n"); n > 250 {
		t.Errorf("README.md has %d lines; at most 250 (the rest belongs in docs/)", n)
	}
	_, rest, ok := strings.Cut(text, "```")
	first, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no code block")
	}
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"run", "test"} {
		if !regexp.MustCompile(`(?m)^make ` + target + `\b`).MatchString(first) {
			t.Errorf("README.md's first code block lacks `make %s`", target)
		}
		if !regexp.MustCompile(`(?m)^` + target + `:`).Match(mk) {
			t.Errorf("the Makefile has no target %q, which README.md's first lines name", target)
		}
	}
}
