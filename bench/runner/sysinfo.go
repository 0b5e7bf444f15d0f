package runner

import (
	"bufio"
	"cmp"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/sysnoise"
)

// HostInfo describes this machine.
func HostInfo() metrics.Host {
	h := metrics.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return h
}

// generatorBoundAt is the share of its cores above which a run is marked
// generator-bound.
const generatorBoundAt = 0.90

// cpuMeter measures this process's CPU time over an interval.
type cpuMeter struct {
	wall      time.Time
	user, sys time.Duration
}

func rusage() (user, sys time.Duration, maxRSS int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Maxrss * 1024
}

// startCPU starts measuring.
func startCPU() cpuMeter {
	u, s, _ := rusage()
	return cpuMeter{wall: time.Now(), user: u, sys: s}
}

// Stop returns the CPU used since StartCPU; txns is the number of completed
// transactions, for the per-transaction cost. Utilization is relative to
// GOMAXPROCS, the cores the generator may use.
func (m cpuMeter) Stop(txns int64) metrics.Client {
	u, s, rss := rusage()
	wall := time.Since(m.wall)
	c := metrics.Client{
		UserS: (u - m.user).Seconds(), SysS: (s - m.sys).Seconds(),
		MaxRSSBytes: rss, Cores: runtime.GOMAXPROCS(0),
	}
	c.CPUSeconds = c.UserS + c.SysS
	if wall > 0 {
		c.Utilization = c.CPUSeconds / (wall.Seconds() * float64(c.Cores))
	}
	if txns > 0 {
		c.CPUPerTxnUS = c.CPUSeconds * 1e6 / float64(txns)
	}
	c.GeneratorBound = c.Utilization > generatorBoundAt
	return c
}

// noiseMeter samples the machine's noise (bench/sysnoise) at the steady
// window's start and end (engine.Config.AtWindow calls at from one
// goroutine, and engine.Run returns after its last call).
type noiseMeter struct {
	pids       []int
	start, end sysnoise.Sample
	ok         int   // samples taken
	err        error // the first sample's error
}

func (m *noiseMeter) at(end bool) {
	s, err := sysnoise.Take(m.pids)
	switch {
	case err != nil: // not Linux, or no /proc: no noise, and why
		m.err = cmp.Or(m.err, err)
	case !end:
		m.start, m.ok = s, 1
	case m.ok == 1:
		m.end, m.ok = s, 2
	}
}

// result is the record's noise; nil without both samples, and then why
// (Run.NoiseUnmeasured).
func (m *noiseMeter) result() (*metrics.Noise, string) {
	switch {
	case m.err != nil:
		return nil, m.err.Error()
	case m.ok != 2:
		return nil, "the steady window was not reached"
	}
	n, ok := sysnoise.Between(m.start, m.end)
	if !ok {
		return nil, "the CPU counters did not advance over the window"
	}
	r := &metrics.Noise{
		WindowS: n.Seconds, CPUs: n.CPUs, StealShare: n.StealShare,
		OtherCores: n.OtherCores, OtherShare: min(n.OtherShare, 1), GeneratorCores: n.GeneratorCores,
	}
	if n.DUTs > 0 {
		d := n.DUTCores
		r.DUTCores, r.DUTProcesses, r.DUTCPUs = &d, n.DUTs, n.DUTCPUs
	}
	return r, ""
}
