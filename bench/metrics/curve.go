package metrics

import hdr "github.com/HdrHistogram/hdrhistogram-go"

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
		v := ValueAtPercentile(h, p)
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

// Curve decodes the phase's histogram and returns its latency curve at
// CurvePercentiles.
func (r *Run) Curve(phase string) ([]Quantile, error) {
	h, err := r.Histogram(phase)
	if err != nil {
		return nil, err
	}
	return Quantiles(h, CurvePercentiles), nil
}

// Gbps is the second's payload in gigabits (10^9 bits), its rate.
func (s Second) Gbps() float64 { return float64(s.PayloadBytes) * 8 / 1e9 }

// GroupOrKey is the published table's "ECDHE group / key" column: the
// group with its OpenSSL name, or "— (RSA 2048 key exchange)" when there is
// no key exchange group; "" when nothing was negotiated.
func (n Negotiated) GroupOrKey() string {
	switch n.Group {
	case "":
		return ""
	case "none":
		return "— (" + n.CertKey + " key exchange)"
	case "P-256":
		return "prime256v1 (P-256)"
	case "P-384":
		return "secp384r1 (P-384)"
	case "P-521":
		return "secp521r1 (P-521)"
	}
	return n.Group
}
