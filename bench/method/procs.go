package method

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procDir is where processes are looked up (Linux's /proc).
var procDir = "/proc"

// FindProcesses finds the PIDs of a DUT's processes (plan.DUT.Processes)
// now: those named (/proc/PID/comm) and, for a pid file (an entry with a
// slash), its process and descendants (nginx's workers). This process is
// never one of them. Without /proc (not Linux) it finds none.
func FindProcesses(entries []string) []int {
	if len(entries) == 0 {
		return nil
	}
	ds, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	self := os.Getpid()
	names := map[string]bool{}
	var roots []int
	for _, e := range entries {
		if !strings.Contains(e, "/") {
			names[e] = true
			continue
		}
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			roots = append(roots, pid)
		}
	}
	parent := map[int]int{}
	found := map[int]bool{}
	for _, d := range ds {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(procDir, d.Name(), "stat"))
		if err != nil {
			continue // gone
		}
		comm, ppid, ok := parseStat(stat)
		if !ok {
			continue
		}
		parent[pid] = ppid
		if names[comm] {
			found[pid] = true
		}
	}
	for _, r := range roots {
		if _, alive := parent[r]; alive {
			found[r] = true
		}
	}
	// The descendants of the pid files' processes (a bounded walk: a
	// process's ancestry is at most as long as the process table).
	if len(roots) > 0 {
		for pid := range parent {
			for p, n := parent[pid], 0; p > 0 && n < len(parent); p, n = parent[p], n+1 {
				if slices.Contains(roots, p) {
					found[pid] = true
					break
				}
			}
		}
	}
	delete(found, self)
	return slices.Sorted(maps.Keys(found))
}

// parseStat reads the name and the parent's PID from /proc/PID/stat: "pid
// (comm) state ppid …", where comm may hold spaces and parentheses.
func parseStat(stat []byte) (comm string, ppid int, ok bool) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return "", 0, false
	}
	return string(stat[open+1 : end]), ppid, true
}
