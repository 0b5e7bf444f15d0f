package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDependencyRules keeps the package graph of docs/ARCHITECTURE.md
// honest: every non-standard import of a package must be allowed for it.
// Every package may import the typed vocabulary, bench/vocab (std only).
func TestDependencyRules(t *testing.T) {
	const mod = "github.com/tlsbench/tlsbench/"
	// The packages of gonum.org/v1/plot the reports' charts use.
	plot := []string{"gonum.org/v1/plot", "gonum.org/v1/plot/font", "gonum.org/v1/plot/plotter", "gonum.org/v1/plot/plotutil",
		"gonum.org/v1/plot/vg", "gonum.org/v1/plot/vg/draw", "gonum.org/v1/plot/vg/vgimg", "gonum.org/v1/plot/vg/vgsvg"}
	allowed := map[string][]string{
		"bench/vocab":             {},
		"cipher":                  {},
		"profiles":                {"cipher", "go.yaml.in/yaml/v3"},
		"bench/outfile":           {},
		"bench/sysnoise":          {},
		"bench/devcount":          {},
		"bench/metrics":           {"github.com/HdrHistogram/hdrhistogram-go", "bench/outfile"},
		"bench/metrics/hdrlog":    {"bench/metrics", "github.com/HdrHistogram/hdrhistogram-go"},
		"bench/analysis":          {"bench/metrics", "github.com/HdrHistogram/hdrhistogram-go"},
		"bench/engine":            {"bench/metrics"},
		"bench/engine/tlsconn":    {"bench/engine", "bench/metrics", "profiles", "cipher"},
		"bench/engine/httpreq":    {},
		"bench/engine/cps":        {"bench/engine", "bench/metrics", "bench/engine/tlsconn", "bench/engine/httpreq", "github.com/valyala/fasthttp"},
		"bench/engine/throughput": {"bench/engine", "bench/metrics", "bench/engine/tlsconn", "bench/engine/httpreq", "github.com/valyala/fasthttp"},
		"bench/target": {"profiles", "cipher", "bench/engine/httpreq", "github.com/valyala/fasthttp", "golang.org/x/net/http2",
			"github.com/quic-go/quic-go", "github.com/quic-go/quic-go/http3"},
		// The protocol registry; a protocol's package registers its engines'
		// operations (HTTP/1.1: cps and throughput, the reference target's body pattern).
		"bench/protocol":       {"bench/engine", "bench/metrics", "bench/engine/tlsconn", "bench/engine/httpreq"},
		"bench/protocol/http1": {"bench/protocol", "bench/engine/cps", "bench/engine/throughput", "bench/target"},
		"bench/protocol/http2": {"bench/protocol", "bench/engine", "bench/engine/tlsconn", "bench/engine/httpreq", "bench/metrics", "bench/engine/throughput", "bench/target", "golang.org/x/net/http2", "golang.org/x/net/http2/hpack"},
		"bench/protocol/http3": {"bench/protocol", "bench/engine", "bench/engine/tlsconn", "bench/engine/httpreq", "bench/metrics", "bench/engine/throughput", "bench/target", "profiles", "github.com/quic-go/quic-go", "github.com/quic-go/quic-go/http3",
			"github.com/quic-go/quic-go/qlog", "github.com/quic-go/quic-go/qlogwriter"}, // qlog: PTOs counted, nothing written
		// The one package that makes a run: the spec, the operation (through
		// the protocol registry), the engine.
		"bench/runner": {"bench/engine", "bench/metrics", "bench/sysnoise", "bench/engine/tlsconn", "bench/engine/httpreq", "bench/protocol", "bench/protocol/http1", "bench/protocol/http2", "bench/protocol/http3", "profiles", "bench/devcount"},
		// Plans are data: no run is made there.
		"bench/method/plan": {"profiles", "go.yaml.in/yaml/v3", "golang.org/x/net/idna", "bench/devcount", "bench/engine/httpreq"},
		"bench/stats":       {"gonum.org/v1/gonum/stat/distuv"},
		"bench/impact":      {"bench/runner", "bench/metrics", "bench/analysis", "bench/stats", "github.com/HdrHistogram/hdrhistogram-go"},
		// The method makes runs through bench/runner only: not the engine,
		// not the connections.
		"bench/method": {"bench/metrics", "bench/outfile", "bench/runner", "bench/method/plan", "profiles", "bench/analysis", "bench/protocol"},
		// Agents receive a runner.Spec and return records: no engine, no
		// connections, no profiles of their own. The manifests are plain
		// structs encoded with yaml: no k8s.io here.
		"bench/agent": {"bench/metrics", "bench/runner", "bench/method", "cipher", "go.yaml.in/yaml/v3", "golang.org/x/net/netutil"},
		"reports":     append([]string{"bench/metrics", "bench/analysis", "bench/metrics/hdrlog", "bench/method/plan", "bench/stats", "bench/impact", "bench/method"}, plot...),
		// The JSON Schemas (embedded files).
		"schemas": {},
		// The Prometheus exporter: reads a run's recorder (engine.Live) and
		// the reference target's counters at scrape time.
		"bench/promexp": {"bench/engine", "bench/metrics", "bench/target", "github.com/prometheus/client_golang/prometheus",
			"github.com/prometheus/client_golang/prometheus/collectors", "github.com/prometheus/client_golang/prometheus/promhttp",
			"github.com/prometheus/client_model/go", "github.com/HdrHistogram/hdrhistogram-go", "google.golang.org/protobuf/proto",
			"golang.org/x/net/netutil"},
	}
	// Test support: imported by tests, and by the cmd/ harnesses
	// (internal/testdut), never by a library package or the tlsbench
	// binary (TestBinaryHasNoTestSupport).
	support := map[string][]string{
		"bench/internal/rawtls":     {"cipher", "profiles"},
		"bench/internal/soak":       {}, // its test only
		"bench/internal/wirecap":    {},
		"bench/metrics/metricstest": {"bench/metrics", "github.com/HdrHistogram/hdrhistogram-go"},
		"bench/outfile/outfiletest": {},
		"reports/reporttest":        {"bench/metrics", "bench/method/plan", "bench/method", "profiles"},
		// Devices under test on loopback, for tests and cmd/ harnesses.
		"internal/testdut": {"bench/metrics", "bench/target", "cipher", "profiles"},
		// The schemas' validator.
		"schemas/schematest": {"schemas", "github.com/santhosh-tekuri/jsonschema/v6"},
	}
	for pkg, rules := range allowed {
		for _, a := range rules {
			if _, ok := support[a]; ok {
				t.Errorf("library package %s may import the test support %s", pkg, a)
			}
		}
	}
	for pkg, rules := range support {
		allowed[pkg] = rules
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		rel := strings.TrimPrefix(pkg, mod)
		rules, ok := allowed[rel]
		if !ok {
			if strings.HasPrefix(rel, "cmd/") {
				continue // composition roots may import anything
			}
			t.Errorf("package %s has no dependency rule", rel)
			continue
		}
		seen++
		for _, imp := range strings.Fields(imports) {
			if !strings.Contains(strings.Split(imp, "/")[0], ".") {
				continue // standard library
			}
			if imp == mod+"bench/vocab" {
				continue // the vocabulary, everyone's
			}
			ok := false
			for _, a := range rules {
				if imp == a || imp == mod+a {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s, which docs/ARCHITECTURE.md does not allow", rel, imp)
			}
		}
	}
	if seen != len(allowed) {
		t.Errorf("checked %d packages, have rules for %d", seen, len(allowed))
	}
}

// TestBinaryHasNoKubernetesDeps: the Kubernetes API types are for tests
// only (they check the manifests); the binary that runs in every agent
// carries none of them.
func TestBinaryHasNoKubernetesDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/") {
			t.Errorf("the tlsbench binary depends on %s", p)
		}
	}
}

