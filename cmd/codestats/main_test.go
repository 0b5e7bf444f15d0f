package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestImportGroups: a block mixing kinds in one group, one out of order, and
// one splitting this module's imports over two groups are reported; the
// goimports -local layout is not.
func TestImportGroups(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"good.go":       "\"fmt\"\n\n\t\"github.com/valyala/fasthttp\"\n\n\t\"github.com/tlsbench/tlsbench/x\"",
		"mixed.go":      "\"fmt\"\n\n\t\"github.com/tlsbench/tlsbench/x\"\n\t\"github.com/valyala/fasthttp\"",
		"order_test.go": "\"fmt\"\n\n\t\"github.com/tlsbench/tlsbench/x\"\n\n\t\"github.com/valyala/fasthttp\"",
		"split.go":      "\"fmt\"\n\n\t\"github.com/tlsbench/tlsbench/x\"\n\n\t\"github.com/tlsbench/tlsbench/y\"",
	}
	gomod := "module github.com/tlsbench/tlsbench\n\ngo 1.26\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, imports := range files {
		src := "package a\n\nimport (\n\t" + imports + "\n)\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := measure(dir, 80, 120)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.imports {
		got = append(got, filepath.Base(f))
	}
	slices.Sort(got)
	want := []string{"mixed.go:7", "order_test.go:8", "split.go:8"}
	if !slices.Equal(got, want) {
		t.Errorf("reported %v, want %v", got, want)
	}
}
