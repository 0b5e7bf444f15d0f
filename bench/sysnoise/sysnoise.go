// Package sysnoise measures the machine's own noise over an interval, from
// Linux's /proc: the CPU steal (time the hypervisor gave the machine's
// virtual CPUs to someone else), the CPU of this process (the generator),
// of listed device-under-test processes, and of everything else.
//
// Take a Sample at the interval's start and one at its end; Between turns
// the two into a Noise. Over the interval, with Δ the difference of the
// counters of /proc/stat's "cpu" line (all online CPUs, in USER_HZ ticks):
//
//	steal share  = Δsteal ÷ Δtotal
//	busy cores   = (Δuser+Δnice+Δsystem+Δirq+Δsoftirq) ÷ Δtotal × CPUs
//	other cores  = busy cores − generator cores − DUT cores (at least 0)
//	other share  = other cores ÷ CPUs
//
// where total also counts idle, iowait and steal (guest time is already in
// user and nice), CPUs is the number of "cpuN" lines, and a process's cores
// are its Δ(utime+stime) of /proc/PID/stat ÷ USER_HZ ÷ the interval's wall
// seconds. USER_HZ is taken as 100, the value of Linux's user ABI on every
// common architecture.
//
// A process's CPU in /proc/PID/stat is its own threads' (and that of its
// children once reaped): a DUT made of several processes (a master and its
// workers) must list each, or the unlisted ones count as other. A listed
// process that cannot be read at both ends (it exited, or never existed) is
// left out of the DUT's CPU, which then counts as other, and Noise.DUTs
// says how many were measured; DUTCPUs how many CPUs their threads may run on
// at the interval's end (/proc/PID/task/TID/status, Cpus_allowed_list).
//
// Where /proc/stat cannot be opened (elsewhere than Linux, or a /proc
// hidden from the process) Take returns an error that wraps ErrUnsupported
// and says why.
package sysnoise

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// statFile is the machine's CPU counters (a variable for tests).
var statFile = "/proc/stat"

// UserHZ is the clock-tick rate of /proc's CPU counters (USER_HZ).
const UserHZ = 100

// errUnsupported is wrapped by Take's error where /proc/stat cannot be
// opened.
var errUnsupported = errors.New("sysnoise: /proc/stat is not readable")

// stat is the machine-wide part of /proc/stat: the "cpu" line's ticks.
type stat struct {
	Total uint64 // every state but guest and guest_nice (counted in user and nice)
	Busy  uint64 // user + nice + system + irq + softirq
	Steal uint64
	CPUs  int // "cpuN" lines: the online CPUs
}

// parseStat reads the text of /proc/stat.
func parseStat(r io.Reader) (stat, error) {
	var s stat
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20) // the intr line is long
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				s.CPUs++
			}
			continue
		}
		// cpu user nice system idle iowait irq softirq steal guest guest_nice
		if len(f) < 5 {
			return stat{}, fmt.Errorf("sysnoise: /proc/stat: cpu line has %d fields", len(f)-1)
		}
		var v [8]uint64
		for i := 0; i < 8 && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return stat{}, fmt.Errorf("sysnoise: /proc/stat: cpu field %d: %w", i+1, err)
			}
			v[i] = n
		}
		s.Busy = v[0] + v[1] + v[2] + v[5] + v[6]
		s.Steal = v[7]
		s.Total = s.Busy + v[3] + v[4] + v[7]
		found = true
	}
	if err := sc.Err(); err != nil {
		return stat{}, fmt.Errorf("sysnoise: /proc/stat: %w", err)
	}
	if !found {
		return stat{}, errors.New("sysnoise: /proc/stat has no cpu line")
	}
	s.CPUs = cmp.Or(s.CPUs, 1)
	return s, nil
}

// ParseProcessStat returns utime + stime (ticks) from the text of
// /proc/PID/stat. The command name, field 2, is in parentheses and may hold
// spaces and parentheses: fields are counted after its last ")".
func ParseProcessStat(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("sysnoise: process stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("sysnoise: process stat: %d fields after the name", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("sysnoise: process stat: %w", err)
	}
	return u + s, nil
}

