package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRules keeps the package graph of docs/ARCHITECTURE.md
// honest: every non-standard import of a package must be allowed for it.
func TestDependencyRules(t *testing.T) {
	const mod = "github.com/tlsbench/tlsbench/"
	// The packages of gonum.org/v1/plot the reports' charts use.
	plot := []string{"gonum.org/v1/plot", "gonum.org/v1/plot/font", "gonum.org/v1/plot/plotter", "gonum.org/v1/plot/plotutil",
		"gonum.org/v1/plot/vg", "gonum.org/v1/plot/vg/draw", "gonum.org/v1/plot/vg/vgimg", "gonum.org/v1/plot/vg/vgsvg"}
	allowed := map[string][]string{
		"cipher":           {},
		"profiles":         {"cipher", "go.yaml.in/yaml/v3"},
		"bench/metrics":    {"github.com/HdrHistogram/hdrhistogram-go"},
		"bench":            {"bench/metrics"},
		"bench/tlsconn":    {"bench", "bench/metrics", "profiles", "cipher"},
		"bench/httpreq":    {},
		"bench/cps":        {"bench", "bench/metrics", "bench/tlsconn", "bench/httpreq", "github.com/valyala/fasthttp"},
		"bench/throughput": {"bench", "bench/metrics", "bench/tlsconn", "bench/httpreq", "github.com/valyala/fasthttp"},
		"bench/job":        {"bench", "bench/metrics", "bench/tlsconn", "bench/httpreq", "bench/cps", "bench/throughput"},
		"bench/target":     {"profiles", "cipher", "github.com/valyala/fasthttp"},
		"reports":          append([]string{"bench/metrics", "bench/method"}, plot...),
		"bench/method":     {"bench", "bench/metrics", "bench/job", "bench/tlsconn", "bench/httpreq", "profiles", "go.yaml.in/yaml/v3", "gonum.org/v1/gonum/stat/distuv", "golang.org/x/net/idna"},
		// The manifests are plain structs encoded with yaml: no k8s.io here.
		"bench/agent": {"bench/metrics", "bench/job", "bench/method", "bench", "bench/tlsconn", "profiles", "go.yaml.in/yaml/v3"},
		// Test support, imported by tests only.
		"bench/internal/haproxytest": {"bench/metrics", "cipher"},
		"bench/internal/rawtls":      {"cipher", "profiles"},
		"bench/internal/wirecap":     {},
		"reports/reporttest":         {"bench/metrics", "bench/method", "profiles"},
		// The JSON Schemas (embedded files), and their validator for tests.
		"schemas":            {},
		"schemas/schematest": {"schemas", "github.com/santhosh-tekuri/jsonschema/v6"},
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
