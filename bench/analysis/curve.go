package analysis

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// CurvePercentiles are the percentiles at which a latency curve is taken:
// evenly spread in -log10(1 − p/100) (0 at the minimum, 1 at p90, 2 at p99,
// … 5 at p99.999), the x axis HdrHistogram's plots use.
var CurvePercentiles = []float64{
	0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90,
	92.5, 95, 96.25, 97.5, 98, 98.75, 99,
	99.25, 99.5, 99.75, 99.8, 99.9,
	99.925, 99.95, 99.975, 99.98, 99.99,
	99.9925, 99.995, 99.9975, 99.998, 99.999,
}

// Quantile is a latency at a percentile.
type Quantile struct {
	Percentile float64 `json:"p"`
	US         int64   `json:"us"` // microseconds
}

// Quantiles returns h's value at each percentile of ps (0–100); 0 is the
// minimum, 100 the maximum. An empty histogram has no quantiles.
func Quantiles(h *hdr.Histogram, ps []float64) []Quantile {
	if h.TotalCount() == 0 {
		return nil
	}
	out := make([]Quantile, len(ps))
	for i, p := range ps {
		v := metrics.ValueAtPercentile(h, p)
		switch {
		case p <= 0:
			v = h.Min()
		case p >= 100:
			v = h.Max()
		}
		out[i] = Quantile{Percentile: p, US: v}
	}
	return out
}