// Sample is the counters at one moment.
type Sample struct {
	At   time.Time
	Stat stat
	Self uint64         // this process's utime+stime, ticks
	DUT  map[int]uint64 // listed processes read, PID → utime+stime ticks
	CPUs int            // the CPUs their threads may run on (allowedCPUs)
}

// Take reads the counters now: /proc/stat, /proc/self/stat and
// /proc/PID/stat of each of pids (those that cannot be read are left out).
func Take(pids []int) (Sample, error) {
	f, err := os.Open(statFile)
	if err != nil {
		return Sample{}, fmt.Errorf("%w: %w", errUnsupported, err)
	}
	defer f.Close()
	st, err := parseStat(f)
	if err != nil {
		return Sample{}, err
	}
	self, err := processTicks("self")
	if err != nil {
		return Sample{}, err
	}
	s := Sample{At: time.Now(), Stat: st, Self: self, DUT: map[int]uint64{}}
	for _, pid := range pids {
		if t, err := processTicks(strconv.Itoa(pid)); err == nil {
			s.DUT[pid] = t
		}
	}
	s.CPUs = allowedCPUs(s.DUT)
	return s, nil
}

// allowedCPUs counts the CPUs the threads of processes pids may run on:
// the union of their Cpus_allowed_list ("0-3,8").
func allowedCPUs[T any](pids map[int]T) int {
	cpus := map[int]bool{}
	for pid := range pids {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			_, list, _ := strings.Cut(string(b), "Cpus_allowed_list:")
			list, _, _ = strings.Cut(list, "\n")
			for part := range strings.SplitSeq(list, ",") {
				var lo, hi int
				n, _ := fmt.Sscanf(part, "%d-%d", &lo, &hi)
				for c := lo; n > 0 && c <= max(lo, hi) && c-lo < 1<<16; c++ {
					cpus[c] = true
				}
			}
		}
	}
	return len(cpus)
}

func processTicks(pid string) (uint64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	return ParseProcessStat(b)
}

// noise is the machine's noise over an interval; see the package comment.
type noise struct {
	Seconds        float64 // the interval's wall time
	CPUs           int
	StealShare     float64
	BusyCores      float64
	GeneratorCores float64
	DUTCores       float64 // of the DUTs processes measured at both ends
	DUTs           int     // how many
	DUTCPUs        int     // the CPUs they may run on (Sample.CPUs at the end)
	OtherCores     float64
	OtherShare     float64
}

// Between returns the noise from a to b; false when the interval is empty
// or the counters did not advance (nothing to divide by).
func Between(a, b Sample) (noise, bool) {
	wall := b.At.Sub(a.At).Seconds()
	if wall <= 0 || b.Stat.Total <= a.Stat.Total || b.Stat.Busy < a.Stat.Busy || b.Stat.Steal < a.Stat.Steal {
		return noise{}, false
	}
	total := float64(b.Stat.Total - a.Stat.Total)
	cpus := b.Stat.CPUs
	n := noise{
		Seconds: wall, CPUs: cpus,
		StealShare: float64(b.Stat.Steal-a.Stat.Steal) / total,
		BusyCores:  float64(b.Stat.Busy-a.Stat.Busy) / total * float64(cpus),
	}
	cores := func(from, to uint64) float64 {
		if to < from {
			return 0
		}
		return float64(to-from) / UserHZ / wall
	}
	n.GeneratorCores = cores(a.Self, b.Self)
	for pid, t0 := range a.DUT {
		if t1, ok := b.DUT[pid]; ok && t1 >= t0 {
			n.DUTCores += cores(t0, t1)
			n.DUTs, n.DUTCPUs = n.DUTs+1, b.CPUs
		}
	}
	n.OtherCores = max(n.BusyCores-n.GeneratorCores-n.DUTCores, 0)
	n.OtherShare = n.OtherCores / float64(cpus)
	return n, true
}
