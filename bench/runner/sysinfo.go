package runner

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
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

// GeneratorBoundAt is the share of its cores above which a run is marked
// generator-bound.
const GeneratorBoundAt = 0.90

// CPUMeter measures this process's CPU time over an interval.
type CPUMeter struct {
	wall      time.Time
	user, sys time.Duration
}

func rusage() (user, sys time.Duration, maxRSS int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Maxrss * 1024
}

// StartCPU starts measuring.
func StartCPU() CPUMeter {
	u, s, _ := rusage()
	return CPUMeter{wall: time.Now(), user: u, sys: s}
}

// Stop returns the CPU used since StartCPU; txns is the number of completed
// transactions, for the per-transaction cost. Utilization is relative to
// GOMAXPROCS, the cores the generator may use.
func (m CPUMeter) Stop(txns int64) metrics.Client {
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
	c.GeneratorBound = c.Utilization > GeneratorBoundAt
	return c
}
