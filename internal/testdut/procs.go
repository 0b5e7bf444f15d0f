package testdut

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// Running waits up to limit for the processes pids to end (a zombie has
// ended: its parent may never reap it) and returns those still running.
func Running(pids []int, limit time.Duration) []int {
	deadline := time.Now().Add(limit)
	for {
		var live []int
		for _, p := range pids {
			if _, f, ok := ProcStat(strconv.Itoa(p)); ok && len(f) > 0 && f[0] != "Z" {
				live = append(live, p)
			}
		}
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Descendants lists the processes under pid (from /proc) with their
// command names.
func Descendants(pid int) map[int]string {
	parent := map[int]int{}
	comm := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if c, f, ok := ProcStat(e.Name()); ok && len(f) >= 2 {
			parent[p], _ = strconv.Atoi(f[1])
			comm[p] = c
		}
	}
	out := map[int]string{}
	for p := range parent {
		for q, n := parent[p], 0; q > 1 && n < len(parent); q, n = parent[q], n+1 {
			if q == pid {
				out[p] = comm[p]
				break
			}
		}
	}
	return out
}

// ProcStat reads /proc/PID/stat: the command name and the fields after it
// (state, ppid, …; utime and stime at 11 and 12, in ticks of USER_HZ); ok
// is false when it cannot be read.
func ProcStat(pid string) (comm string, fields []string, ok bool) {
	s, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", nil, false
	}
	i, j := bytes.IndexByte(s, '('), bytes.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", nil, false
	}
	return string(s[i+1 : j]), strings.Fields(string(s[j+1:])), true
}
