package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// codeNames is what the module's Go code declares: the packages' names,
// every declared name (functions, types, methods, fields, variables,
// constants, locals), each type's methods and fields, each package's
// top-level names, and the files.
type codeNames struct {
	packages map[string]bool
	declared map[string]bool
	members  map[string]map[string]bool // type name → its methods and fields
	embeds   map[string]map[string]bool // type name → the types it embeds
	toplevel map[string]map[string]bool // package name → its top-level names
	files    map[string]bool
}

func readCodeNames(t *testing.T, root string) *codeNames {
	t.Helper()
	c := &codeNames{packages: map[string]bool{}, declared: map[string]bool{}, members: map[string]map[string]bool{},
		embeds: map[string]map[string]bool{}, toplevel: map[string]map[string]bool{}, files: map[string]bool{}}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		c.files[d.Name()] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		c.packages[pkg] = true
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				c.declared[id.Name] = true
			}
			return true
		})
		if strings.HasSuffix(path, "_test.go") {
			return nil // the tests' names count as declared, not as the packages' API
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				add(c.toplevel, pkg, d.Name.Name)
				if d.Recv != nil && len(d.Recv.List) == 1 {
					add(c.members, recvType(d.Recv.List[0].Type), d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(c.toplevel, pkg, s.Name.Name)
						addMembers(c.members, c.embeds, s)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(c.toplevel, pkg, n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

func addMembers(m, embeds map[string]map[string]bool, s *ast.TypeSpec) {
	set := m[s.Name.Name]
	if set == nil {
		set = map[string]bool{}
		m[s.Name.Name] = set
	}
	emb := embeds[s.Name.Name]
	if emb == nil {
		emb = map[string]bool{}
		embeds[s.Name.Name] = emb
	}
	var fields *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	}
	if fields == nil {
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			set[n.Name] = true
		}
		if len(f.Names) == 0 { // embedded: its name is the type's
			name := recvType(f.Type)
			if sel, ok := f.Type.(*ast.SelectorExpr); ok {
				name = sel.Sel.Name
			} else if st, ok := f.Type.(*ast.StarExpr); ok {
				if sel, ok := st.X.(*ast.SelectorExpr); ok {
					name = sel.Sel.Name
				}
			}
			if name != "" {
				set[name], emb[name] = true, true
			}
		}
	}
}

// known reports whether a name the notes give in backquotes is the code's:
// pkg.Name a top-level name of a package so called, Type.Member a method or
// field of a type so called (or reached through an embedded type), a lone
// name declared anywhere, a file name an existing file.
func (c *codeNames) known(name string) bool {
	name = strings.TrimSuffix(name, "()")
	if strings.HasSuffix(name, ".go") {
		return c.files[filepath.Base(name)]
	}
	parts := strings.Split(name, ".")
	if len(parts) == 1 {
		return c.declared[name] || c.packages[name]
	}
	x, y := parts[len(parts)-2], parts[len(parts)-1]
	if c.toplevel[x][y] || c.memberOf(x, y, 0) {
		return true
	}
	return false
}

func (c *codeNames) isTopLevel(name string) bool {
	for _, names := range c.toplevel {
		if names[name] {
			return true
		}
	}
	return false
}

func (c *codeNames) memberOf(typ, name string, depth int) bool {
	if c.members[typ][name] {
		return true
	}
	if depth > 3 {
		return false
	}
	for embedded := range c.embeds[typ] {
		if embedded != typ && c.memberOf(embedded, name, depth+1) {
			return true
		}
	}
	return false
}

// TestArchitectureNamesExist: every Go name docs/ARCHITECTURE.md gives in
// backquotes (runner.Spec, Local.Spec, engine.Run, engine.go) is one the
// code has, so that the notes cannot keep a name the code dropped.
func TestArchitectureNamesExist(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := readCodeNames(t, root)
	goName := regexp.MustCompile(`^\*?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$`)
	spans := regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(doc), -1)
	var missing []string
	seen := map[string]bool{}
	checked := 0
	for _, m := range spans {
		name := strings.TrimPrefix(m[1], "*")
		if seen[name] || !isCodeName(name, goName, code) {
			continue
		}
		seen[name] = true
		checked++
		if !code.known(name) {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	t.Logf("%d names checked", checked)
	if len(missing) > 0 {
		t.Errorf("docs/ARCHITECTURE.md names %d that the code does not have: %s", len(missing), strings.Join(missing, ", "))
	}
}

// isCodeName: a Go name of this module (an identifier, a selector, a .go
// file), not a record's JSON name (lower case with an underscore:
// duration_s, load.abandoned), an environment variable, a word the notes
// quote (a value such as processes), or a name of another project the notes
// cite (citedElsewhere).
func isCodeName(s string, goName *regexp.Regexp, c *codeNames) bool {
	base := strings.TrimSuffix(s, "()")
	parts := strings.Split(base, ".")
	switch {
	case citedElsewhere[base] || citedElsewhere[parts[0]]:
		return false
	case strings.HasSuffix(s, ".go"):
		return !strings.ContainsAny(s, " /")
	case !goName.MatchString(s):
		return false
	case base == strings.ToUpper(base) && strings.Contains(base, "_"):
		return false // an environment variable
	case strings.Contains(base, "_") && base == strings.ToLower(base):
		return false // a JSON name
	case len(parts) == 1:
		// A lone lower-case word may be a value or English; a name with
		// a capital, or called, is code.
		return base != strings.ToLower(base) || strings.HasSuffix(s, "()")
	}
	// A selector: checked when it starts with one of this module's packages
	// or types; an all-lower-case one only where its last part is some
	// package's top-level name (else a record's JSON path: target.dut).
	x, y := parts[len(parts)-2], parts[len(parts)-1]
	if base == strings.ToLower(base) && !c.isTopLevel(y) {
		return false
	}
	return c.packages[x] || c.members[x] != nil
}

// citedElsewhere are names of other projects the notes cite: the standard
// library's and fasthttp's, HdrHistogram's Java.
var citedElsewhere = map[string]bool{
	"bufio": true, "io": true, "tls": true, "x509": true, "net": true, "os": true, "http": true, "time": true,
	"fasthttp": true, "ConnectionState": true, "Hijack": true, "handshake_client.go": true,
	"verifyServerCertificate": true, "HistogramLogProcessor": true, "getValueAtPercentile": true,
	"plan.yaml": true, "conn": true,
}

// TestTransactionPath: the files docs/ARCHITECTURE.md gives as the way of one
// CPS transaction exist, and there are at most 12 of them (16 before the
// layout of issue 28, then 12; 10 once the record writes itself through
// bench/outfile and the recorder and the record share bench/metrics/run.go;
// 12, the honest count, once the list named the two files every transaction
// also passes through: profiles/tlsconfig.go checks every handshake and
// bench/engine/classify.go classes every failure).
func TestTransactionPath(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "\nThe path: ")
	path, _, _ := strings.Cut(after, "\n\n")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no "The path: " paragraph`)
	}
	files := strings.Split(strings.Join(strings.Fields(path), " "), " → ")
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the path names %s: %v", f, err)
		}
	}
	if most := 12; len(files) > most {
		t.Errorf("%d files on the way of one transaction, want at most %d: %s", len(files), most, strings.Join(files, ", "))
	}
	t.Logf("%d files: %s", len(files), strings.Join(files, ", "))
}
