package method_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestDUTProcesses: a real nginx on this machine, named in the plan by its
// pid file (its master and, below it, its worker) or by its process name,
// is found when each run starts, and the run's noise measures its CPU as
// the DUT's — nginx made every handshake of the run, so it used some —
// apart from the other processes'. Without the field, the run has no DUT
// CPU.
func TestDUTProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes are found in /proc")
	}
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, Workers: 1, Servers: []testdut.NginxServer{
		{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1"},
	}})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "nginx.pid")
	// nginx writes its pid file once it runs; its worker follows.
	var found []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if found = method.FindProcesses([]string{pidFile}); len(found) >= 2 {
			break
		}
	}
	if len(found) != 2 || !slices.Contains(found, n.Pid()) {
		t.Fatalf("pid file: found %v, want nginx's master %d and its one worker", found, n.Pid())
	}
	if byName := method.FindProcesses([]string{"nginx"}); !slices.Contains(byName, found[0]) || !slices.Contains(byName, found[1]) {
		t.Errorf("by name: found %v, want at least %v (other nginx may run on this machine)", byName, found)
	}
	if none := method.FindProcesses([]string{"no-such-process", filepath.Join(dir, "missing.pid")}); len(none) != 0 {
		t.Errorf("found %v for names that run nowhere", none)
	}
	_, port, _ := strings.Cut(n.Addrs[0], ":")
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	run := func(procs []string) *method.Request {
		return &method.Request{Phase: vocab.Final, Profile: p, Concurrency: 4, Duration: time.Second, Warmup: 100 * time.Millisecond, ExpectSize: -1,
			DUT:  plan.DUT{Name: "nginx", URL: "https://localhost:" + port + "/", CACert: caFile, Processes: procs},
			Test: plan.Test{Engine: vocab.EngineCPS, Path: "/1k"}}
	}
	local := &method.Local{UserAgent: "tlsbench-test"}
	for _, procs := range [][]string{{pidFile}, {"nginx"}} {
		r, err := local.Run(context.Background(), *run(procs))
		if err != nil {
			t.Fatal(err)
		}
		nz := r.Noise
		if nz == nil || nz.DUTCores == nil {
			t.Fatalf("processes %v: noise %+v, want nginx's CPU", procs, nz)
		}
		t.Logf("processes %v: %.0f CPS; DUT %.3f cores over %d processes, other %.2f cores, generator %.2f", procs, *r.CPS, *nz.DUTCores, nz.DUTProcesses, nz.OtherCores, nz.GeneratorCores)
		if nz.DUTProcesses < 2 || *nz.DUTCores <= 0 || r.Transactions == 0 {
			t.Errorf("processes %v: DUT %.3f cores over %d processes after %d handshakes, want nginx's master and worker with some CPU",
				procs, *nz.DUTCores, nz.DUTProcesses, r.Transactions)
		}
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
	}
	r, err := local.Run(context.Background(), *run(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r.Noise != nil && r.Noise.DUTCores != nil {
		t.Errorf("no processes named: DUT CPU %v measured", *r.Noise.DUTCores)
	}
}
