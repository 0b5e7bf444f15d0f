package method_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestHAProxyUnsupportedProfile: a real device (HAProxy) that serves one of
// the two profiles of the plan. The profile it refuses is "not supported"
// with the server's answer; the other is measured; the campaign completes.
func TestHAProxyUnsupportedProfile(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	rsa := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "RSA", Bits: 2048})
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{{Name: "rsa2048", Cert: rsa, Ciphers: "AES128-GCM-SHA256"}})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(h.Addr("rsa2048"), ":")
	m := plan.QuickMethod()
	m.Duration, m.Warmup = plan.Duration(300*time.Millisecond), 0
	m.Explore.Concurrency = plan.Range{Min: 1, Max: 2}
	m.Explore.ProbeDuration = plan.Duration(150 * time.Millisecond)
	m.Final = plan.Final{MinAccepted: 1, MaxRuns: 2, Tolerance: 0.5}
	m.Accept.MaxGeneratorCPU = 1
	p := &plan.Plan{
		Name:   "haproxy",
		DUTs:   []plan.DUT{{Name: "haproxy", URL: "https://localhost:" + port + "/", CACert: caFile}},
		Tests:  []plan.Test{{Engine: "cps", Path: "/1k", Profiles: []string{"ecdhe-ecdsa-aes128-sha256-p256", "rsa2048-aes128-gcm-sha256"}}},
		Method: m,
	}
	if err := p.Check(profiles.Builtin()); err != nil {
		t.Fatal(err)
	}
	c := campaign(t, p, &method.Local{UserAgent: "tlsbench-test"}, t.TempDir())
	var prelim []method.Prelim
	c.Preliminary = func(ps []method.Prelim) { prelim = ps }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(prelim) != 2 || prelim[0].Unsupported == "" || prelim[1].Unsupported != "" || prelim[1].Negotiated.OpenSSL != "AES128-GCM-SHA256" {
		t.Fatalf("preliminary %+v", prelim)
	}
	if !strings.Contains(prelim[0].Unsupported, "handshake") {
		t.Errorf("refusal %q does not give the server's answer", prelim[0].Unsupported)
	}
	if len(s.Rows) != 2 || s.Rows[0].Unsupported == "" || s.Rows[0].CPS != nil || s.Rows[1].CPS == nil || *s.Rows[1].CPS <= 0 {
		t.Errorf("rows %+v", s.Rows)
	}
	t.Logf("refused: %s; served: %.0f CPS", prelim[0].Unsupported, *s.Rows[1].CPS)
}