// TestBinaryHasNoTestSupport: the tlsbench binary carries no test support
// (package testing, the *test packages, the internal harnesses, the schema
// validator).
func TestBinaryHasNoTestSupport(t *testing.T) {
	const mod = "github.com/tlsbench/tlsbench/"
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		rel, ours := strings.CutPrefix(p, mod)
		switch {
		case p == "testing", strings.HasPrefix(p, "github.com/santhosh-tekuri/jsonschema"),
			ours && (strings.HasSuffix(rel, "test") || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/")):
			t.Errorf("the tlsbench binary depends on %s", p)
		}
	}
}

// TestLibraryNamesNoFlags: the library does not know the CLI. No string
// literal of a library package (everything outside cmd/) names a flag,
// alone or inside a sentence: agents receive their run as data, errors are
// typed and the CLI words them with its flags (wording.go). The exceptions
// are another program's flags and the published documents' prose.
func TestLibraryNamesNoFlags(t *testing.T) {
	allowed := map[string]string{ // file: flag → why
		"bench/agent/kubernetes.go: --namespace":        "kubectl's own flag, which the Kubernetes launcher runs",
		"bench/agent/kubernetes.go: --ignore-not-found": "kubectl's own flag, which the Kubernetes launcher runs",
		"bench/agent/kubernetes.go: --wait":             "kubectl's own flag (--wait=false), which the Kubernetes launcher runs",
		"bench/agent/kubernetes.go: --no-headers":       "kubectl's own flag, which the Kubernetes launcher runs",
		"reports/report.go: --allow-differences":        "the report document states how its campaign was run (appendix prose, not an error)",

		// The PDF printer runs Chromium (report --format pdf).
		"reports/pdf.go: --headless":                      "Chromium's own flag",
		"reports/pdf.go: --disable-gpu":                   "Chromium's own flag",
		"reports/pdf.go: --no-first-run":                  "Chromium's own flag",
		"reports/pdf.go: --disable-background-networking": "Chromium's own flag",
		"reports/pdf.go: --disable-component-update":      "Chromium's own flag",
		"reports/pdf.go: --disable-sync":                  "Chromium's own flag",
		"reports/pdf.go: --user-data-dir":                 "Chromium's own flag",
		"reports/pdf.go: --print-to-pdf":                  "Chromium's own flag",
		"reports/pdf.go: --no-sandbox":                    "Chromium's own flag",
		"reports/pdf.go: --no-pdf-header-footer":          "Chromium's own flag",
		"reports/pdf.go: --version":                       "Chromium's own flag",
	}
	flag := regexp.MustCompile(`(?:^|[^-])(--[A-Za-z][-A-Za-z0-9]*)`)
	used := map[string]bool{}
	root := "../.."
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "cmd" || rel != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		if strings.HasSuffix(f.Name.Name, "test") || strings.Contains(rel, "internal/") || strings.HasSuffix(filepath.Dir(rel), "test") {
			return nil // test support
		}
		seen++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range flag.FindAllStringSubmatch(s, -1) {
				used[rel+": "+m[1]] = true
				if allowed[rel+": "+m[1]] == "" {
					t.Errorf("%s names the flag %s in %q: the library does not know the CLI", rel, m[1], s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 20 {
		t.Fatalf("checked %d library files", seen)
	}
	for k := range allowed {
		if !used[k] {
			t.Errorf("allowed %s is no longer named: remove it from the list", k)
		}
	}
}
