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
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
			if err != nil {
				continue
			}
			// pid (comm) state …
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
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
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:]) // state ppid …
		if len(f) < 2 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		comm[p] = s[i+1 : j]
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
