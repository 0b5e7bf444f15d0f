package analysis

import (
	"math"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// BackendSecond is one second of a run beside the requests a pool of plain
// backends behind the device counted in the same interval (docs/BACKENDS.md).
type BackendSecond struct {
	T        int   `json:"t"`
	Backends int64 `json:"backends"`
	Engine   int64 `json:"tlsbench"` // the second's transactions and errors
	// Margin is what the edges explain: the transactions in flight at
	// them (the concurrency, × the pipeline) and the requests of half a slot at each
	// (the slot's width at the highest rate of the second and its
	// neighbours), and 1.
	Margin int64 `json:"margin"`
	Agrees bool  `json:"agrees"`
}

// BackendSeconds sets the backends' count of each of r's seconds
// (counts[i] for r.Series[i], over [started + t − 1 s, started + t s), its
// ends rounded to slot) beside the run's; nil when the lengths differ.
func BackendSeconds(r *metrics.Run, counts []int64, slot time.Duration) []BackendSecond {
	if r == nil || len(counts) != len(r.Series) {
		return nil
	}
	n := func(i int) int64 { return r.Series[i].Transactions + r.Series[i].Errors }
	inFlight := int64(r.Load.Concurrency)
	if r.Device != nil && r.Device.InFlight > 0 {
		inFlight = r.Device.InFlight // with throughput's pipeline
	}
	out := make([]BackendSecond, len(counts))
	for i, s := range r.Series {
		rate := n(i)
		if i > 0 {
			rate = max(rate, n(i-1))
		}
		if i+1 < len(r.Series) {
			rate = max(rate, n(i+1))
		}
		m := inFlight + int64(math.Ceil(float64(rate)*slot.Seconds())) + 1
		d := counts[i] - n(i)
		out[i] = BackendSecond{T: s.T, Backends: counts[i], Engine: n(i), Margin: m, Agrees: max(d, -d) <= m}
	}
	return out
}
