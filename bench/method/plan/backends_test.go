package plan_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method/plan"
)

// TestPlanBackends: a plan's backends are read and checked: their count,
// the first address and the port range, the admin address, and no DUT
// counters beside them.
func TestPlanBackends(t *testing.T) {
	const base = "name: x\nduts: [{name: a, url: 'https://a/'%s}]\n" +
		"tests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n"
	read := func(dut, backends string) (*plan.Plan, error) {
		return plan.ParsePlan("p.yaml", []byte(strings.Replace(base, "%s", dut, 1)+backends), profilesSet())
	}
	p, err := read("", "backends: {count: 4, listen: '127.0.0.1:18080', admin: '127.0.0.1:18079'}\n")
	if err != nil {
		t.Fatal(err)
	}
	b := p.Backends
	host, port, err := b.Addr()
	if b.Count != 4 || host != "127.0.0.1" || port != 18080 || err != nil || b.AdminAddr() != "127.0.0.1:18079" {
		t.Errorf("backends %+v: %s %d %v", b, host, port, err)
	}
	data, err := p.Marshal()
	if err != nil || !strings.Contains(string(data), "backends:") {
		t.Errorf("marshalled without its backends: %v\n%s", err, data)
	}
	if p, err = read("", "backends: {count: 1}\n"); err != nil || p.Backends.AdminAddr() != "127.0.0.1:0" {
		t.Errorf("defaults: %v", err)
	}
	for _, tc := range []struct{ dut, backends, want string }{
		{"", "backends: {count: 0}\n", "count 0 is not 1-65535"},
		{"", "backends: {count: 70000}\n", "count 70000"},
		{"", "backends: {count: 4, listen: '127.0.0.1:65534'}\n", "would end at 65537"},
		{"", "backends: {count: 4, listen: 'backends:80'}\n", "not an IP address"},
		{"", "backends: {count: 4, listen: '127.0.0.1'}\n", "want IP:PORT"},
		{"", "backends: {count: 4, admin: '127.0.0.1:99999'}\n", "admin"},
		{"", "backends: {count: 4, weight: 2}\n", "weight"},
		{", counters: {kind: nginx, url: 'http://127.0.0.1:1/s'}", "backends: {count: 4}\n", "remove one of the two"},
	} {
		if _, err := read(tc.dut, tc.backends); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", strings.TrimSpace(tc.backends), err, tc.want)
		}
	}
}
