package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method/plan"
)

const describedPlan = `name: described
duts:
  - name: haproxy
    url: https://127.0.0.1:8443/
    describe:
      model: HAProxy on the generator's host
      version: HAProxy 2.6.12
      topology: client TLS, server plaintext
      config_file: haproxy.cfg
  - name: nginx
    url: https://127.0.0.1:9443/
    describe: {model: nginx, config: "ssl_protocols TLSv1.2;", config_file: nginx.conf}
generator:
  model: 2-vCPU VM
  version: Linux 6.1
tests:
  - {engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}
`

// TestDescribe: config_file is read relative to the plan's directory when
// config is empty, kept as it is when config is given (an excerpt of the
// named file, which need not exist), and the resolved plan round-trips.
func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	cfg := "frontend fe\n\tbind :8443 ssl crt lab.pem\n"
	if err := os.WriteFile(filepath.Join(dir, "haproxy.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "plan.yaml")
	p, err := plan.ParsePlan(file, []byte(describedPlan), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if d := p.DUTs[0].Describe; d.Config != cfg || d.Topology != "client TLS, server plaintext" || d.ConfigFile != "haproxy.cfg" {
		t.Errorf("haproxy's description %+v", d)
	}
	if d := p.DUTs[1].Describe; d.Config != "ssl_protocols TLSv1.2;" {
		t.Errorf("nginx's description %+v: its excerpt should stay", d)
	}
	if g := p.Generator; g == nil || g.Model != "2-vCPU VM" || g.Version != "Linux 6.1" {
		t.Errorf("generator %+v", g)
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The resolved plan, in another directory (the campaign's), has the
	// file's text and does not read it again.
	p2, err := plan.ParsePlan(filepath.Join(t.TempDir(), "plan.yaml"), data, profilesSet())
	if err != nil {
		t.Fatalf("resolved plan: %v\n%s", err, data)
	}
	if *p2.DUTs[0].Describe != *p.DUTs[0].Describe || *p2.Generator != *p.Generator {
		t.Errorf("round trip: %+v, want %+v", p2.DUTs[0].Describe, p.DUTs[0].Describe)
	}
}

// TestDescribeErrors: bad descriptions are one-line errors naming the
// field and its line.
func TestDescribeErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.cfg")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", plan.MaxConfigBytes+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin.cfg"), []byte("a\x00b"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name: x\ntests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\nduts:\n  - name: a\n    url: https://a/\n"
	for _, tc := range []struct{ yaml, want string }{
		{"    describe: {config_file: missing.cfg}\n", "plan.yaml:6: duts.0.describe.config_file missing.cfg: no such file or directory"},
		{"    describe: {config_file: big.cfg}\n", "is larger than 65536 bytes"},
		{"    describe: {config_file: bin.cfg}\n", "holds control characters"},
		{"    describe: {config_file: .}\n", "not a regular file"},
		{"    describe: {model: \"a\\nb\"}\n", "duts.0.describe.model must be one line"},
		{"    describe: {version: " + strings.Repeat("v", 201) + "}\n", "is 201 characters long; at most 200"},
		{"    describe: {colour: red}\n", "field colour is not a known field"},
		{"generator: {topology: \"\\t\"}\n", "generator.topology must be one line"},
	} {
		_, err := plan.ParsePlan(filepath.Join(dir, "plan.yaml"), []byte(base+tc.yaml), profilesSet())
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", tc.yaml, err, tc.want)
		}
	}
}
