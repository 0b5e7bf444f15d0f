package method

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// value is the metric a run is judged by: CPS, or payload Gbps.
func value(r *metrics.Run) float64 {
	switch {
	case r.Engine == vocab.EngineCPS:
		return metrics.Value(r.CPS)
	case r.Engine == vocab.EngineThroughput:
		return metrics.Value(r.Gbps)
	}
	return 0
}

// Judge applies the acceptance rule a to a run and returns the reasons for
// rejecting it, none if it is accepted.
func Judge(a plan.Accept, r *metrics.Run) []string {
	reasons := judgeDevice(a, r)
	if pf := r.Preflight; pf != nil && !pf.OK {
		return reasons // no load was sent: nothing of the machine to judge
	}
	reasons = append(reasons, judgeDeviceCounts(a, r)...)
	reasons = append(reasons, judgeReconnects(a, r)...)
	return append(reasons, judgeMachine(a, r)...)
}

// judgeReconnects applies max_reconnect_share to a throughput run: not a
// refusal of the profile (a keep-alive limit is the device's configuration).
func judgeReconnects(a plan.Accept, r *metrics.Run) []string {
	n, req := metrics.Value(r.Reconnects), metrics.Value(r.Requests)
	limit := *cmp.Or(a.MaxReconnectShare, new(plan.DefaultMaxReconnectShare))
	if n == 0 || float64(n) <= float64(limit)*float64(req) {
		return nil
	}
	return []string{fmt.Sprintf("reconnections: the device closed kept-alive connections, and %d of %d requests (%.2f%%) "+
		"opened a new one (a handshake inside the bulk window), above max_reconnect_share %s",
		n, req, float64(n)/float64(max(req, 1))*100, limit)}
}

// judgeDevice gives the reasons that are the device's answer: the run's
// completion, its transactions, what was negotiated, errors and drops.
func judgeDevice(a plan.Accept, r *metrics.Run) []string {
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
	if n := r.Errors.ByClass[vocab.ClassMismatch]; n > 0 {
		reasons = append(reasons, fmt.Sprintf("negotiated parameters differ from the profile (mismatch ×%d: %s)",
			n, r.Errors.Examples[vocab.ClassMismatch]))
	}
	if n := r.Errors.ByClass[vocab.ClassResumed]; n > 0 {
		reasons = append(reasons, fmt.Sprintf("resumed sessions ×%d", n))
	}
	if x := r.Resumption; x != nil && r.Engine == vocab.EngineCPS && !a.SessionReuse {
		reasons = append(reasons, fmt.Sprintf("sessions resumed by design (SR=%g, %s): not a CPS (SR=0) value", x.Ratio,
			x.Mode))
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
			reasons = append(reasons, fmt.Sprintf("overloaded open loop: %d of %d scheduled starts dropped (%.1f%%), "+
				"above max_dropped_share %s; its latencies are lower bounds",
				l.Dropped, l.Scheduled, share*100, a.MaxDroppedShare))
		}
	}
	return append(reasons, judgeTCP(a, r)...)
}

// judgeMachine gives the reasons that are the generator's machine's: its
// own CPU, other processes' and the hypervisor's.
func judgeMachine(a plan.Accept, r *metrics.Run) []string {
	var reasons []string
	if why := judgeGenerator(a, r); why != "" {
		reasons = append(reasons, why)
	}
	return append(reasons, judgeNoise(a, r)...)
}

// judgeGenerator rejects a run whose generator used more of its cores than
// max_generator_cpu. A merged record is judged by its busiest agent: the
// mean would hide one saturated agent beside idle ones.
func judgeGenerator(a plan.Accept, r *metrics.Run) string {
	c, who := r.Client, ""
	for i := range r.Agents {
		if x := &r.Agents[i]; who == "" || x.Client.Utilization > c.Utilization {
			c, who = x.Client, x.Label()+": "
		}
	}
	if c.Utilization <= float64(a.MaxGeneratorCPU) {
		return ""
	}
	return fmt.Sprintf("generator-bound: %sits CPU was %.0f%% of %d cores, above %s",
		who, c.Utilization*100, c.Cores, a.MaxGeneratorCPU)
}

// judgeNoise applies max_other_cpu and max_steal; when either is set, a
// run whose machine noise was not measured is rejected.
func judgeNoise(a plan.Accept, r *metrics.Run) []string {
	if a.MaxOtherCPU <= 0 && a.MaxSteal <= 0 {
		return nil
	}
	if why := noiseUnmeasured(r); why != "" {
		return []string{fmt.Sprintf("machine noise not measured: %s (max_other_cpu %s, max_steal %s)",
			why, a.MaxOtherCPU, a.MaxSteal)}
	}
	var reasons []string
	n := r.Noise
	if a.MaxOtherCPU > 0 && n.OtherShare > float64(a.MaxOtherCPU) {
		reasons = append(reasons, fmt.Sprintf(
			"other processes used %.2f of the machine's CPU (%.2f of %d cores; max_other_cpu %s)",
			n.OtherShare, n.OtherCores, n.CPUs, a.MaxOtherCPU))
	}
	if a.MaxSteal > 0 && n.StealShare > float64(a.MaxSteal) {
		reasons = append(reasons, fmt.Sprintf("the hypervisor stole %.2f of the machine's CPU (max_steal %s)",
			n.StealShare, a.MaxSteal))
	}
	return reasons
}

// noiseUnmeasured says why the run's noise was not measured ("" when it
// was): a merged record's first agent without a measurement, named.
func noiseUnmeasured(r *metrics.Run) string {
	why := func(s string) string {
		return cmp.Or(s, "the record has no noise measurement")
	}
	for i := range r.Agents {
		if x := &r.Agents[i]; x.Noise == nil {
			return x.Label() + ": " + why(x.NoiseUnmeasured)
		}
	}
	if r.Noise == nil {
		return why(r.NoiseUnmeasured)
	}
	return ""
}

// classList formats error counts: "reset ×2, eof ×1", largest first.
func classList(m map[vocab.Class]int64) string {
	var parts []string
	for _, k := range byCount(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// byCount returns the error classes of m, the largest count first, then by
// name.
func byCount[K ~string](m map[K]int64) []K {
	ks := slices.Collect(maps.Keys(m))
	slices.SortFunc(ks, func(a, b K) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	return ks
}

// bestOf returns the best three of the accepted values (descending), the
// best, and the spread (best − third best) ÷ best.
func bestOf(values []float64) (top []float64, best, spread float64) {
	top = append([]float64(nil), values...)
	sort.Sort(sort.Reverse(sort.Float64Slice(top)))
	top = top[:min(len(top), 3)]
	if len(top) == 0 || top[0] == 0 {
		return top, 0, 0
	}
	return top, top[0], (top[0] - top[len(top)-1]) / top[0]
}
