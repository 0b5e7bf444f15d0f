package method

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// Value is the metric a run is judged by: CPS, or payload Gbps.
func Value(r *metrics.Run) float64 {
	switch {
	case r.Engine == runner.CPS && r.CPSResult != nil:
		return r.CPS
	case r.Engine == runner.Throughput && r.ThroughputResult != nil:
		return r.Gbps
	}
	return 0
}

// Judge applies the acceptance rule to a run (a probe or a full run) and
// returns the reasons for rejecting it, none if it is accepted.
func (a Accept) Judge(r *metrics.Run) []string {
	if pf := r.Preflight; pf != nil && !pf.OK {
		return []string{r.Failed() + "; no load was sent"}
	}
	var reasons []string
	if r.Load.Aborted != "" {
		reasons = append(reasons, r.Failed())
	}
	if !r.Complete {
		reasons = append(reasons, "incomplete: the run was interrupted before its duration")
	}
	if r.Transactions == 0 {
		reasons = append(reasons, "no successful transaction")
	}
	if n := r.Errors.ByClass["mismatch"]; n > 0 {
		reasons = append(reasons, fmt.Sprintf("negotiated parameters differ from the profile (mismatch ×%d: %s)", n, r.Errors.Examples["mismatch"]))
	}
	if n := r.Errors.ByClass["resumed"]; n > 0 {
		reasons = append(reasons, fmt.Sprintf("resumed sessions ×%d", n))
	}
	if e := r.Errors.Total; e > 0 {
		rate := float64(e) / float64(e+r.Transactions)
		if e > a.MaxErrors && rate > float64(a.MaxErrorRate) {
			reasons = append(reasons, fmt.Sprintf("errors: %d (%.3f%%) above the tolerance (%d, %s): %s",
				e, rate*100, a.MaxErrors, a.MaxErrorRate, classList(r.Errors.ByClass)))
		}
	}
	if l := r.Load; l.Mode == "open" && l.Dropped > 0 {
		share := l.DroppedShare
		if l.Scheduled > 0 {
			share = float64(l.Dropped) / float64(l.Scheduled)
		}
		if share > float64(a.MaxDroppedShare) || l.Scheduled <= 0 {
			reasons = append(reasons, fmt.Sprintf("overloaded open loop: %d of %d scheduled starts dropped (%.1f%%), above max_dropped_share %s; its latencies are lower bounds",
				l.Dropped, l.Scheduled, share*100, a.MaxDroppedShare))
		}
	}
	if u := r.Client.Utilization; u > float64(a.MaxGeneratorCPU) {
		reasons = append(reasons, fmt.Sprintf("generator-bound: its CPU was %.0f%% of %d cores, above %s", u*100, r.Client.Cores, a.MaxGeneratorCPU))
	}
	return reasons
}

// classList formats error counts: "reset ×2, eof ×1", largest first.
func classList(m map[string]int64) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// BestOf returns the best three of the accepted values (descending), the
// best, and the spread (best − third best) ÷ best.
func BestOf(values []float64) (top []float64, best, spread float64) {
	top = append([]float64(nil), values...)
	sort.Sort(sort.Reverse(sort.Float64Slice(top)))
	if len(top) > 3 {
		top = top[:3]
	}
	if len(top) == 0 || top[0] == 0 {
		return top, 0, 0
	}
	return top, top[0], (top[0] - top[len(top)-1]) / top[0]
}
