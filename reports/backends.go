package reports

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// A campaign's pool of plain backends (the plan's backends:,
// docs/BACKENDS.md): what qualify wrote to backends.json, and the report's
// block: the requests per backend, their total against tlsbench's
// transactions and preflights, exact over each run and per second within
// the in-flight margin.

// BackendsFile is the pool's counts in a campaign's directory.
const BackendsFile = "backends.json"

// BackendCounts is backends.json (schema tlsbench/backends/v1).
type BackendCounts struct {
	Schema  string    `json:"schema"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// ResolutionMS is the width of the backends' time slots: a run's
	// seconds were counted with their ends rounded to it.
	ResolutionMS int64 `json:"resolution_ms"`
	// Backends are each backend's counts, then their total ("total").
	Backends []BackendStat `json:"backends"`
	// Runs are the backends' requests in each run's seconds.
	Runs []BackendRun `json:"runs"`
	// Seconds are the pool's requests by Unix second.
	Seconds []BackendUnixSecond `json:"seconds"`
}

// BackendStat is one backend's counts (or the total's).
type BackendStat struct {
	Name        string `json:"name"`
	Address     string `json:"address,omitempty"`
	Requests    int64  `json:"requests"`
	Connections int64  `json:"connections"`
}

// BackendRun is one run's seconds as the backends counted them: Seconds[i]
// is the record's series[i], over [Started + t − 1 s, Started + t s).
type BackendRun struct {
	Started time.Time `json:"started"`
	Seconds []int64   `json:"seconds"`
}

// BackendUnixSecond is one Unix second's requests at each backend.
type BackendUnixSecond struct {
	Unix     int64   `json:"unix"`
	Requests []int64 `json:"requests"`
	Total    int64   `json:"total"`
}

// DecodeBackends reads backends.json.
func DecodeBackends(data []byte) (*BackendCounts, error) {
	var c BackendCounts
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("not a campaign's backends.json: %v", err)
	}
	if len(c.Backends) == 0 {
		return nil, fmt.Errorf("backends.json without backends")
	}
	return &c, nil
}

// backendsInfo is a campaign's pool in the report.
type backendsInfo struct {
	Backends []BackendStat `json:"backends"`
	// Runs is how many records have the backends' counts; RunRequests
	// adds their device rows' backends' requests, Expected tlsbench's
	// (transactions and preflight), Exact counts the runs whose two are
	// equal.
	Runs        int   `json:"runs"`
	RunRequests int64 `json:"run_requests"`
	Expected    int64 `json:"expected"`
	Exact       int   `json:"exact"`
	// Seconds is how many of the runs' seconds were compared, Within how
	// many agree within their margin; Worst is the second furthest beyond
	// its margin (or nearest to it), in words.
	Seconds int    `json:"seconds"`
	Within  int    `json:"within"`
	Worst   string `json:"worst,omitempty"`
}

// backendsOf is the campaign's pool in the report; nil without one.
func backendsOf(c *Campaign) *backendsInfo {
	b := c.Backends
	if b == nil {
		return nil
	}
	info := &backendsInfo{Backends: b.Backends}
	byStart := map[time.Time][]int64{}
	for _, r := range b.Runs {
		byStart[r.Started.UTC()] = r.Seconds
	}
	worst := int64(-1 << 62)
	for _, e := range c.Ledger {
		row := runRequests(e.Run)
		if row == nil {
			continue
		}
		info.Runs++
		info.RunRequests += row.Device
		info.Expected += row.Expected
		if row.Diff == 0 {
			info.Exact++
		}
		slot := time.Duration(b.ResolutionMS) * time.Millisecond
		for _, s := range analysis.BackendSeconds(e.Run, byStart[e.Run.Started.UTC()], slot) {
			info.Seconds++
			if s.Agrees {
				info.Within++
			}
			if d := max(s.Backends-s.Engine, s.Engine-s.Backends) - s.Margin; d > worst {
				worst = d
				info.Worst = fmt.Sprintf("%s second %d: backends %d, tlsbench %d, margin %d", e.Key, s.T, s.Backends,
					s.Engine, s.Margin)
			}
		}
	}
	return info
}

// runRequests is the record's device row "run requests", if any.
func runRequests(r *metrics.Run) *struct{ Device, Expected, Diff int64 } {
	if r == nil {
		return nil
	}
	for _, row := range r.DeviceRows() {
		if row.Scope == "run" && row.Counter == "requests" {
			return &struct{ Device, Expected, Diff int64 }{row.Device, row.Expected, row.Diff}
		}
	}
	return nil
}

// backendsBlocks is the pool's block of each campaign that had one.
func backendsBlocks(r *Report) []block {
	var out []block
	for _, c := range r.Campaigns {
		b := c.Backends
		if b == nil {
			continue
		}
		out = append(out, heading{3, "Backends: " + c.Name})
		t := newTable("Backend", "Address", ">Requests", ">Connections")
		for _, s := range b.Backends {
			t.add(s.Name, dash(s.Address), strconv.FormatInt(s.Requests, 10), strconv.FormatInt(s.Connections, 10))
		}
		out = append(out, t, para(backendsText(b)))
	}
	return out
}

// backendsText is the pool's comparison with tlsbench's counts, in words.
func backendsText(b *backendsInfo) string {
	s := fmt.Sprintf("The plain backends behind the device (client TLS, server plain): %d runs' records have "+
		"their requests; over the runs they counted %d, tlsbench %d transactions and preflights (exact in %d of %d "+
		"runs: every transaction reached a backend). ", b.Runs, b.RunRequests, b.Expected, b.Exact, b.Runs)
	if b.Seconds > 0 {
		s += fmt.Sprintf("Per second, %d of %d seconds within the in-flight margin (the transactions in flight at "+
			"the second's edges and half a time slot's requests at each); nearest the margin or beyond it: %s. ",
			b.Within, b.Seconds, b.Worst)
	}
	return s + "The backends' total also has the preliminary phase's resumption probe, outside any run."
}
