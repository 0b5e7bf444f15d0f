// Command codestats measures the readability figures the project holds
// itself to: non-test Go lines, library functions longer than a bound, and
// lines wider than a bound (a tab counts as one column, as gofmt's output is
// read by lll and most review tools), and import blocks not grouped as
// `goimports -local` groups them (standard library, other modules, this
// module, in that order, one kind per group; test files included). Generated
// files are left out.
//
//	go run ./cmd/codestats            # the figures and the offenders
//	go run ./cmd/codestats --check    # exit 1 when a bound is exceeded
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

type funcLen struct {
	pos   string
	name  string
	lines int
}

type stats struct {
	files, lines int
	wide         []string
	long         []funcLen
	imports      []string // files whose import groups are out of order or mixed
	module       string   // the module's path (go.mod): its packages form the last group
}

func main() {
	root := flag.String("root", ".", "the module's root")
	maxFunc := flag.Int("max-func", 80, "longest library function, in lines")
	maxCols := flag.Int("max-cols", 120, "widest non-test line, in columns")
	check := flag.Bool("check", false, "exit 1 when a bound is exceeded")
	flag.Parse()
	s, err := measure(*root, *maxFunc, *maxCols)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codestats:", err)
		os.Exit(2)
	}
	fmt.Printf("non-test Go lines: %d in %d files\n", s.lines, s.files)
	fmt.Printf("library functions over %d lines: %d\n", *maxFunc, len(s.long))
	for _, f := range s.long {
		fmt.Printf("  %s %s %d\n", f.pos, f.name, f.lines)
	}
	fmt.Printf("non-test lines over %d columns: %d\n", *maxCols, len(s.wide))
	for _, w := range s.wide {
		fmt.Printf("  %s\n", w)
	}
	fmt.Printf("import blocks not grouped standard / other modules / %s: %d\n", s.module, len(s.imports))
	for _, f := range s.imports {
		fmt.Printf("  %s\n", f)
	}
	if *check && (len(s.long) > 0 || len(s.wide) > 0 || len(s.imports) > 0) {
		os.Exit(1)
	}
}

func measure(root string, maxFunc, maxCols int) (*stats, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	s := &stats{module: modfileModule(mod)}
	if s.module == "" {
		return nil, fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		return s.add(path, maxFunc, maxCols)
	})
	sort.Slice(s.long, func(i, j int) bool { return s.long[i].lines > s.long[j].lines })
	return s, err
}

func (s *stats) add(path string, maxFunc, maxCols int) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	test := strings.HasSuffix(path, "_test.go")
	mode := parser.ParseComments
	if test {
		mode |= parser.ImportsOnly // a test's imports are checked, nothing else
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, mode)
	if err != nil {
		return err
	}
	if ast.IsGenerated(f) {
		return nil
	}
	s.groupImports(path, fset, f)
	if test {
		return nil
	}
	s.files++
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		s.lines++
		if w := utf8.RuneCount(sc.Bytes()); w > maxCols {
			s.wide = append(s.wide, fmt.Sprintf("%s:%d (%d)", path, n, w))
		}
	}
	if f.Name.Name == "main" || strings.HasPrefix(filepath.ToSlash(path), "cmd/") {
		return nil // commands are not library packages
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		if n := end.Line - start.Line + 1; n > maxFunc {
			s.long = append(s.long, funcLen{fmt.Sprintf("%s:%d", path, start.Line), fn.Name.Name, n})
		}
	}
	return nil
}

// modfileModule returns the path on go.mod's module line, or "".
func modfileModule(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// groupImports records path when an import block's groups (runs of specs
// without a blank line between them) mix kinds or do not follow the order
// standard library, other modules, this module.
func (s *stats) groupImports(path string, fset *token.FileSet, f *ast.File) {
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		kind, prevEnd := -1, 0 // the current group's kind, the last spec's line
		for _, spec := range gen.Specs {
			is := spec.(*ast.ImportSpec)
			start := fset.Position(is.Pos()).Line
			if is.Doc != nil {
				start = fset.Position(is.Doc.Pos()).Line
			}
			k := s.importKind(strings.Trim(is.Path.Value, `"`))
			sameGroup := kind >= 0 && start <= prevEnd+1
			if sameGroup && k != kind || !sameGroup && k <= kind {
				s.imports = append(s.imports, fmt.Sprintf("%s:%d", path, start))
				return
			}
			kind = k
			prevEnd = fset.Position(is.End()).Line
		}
	}
}

// importKind orders an import path: 0 the standard library (no dot in its
// first element), 1 another module, 2 this module.
func (s *stats) importKind(p string) int {
	switch {
	case p == s.module || strings.HasPrefix(p, s.module+"/"):
		return 2
	case strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
		return 1
	}
	return 0
}
