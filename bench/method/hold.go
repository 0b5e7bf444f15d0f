package method

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RFC 9411 §7.9's capacity search (docs/RFC9411.md): upward, doubling from
// explore.connections.min until a probe fails, then bisecting between the
// last pass and the first failure to holdPrecision. The generator's limits
// and explore.connections.max bound it: stopped at one, the value is "≥ N"
// (Cell.Bound), never the device's capacity.
const (
	holdPrecision  = 0.05
	holdMinSustain = 2 * time.Second // criterion d is judged on whole seconds
	holdNoCeiling  = 1 << 24
	// heldConnBytes is the CPS engine's memory per held connection
	// (docs/PERFORMANCE.md, "Memory per connection": 34 KB).
	heldConnBytes = 34_000
)

// generatorLimit is the most connections the generator holds at once and
// which limit that is: descriptors (RLIMIT_NOFILE less tlsconn's 64, per
// agent process), local ports (ip_local_port_range per source address to
// one destination) or memory (MemAvailable at heldConnBytes); 0 if none.
func (c *Campaign) generatorLimit() (int, string) {
	if c.HoldLimit != nil {
		return c.HoldLimit()
	}
	best, which := 0, ""
	take := func(n int, format string, args ...any) {
		if n > 0 && (best == 0 || n < best) {
			best, which = n, fmt.Sprintf(format, args...)
		}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < holdNoCeiling {
		procs := max(c.Agents, 1)
		take((int(lim.Cur)-64)*procs, "descriptors, RLIMIT_NOFILE %d (hard %d) less 64, × %d generator processes",
			lim.Cur, lim.Max, procs)
	}
	if f := procFields("/proc/sys/net/ipv4/ip_local_port_range", ""); len(f) == 2 {
		lo, _ := strconv.Atoi(f[0])
		hi, _ := strconv.Atoi(f[1])
		take((hi-lo+1)*max(c.Sources, 1), "local ports, %d per source address × %d source addresses", hi-lo+1,
			max(c.Sources, 1))
	}
	if f := procFields("/proc/meminfo", "MemAvailable:"); len(f) == 2 {
		kb, _ := strconv.Atoi(f[0])
		take(kb*1024/heldConnBytes, "memory, %.1f GB available at %d KB per held connection", float64(kb)*1024/1e9,
			heldConnBytes/1000)
	}
	return best, which
}

// procFields is the fields after prefix of file's first line with it.
func procFields(file, prefix string) []string {
	data, _ := os.ReadFile(file)
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// capacity is §7.9's search of cell by probe: the most connections held
// that passed (0: none), the probes by level, how the search went.
func (c *Campaign) capacity(cell *Cell, probe func(level int, kind string) (*Entry, error)) (int, map[int]*Entry,
	Search, error) {
	e := c.Plan.Method.Explore
	ceiling, why := holdNoCeiling, fmt.Sprintf("the search's ceiling, %d", holdNoCeiling)
	if n, which := c.generatorLimit(); n > 0 {
		ceiling, why = n, "the generator's limit: "+which
	}
	if e.Connections.Max > 0 && e.Connections.Max < ceiling {
		ceiling, why = e.Connections.Max, fmt.Sprintf("the search's ceiling, explore.connections.max %d",
			e.Connections.Max)
	}
	got, info := map[int]*Entry{}, Search{}
	at := func(level int) (bool, error) {
		p, err := probe(level, "")
		if err != nil {
			return false, err
		}
		got[level], info.Order = p, append(info.Order, level)
		return p.Accepted, nil
	}
	pass, fail := 0, 0
	start := max(e.Connections.Min, 1)
	if e.Connections.Min == 0 {
		start = e.Concurrency.Min
	}
	for level := min(start, ceiling); fail == 0; level = min(2*level, ceiling) {
		ok, err := at(level)
		if err != nil {
			return 0, got, info, err
		}
		if !ok {
			fail = level
		} else if pass = level; level == ceiling {
			break
		}
	}
	for pass > 0 && fail-pass > max(1, int(holdPrecision*float64(pass))) {
		mid := (pass + fail) / 2
		ok, err := at(mid)
		if err != nil {
			return 0, got, info, err
		}
		if ok {
			pass = mid
		} else {
			fail = mid
		}
	}
	info.Stop = c.holdStop(cell, got, pass, fail, why)
	return pass, got, info, nil
}

// holdStop says why the search stopped, and sets cell.Bound when not at the
// device: the ceiling (why) passed, or the generator failed (its CPU).
func (c *Campaign) holdStop(cell *Cell, got map[int]*Entry, pass, fail int, why string) string {
	per := ""
	if e := got[pass]; e != nil && e.Value > 0 && e.Run != nil && e.Run.Client.MaxRSSBytes > 0 {
		rss := float64(e.Run.Client.MaxRSSBytes) * float64(max(c.Agents, 1)) // an agent's peak × agents
		per = fmt.Sprintf("; the generator's peak RSS %.2f GB, %.1f KB per held connection", rss/1e9, rss/e.Value/1e3)
	}
	switch {
	case pass == 0:
		return fmt.Sprintf("the probe at %d connections failed", fail)
	case fail == 0:
		cell.Bound = why
		return fmt.Sprintf("%d connections held at %s%s", pass, why, per)
	}
	for _, r := range got[fail].Reasons {
		if strings.HasPrefix(r, "generator-bound") {
			cell.Bound = "the generator's limit: its CPU (" + r + ")"
			return fmt.Sprintf("%d connections held; %d failed at %s%s", pass, fail, cell.Bound, per)
		}
	}
	return fmt.Sprintf("%d connections held, %d not (%s): the device's capacity, bisected to %.0f%%%s", pass, fail,
		strings.Join(got[fail].Reasons, "; "), 100*holdPrecision, per)
}
