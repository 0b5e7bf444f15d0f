//go:build linux

package method_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/sysnoise"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// hogEnv makes the test binary a CPU hog for the duration it holds.
const hogEnv = "TLSBENCH_TEST_CPU_HOG"

func TestMain(m *testing.M) {
	if d, err := time.ParseDuration(os.Getenv(hogEnv)); err == nil {
		hog(d)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hog busy-loops on every CPU (at least four threads, to hold its share
// on a small machine busy with something else) for d.
func hog(d time.Duration) {
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range max(4, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				if n%4096 == 0 && time.Now().After(end) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// startHog starts a CPU hog process, another process than the generator
// and the DUT, bounded to 30 s and killed by the returned stop (and at the
// test's end, and with the test's process).
func startHog(t *testing.T) (stop func()) {
	stop, _ = startHogPID(t)
	return stop
}

func startHogPID(t *testing.T) (stop func(), pid int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hogEnv+"=30s")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	time.Sleep(100 * time.Millisecond) // spinning before the window starts
	return stop, cmd.Process.Pid
}

// processCPU is a process's CPU time so far (utime + stime).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	ticks, err := sysnoise.ParseProcessStat(b)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(ticks) * time.Second / sysnoise.UserHZ
}

// slowTarget is the in-process reference target whose responses wait 20
// ms: the generator and the target use little CPU, so that a hog's share
// of the machine is not lost to them.
func slowTarget(t *testing.T) (*target.Target, *profiles.Profile) {
	t.Helper()
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	return tg, p
}

// TestNoiseOtherCPU: a run made while a CPU hog (another process) spins
// records the hog as other processes' CPU: at least what the hog itself
// used (read from its /proc/PID/stat around the run, less 0.15 core for
// the different intervals and the ticks), at least half a core, and more
// than the quietest of the idle runs made around it on the same machine.
// The generator's own CPU (with the in-process target's) is not counted as
// other. The idle runs are compared, not bounded: the machine running the
// tests may be busy with something else (up to four idle runs are made
// until one is quieter than the hog's).
func TestNoiseOtherCPU(t *testing.T) {
	tg, p := slowTarget(t)
	run := func() *metrics.Run {
		spec := runner.Defaults(vocab.EngineCPS)
		spec.Profile, spec.Target = p.Name, metrics.Target{Address: tg.Listeners[0].Addr, ServerName: "localhost"}
		spec.Roots, spec.Host, spec.ExpectSize, spec.UserAgent = tg.CA.Pool(), "localhost", 1024, ""
		spec.Concurrency, spec.Duration, spec.Warmup, spec.IncludesTarget = 4, 1500*time.Millisecond, 200*time.Millisecond, true
		r, err := runner.Run(context.Background(), &spec)
		if err != nil {
			t.Fatal(err)
		}
		if r.Noise == nil {
			t.Fatal("no noise measured on Linux")
		}
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		n := r.Noise
		if n.CPUs < 1 || n.WindowS < 1 || n.WindowS > 3 || n.DUTCores != nil || n.StealShare < 0 || n.StealShare > 1 {
			t.Errorf("noise %+v", *n)
		}
		return r
	}
	show := func(what string, n *metrics.Noise) {
		t.Logf("%s other %.2f cores (%.2f of %d CPUs), generator %.2f cores, steal %.3f", what, n.OtherCores, n.OtherShare, n.CPUs, n.GeneratorCores, n.StealShare)
	}
	idle := []*metrics.Noise{run().Noise}
	stop, pid := startHogPID(t)
	cpu0, t0 := processCPU(t, pid), time.Now()
	hogged := run().Noise
	hogCores := (processCPU(t, pid) - cpu0).Seconds() / time.Since(t0).Seconds()
	stop()
	show("idle:", idle[0])
	show("hog: ", hogged)
	t.Logf("the hog itself used %.2f cores", hogCores)
	quietest := idle[0]
	for len(idle) < 4 && quietest.OtherCores >= hogged.OtherCores {
		n := run().Noise
		show("idle:", n)
		idle = append(idle, n)
		if n.OtherCores < quietest.OtherCores {
			quietest = n
		}
	}
	if n := hogged; n.OtherCores < 0.5 || n.OtherCores < hogCores-0.15 || n.OtherCores <= quietest.OtherCores {
		t.Errorf("with the hog (%.2f cores), other processes used %.2f cores; want at least 0.5, at least the hog's, and more than the quietest idle run's %.2f",
			hogCores, n.OtherCores, quietest.OtherCores)
	}
	if hogged.GeneratorCores <= 0 {
		t.Errorf("the generator's CPU was not measured: %+v", *hogged)
	}
}

// TestNoiseDUTProcess: the processes listed as the DUT's are measured
// apart, each over the window. Listed: the hog, stopped (SIGSTOP) once it
// has spun, which uses no CPU at all in the window; this process (the
// generator, so that the DUT's CPU has a known value); and a PID that
// exists nowhere. The DUT is then two processes whose CPU is the
// generator's, within a tick at each end of the window (sysnoise's
// TestTakeSelf): exact, however busy the machine (a running hog got less
// than the half core once asserted beside another `make test`).
func TestNoiseDUTProcess(t *testing.T) {
	tg, p := slowTarget(t)
	_, pid := startHogPID(t)
	stopped := false
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(string(b), ')'); stopped && i > 0 && strings.HasPrefix(string(b[i:]), ") T") {
			break
		}
		if ticks, err := sysnoise.ParseProcessStat(b); err == nil && ticks > 0 && !stopped {
			stopped = syscall.Kill(pid, syscall.SIGSTOP) == nil
		}
		if time.Now().After(end) {
			t.Fatal("the hog did not spin, then stop")
		}
	}
	hog := processCPU(t, pid)
	spec := runner.Defaults(vocab.EngineCPS)
	spec.Profile, spec.Target = p.Name, metrics.Target{Address: tg.Listeners[0].Addr, ServerName: "localhost"}
	spec.Roots, spec.Host, spec.ExpectSize, spec.UserAgent = tg.CA.Pool(), "localhost", 1024, ""
	spec.Concurrency, spec.Duration, spec.Warmup = 2, 2*time.Second, 100*time.Millisecond
	spec.DUTProcesses = []int{pid, os.Getpid(), 1 << 30}
	// This process spins beside the run, so that its CPU in the window is
	// many ticks even on a busy machine (the generator alone used 2 at a
	// load average of 40 on 2 cores): wrong by a process, the DUT's CPU
	// then differs from it by more than two.
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			if n%4096 == 0 {
				select {
				case <-done:
					return
				default:
				}
			}
		}
	}()
	r, err := runner.Run(context.Background(), &spec)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	if after := processCPU(t, pid); hog == 0 || after != hog {
		t.Fatalf("the hog used %s before it stopped, %s while stopped; want some, then none", hog, after-hog)
	}
	n := r.Noise
	if n == nil || n.DUTCores == nil {
		t.Fatalf("noise %+v: no DUT CPU", n)
	}
	cpu := func(cores float64) time.Duration { return time.Duration(cores * n.WindowS * float64(time.Second)) }
	dut, gen, tick := cpu(*n.DUTCores), cpu(n.GeneratorCores), time.Second/sysnoise.UserHZ
	t.Logf("DUT %.2f cores (%s of CPU) over %d processes; generator %.2f (%s); other %.2f", *n.DUTCores, dut,
		n.DUTProcesses, n.GeneratorCores, gen, n.OtherCores)
	if gen <= 3*tick {
		t.Logf("this process used %s in the window: too little to tell it from twice as much", gen)
	}
	if n.DUTProcesses != 2 || (dut-gen).Abs() > 2*tick+time.Millisecond {
		t.Errorf("noise %+v: want the two DUT processes that exist measured, their CPU the generator's %s "+
			"within two ticks", *n, gen)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}

// hogExec makes every other run (the 2nd, 4th, …) with a CPU hog spinning
// beside it, and keeps which.
type hogExec struct {
	*method.Local
	t      *testing.T
	n      int
	hogged map[int64]bool // by the run's start (Unix ns: the ledger's copy has no monotonic reading)
}

func (h *hogExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	h.n++
	if h.n%2 == 1 {
		return h.Local.Run(ctx, req)
	}
	stop := startHog(h.t)
	defer stop()
	r, err := h.Local.Run(ctx, req)
	if r != nil {
		h.hogged[r.Started.UnixNano()] = true
	}
	return r, err
}

// TestNoiseRejected: with accept.max_other_cpu, every run of a campaign
// made while a CPU hog spins is rejected, and the ledger says why. The
// idle runs are logged, not judged (the machine running the tests may be
// busy). The threshold is 30% of the machine: the hog spins on every CPU
// against a generator that mostly waits (20 ms responses).
func TestNoiseRejected(t *testing.T) {
	tg, p := slowTarget(t)
	m := plan.QuickMethod()
	m.Duration, m.Warmup, m.Cooldown = plan.Duration(time.Second), plan.Duration(100*time.Millisecond), 0
	m.Explore.Concurrency = plan.Range{Min: 1, Max: 2}
	m.Explore.ProbeDuration = plan.Duration(time.Second)
	m.Final = plan.Final{MinAccepted: 2, MaxRuns: 4, Tolerance: 0.5}
	m.Accept.MaxGeneratorCPU = 1
	m.Accept.MaxOtherCPU = 0.30
	pl := &plan.Plan{
		Name:   "noise",
		DUTs:   []plan.DUT{{Name: "ref", URL: plan.Reference}},
		Tests:  []plan.Test{{Engine: vocab.EngineCPS, Path: "/1k", Profiles: []string{p.Name}}},
		Method: m,
	}
	if err := pl.Check(profiles.Builtin()); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("https://localhost:%s/", tg.Listeners[0].Addr[strings.LastIndexByte(tg.Listeners[0].Addr, ':')+1:])
	local := &method.Local{UserAgent: "tlsbench-test", Reference: func(string) (string, *x509.CertPool, error) {
		return base, tg.CA.Pool(), nil
	}}
	hx := &hogExec{Local: local, t: t, hogged: map[int64]bool{}}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := campaign(t, pl, hx, dir).Run(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := method.ReadLedger(filepath.Join(dir, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	hogged := 0
	for _, e := range entries {
		if e.Run == nil {
			continue
		}
		why := strings.Join(e.Reasons, "; ")
		other := -1.0
		if e.Run.Noise != nil {
			other = e.Run.Noise.OtherShare
		}
		hog := hx.hogged[e.Run.Started.UnixNano()]
		t.Logf("%s c=%d hog %v: other %.2f of the machine, accepted %v %s", e.Phase, e.Level, hog, other, e.Accepted, why)
		if !hog {
			continue
		}
		hogged++
		if e.Accepted || !strings.Contains(why, "other processes used") || !strings.Contains(why, "max_other_cpu 30%") {
			t.Errorf("a run made during the hog (other %.2f of the machine) is not rejected for it: accepted %v, reasons %q", other, e.Accepted, e.Reasons)
		}
	}
	if hogged == 0 {
		t.Fatal("no run of the campaign was made during the hog")
	}
}
