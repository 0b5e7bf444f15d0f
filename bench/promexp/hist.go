package promexp

import (
	"maps"
	"math"
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// ClassicBuckets are the upper bounds (seconds) of the classic buckets of
// every latency histogram, for scrapers without native histograms: a TLS
// transaction's phases from 100 µs to a minute, about 2.5× apart.
var ClassicBuckets = []float64{
	0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1, 2.5, 5,
	10, 30, 60,
}

// nativeSchema is the native histograms' resolution: schema 3, buckets
// 2^(1/8) ≈ 1.09 apart (client_golang's NativeHistogramBucketFactor 1.1).
const nativeSchema = 3

// nativeFactor is the ratio of consecutive native bucket bounds.
var nativeFactor = math.Exp2(1.0 / (1 << nativeSchema))

// usPerSecond converts the recorder's microseconds.
const usPerSecond = 1e6

// histogram is a latency histogram of the recorder (µs), exposed as a
// Prometheus histogram in seconds with both classic buckets and native
// (sparse, exponential) ones, so that a Prometheus with native histograms
// enabled gets those, and any other scraper the classic buckets.
type histogram struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      *dto.Histogram
}

// newHistogram converts h. Each recorded value counts at its HDR bucket's
// highest equivalent value (the value the record's percentiles report), so a
// classic bucket's count is exact for its bound up to HDR's 3 significant
// digits.
func newHistogram(desc *prometheus.Desc, h *hdr.Histogram, labelValues ...string) prometheus.Metric {
	out := &dto.Histogram{
		Schema:        proto.Int32(nativeSchema),
		ZeroThreshold: proto.Float64(0),
	}
	var count uint64
	var sum float64
	classic := make([]uint64, len(ClassicBuckets))
	native := map[int]int64{}
	var zero uint64
	if h != nil && h.TotalCount() > 0 {
		// The bars come in ascending order: the native bucket and the
		// classic one only move up (no logarithm per bar).
		ni, nub := 0, -1.0 // the current native bucket and its upper bound
		ci := 0
		eachBar(h, func(b hdr.Bar) {
			n := uint64(b.Count)
			v := float64(b.To) / usPerSecond
			count += n
			sum += float64(b.Count) * (float64(b.From+b.To) / 2 / usPerSecond)
			for ci < len(ClassicBuckets) && v > ClassicBuckets[ci] {
				ci++
			}
			if ci < len(classic) {
				classic[ci] += n
			}
			if v <= 0 {
				zero += n
				return
			}
			if nub < 0 || v > nub*nativeFactor*nativeFactor {
				ni = nativeIndex(v)
				nub = math.Exp2(float64(ni) / (1 << nativeSchema))
			}
			for v > nub {
				ni++
				nub = math.Exp2(float64(ni) / (1 << nativeSchema))
			}
			native[ni] += b.Count
		})
	}
	out.SampleCount, out.SampleSum, out.ZeroCount = proto.Uint64(count), proto.Float64(sum), proto.Uint64(zero)
	var cum uint64
	for i, ub := range ClassicBuckets {
		cum += classic[i]
		out.Bucket = append(out.Bucket, &dto.Bucket{UpperBound: proto.Float64(ub), CumulativeCount: proto.Uint64(cum)})
	}
	out.PositiveSpan, out.PositiveDelta = spans(native)
	if len(out.PositiveSpan) == 0 && zero == 0 {
		// An empty native histogram still says it is one (as
		// client_golang's own do: a no-op span).
		out.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
	}
	return &histogram{desc: desc, labels: prometheus.MakeLabelPairs(desc, labelValues), h: out}
}

// nativeIndex is the native bucket of v > 0: bucket i holds
// (2^((i−1)/8), 2^(i/8)].
func nativeIndex(v float64) int {
	frac, exp := math.Frexp(v) // v = frac × 2^exp, frac in [0.5, 1)
	// log2(v) = exp + log2(frac); index = ceil(log2(v) × 2^schema).
	i := int(math.Ceil((float64(exp) + math.Log2(frac)) * (1 << nativeSchema)))
	// Guard the bound itself against rounding: v must not exceed its
	// bucket's upper bound, nor fit the one below.
	for v > math.Exp2(float64(i)/(1<<nativeSchema)) {
		i++
	}
	for v <= math.Exp2(float64(i-1)/(1<<nativeSchema)) {
		i--
	}
	return i
}

// spans encodes sparse buckets as Prometheus's spans and deltas.
func spans(b map[int]int64) ([]*dto.BucketSpan, []int64) {
	if len(b) == 0 {
		return nil, nil
	}
	idx := slices.Sorted(maps.Keys(b))
	var sp []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	next := 0
	for k, i := range idx {
		switch {
		case k == 0:
			sp = append(sp, &dto.BucketSpan{Offset: proto.Int32(int32(i)), Length: proto.Uint32(0)})
		case i-next > 2:
			sp = append(sp, &dto.BucketSpan{Offset: proto.Int32(int32(i - next)), Length: proto.Uint32(0)})
		default:
			// A gap of one or two empty buckets is cheaper as zero deltas.
			for ; next < i; next++ {
				deltas = append(deltas, -prevCount)
				prevCount = 0
				*sp[len(sp)-1].Length++
			}
		}
		deltas = append(deltas, b[i]-prevCount)
		prevCount = b[i]
		*sp[len(sp)-1].Length++
		next = i + 1
	}
	return sp, deltas
}

func (h *histogram) Desc() *prometheus.Desc { return h.desc }

func (h *histogram) Write(m *dto.Metric) error {
	m.Label = h.labels
	m.Histogram = h.h
	return nil
}

// eachBar calls f with each non-empty HDR bucket of h in ascending order:
// its lowest and highest equivalent values and its count, as
// h.Distribution() has them, read from the counts directly (no bar per
// empty bucket, no allocation but the counts' copy).
func eachBar(h *hdr.Histogram, f func(hdr.Bar)) {
	s := h.Export()
	unit, half := geometry(s.LowestTrackableValue, int(s.SignificantFigures))
	halfCount := int32(1) << half
	for i, c := range s.Counts {
		if c == 0 {
			continue
		}
		idx := int32(i)
		bucket := (idx >> half) - 1
		sub := (idx & (halfCount - 1)) + halfCount
		if bucket < 0 {
			sub -= halfCount
			bucket = 0
		}
		shift := uint(bucket + unit)
		from := int64(sub) << shift
		f(hdr.Bar{From: from, To: from + int64(1)<<shift - 1, Count: c})
	}
}

// geometry is HdrHistogram's unit magnitude and sub-bucket half-count
// magnitude for a lowest value and significant digits.
func geometry(lowest int64, sig int) (unit, half int32) {
	half = int32(math.Ceil(math.Log2(2*math.Pow10(sig)))) - 1
	half = max(half, 0)
	unit = int32(math.Floor(math.Log2(float64(max(lowest, 1)))))
	return max(unit, 0), half
}
