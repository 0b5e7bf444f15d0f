package metrics

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ValueAtPercentile returns h's value at percentile p (0–100) exactly as
// HdrHistogram's reference implementation (Java, AbstractHistogram's
// getValueAtPercentile) computes it: the count at the percentile is
// p × count ÷ 100, with p first lowered by one ulp and clamped to 0–100,
// rounded up, and at least 1; the value is the highest value equivalent to
// the bucket where the cumulative count reaches it (the lowest one for p =
// 0). An empty histogram gives 0.
//
// hdrhistogram-go's ValueAtQuantile rounds the count to the nearest instead
// (p × count ÷ 100 + 0.5, truncated): at 168 values, p99 is then the 166th
// value where the reference takes the 167th. Every percentile tlsbench
// prints or stores comes from this function.
func ValueAtPercentile(h *hdr.Histogram, p float64) int64 {
	n := h.TotalCount()
	if n <= 0 {
		return 0
	}
	if p == 0 {
		return h.ValueAtPercentile(0) // rank 1, lowest equivalent value
	}
	// The reference's count at p: ceil(clamp(nextDown(p), 0, 100) × n ÷ 100), at least 1.
	q := math.Min(math.Max(math.Nextafter(p, math.Inf(-1)), 0), 100)
	rank := max(int64(math.Ceil(q*float64(n)/100)), 1)
	// hdrhistogram-go finds the first bucket whose cumulative count reaches
	// trunc(q × n ÷ 100 + 0.5); with q = 100 × rank ÷ n that is rank
	// (the product is within an ulp or two of rank, far from the .5 that
	// would round it), and q > 0, so the highest equivalent value is taken.
	return h.ValueAtPercentile(100 * float64(rank) / float64(n))
}

// Mean returns h's mean as the reference implementation's getMean computes
// it: the sum over recorded buckets of the bucket's median equivalent value
// times its count, divided by the total count (hdrhistogram-go divides each
// term instead, which can differ in the last digits). 0 when h is empty.
func Mean(h *hdr.Histogram) float64 {
	n := h.TotalCount()
	if n <= 0 {
		return 0
	}
	var total float64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		// The median equivalent value: the bucket's lowest value plus
		// half its width, rounded down.
		median := b.From + (b.To-b.From+1)>>1
		total += float64(median) * float64(b.Count)
	}
	return total / float64(n)
}
