package analysis

import (
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// CPUPerGB is the generator's CPU seconds per GB (10^9 bytes) of payload
// received over the whole run (the CPU is measured over the whole run too).
func CPUPerGB(r *metrics.Run) float64 {
	if r.Bytes.Payload == 0 || r.DurationS == 0 {
		return 0
	}
	// Scale the window's payload to the whole run's wall time.
	wall := r.Ended.Sub(r.Started).Seconds()
	gb := float64(r.Bytes.Payload) / 1e9 * wall / r.DurationS
	return r.Client.CPUSeconds / gb
}

// Point is one second of a series.
type Point struct {
	T float64 `json:"t"` // seconds since the run started
	V float64 `json:"v"`
}

// Series is the run's value of each whole second — transactions (CPS) or
// Gbps (throughput) — by completion time, warm-up included. A partial
// second (the drain's, after the last whole one) is no rate and is left
// out, as is a second repeated by records made before seconds were marked
// partial.
func Series(r *metrics.Run) []Point {
	var out []Point
	for i, s := range r.Series {
		if s.Partial || i > 0 && s.T <= r.Series[i-1].T {
			continue
		}
		v := float64(s.Transactions)
		if r.Engine == "throughput" {
			v = s.Gbps()
		}
		out = append(out, Point{T: float64(s.T), V: v})
	}
	return out
}

// Curves are the latency curves (at CurvePercentiles) of the phases of r
// that have a histogram, and an empty curve left out.
func Curves(r *metrics.Run, phases ...vocab.Phase) (map[string][]Quantile, error) {
	out := map[string][]Quantile{}
	for _, phase := range phases {
		if _, ok := r.Histograms[phase.String()]; !ok {
			continue
		}
		h, err := r.Histogram(phase.String())
		if err != nil {
			return nil, err
		}
		if q := Quantiles(h, CurvePercentiles); len(q) > 0 {
			out[phase.String()] = q
		}
	}
	return out, nil
}
