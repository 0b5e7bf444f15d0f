package promexp

import (
	"math"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// decodeNative turns spans and deltas back into bucket counts.
func decodeNative(h *dto.Histogram) map[int]int64 {
	out := map[int]int64{}
	idx, count, k := 0, int64(0), 0
	for i, sp := range h.PositiveSpan {
		if i == 0 {
			idx = int(sp.GetOffset())
		} else {
			idx += int(sp.GetOffset())
		}
		for range sp.GetLength() {
			count += h.PositiveDelta[k]
			k++
			if count != 0 {
				out[idx] = count
			}
			idx++
		}
	}
	return out
}

func TestNativeIndex(t *testing.T) {
	for v, want := range map[float64]int{1: 0, 2: 8, 0.5: -8, 1.0001: 1, math.Exp2(1.0 / 8): 1, math.Exp2(1.0/8) * 1.0001: 2} {
		if got := nativeIndex(v); got != want {
			t.Errorf("nativeIndex(%v) = %d, want %d", v, got, want)
		}
	}
}

// TestHistogramMatchesClientGolang records the same latencies into the
// recorder's HDR histogram and, as HDR reports them, into client_golang's
// own histogram (native, bucket factor 1.1, and the same classic buckets):
// the native buckets and the classic counts are the same.
func TestHistogramMatchesClientGolang(t *testing.T) {
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x", Help: "x", Buckets: ClassicBuckets,
		NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 1000, NativeHistogramZeroThreshold: 1e-9})
	h := metrics.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		us := int64(math.Exp(rng.Float64()*12)) + 50 // 50 µs .. ~160 ms, log-uniform
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	// client_golang observes each value as HDR reports it (its bucket's
	// highest equivalent value).
	for _, b := range h.Distribution() {
		for range b.Count {
			ref.Observe(float64(b.To) / 1e6)
		}
	}
	var want dto.Metric
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	var got dto.Metric
	if err := newHistogram(prometheus.NewDesc("x", "x", nil, nil), h).Write(&got); err != nil {
		t.Fatal(err)
	}
	if g, w := got.Histogram.GetSchema(), want.Histogram.GetSchema(); g != w {
		t.Fatalf("schema %d, client_golang's %d", g, w)
	}
	if g, w := got.Histogram.GetSampleCount(), want.Histogram.GetSampleCount(); g != w {
		t.Errorf("count %d, client_golang's %d", g, w)
	}
	gn, wn := decodeNative(got.Histogram), decodeNative(want.Histogram)
	if len(gn) != len(wn) {
		t.Errorf("%d native buckets, client_golang's %d", len(gn), len(wn))
	}
	for i, w := range wn {
		if gn[i] != w {
			t.Errorf("native bucket %d: %d, client_golang's %d", i, gn[i], w)
		}
	}
	for i, b := range got.Histogram.Bucket {
		if g, w := b.GetCumulativeCount(), want.Histogram.Bucket[i].GetCumulativeCount(); g != w {
			t.Errorf("classic bucket le=%g: %d, client_golang's %d", b.GetUpperBound(), g, w)
		}
	}
	if g, w := got.Histogram.GetSampleSum(), want.Histogram.GetSampleSum(); math.Abs(g-w) > w*0.001 {
		t.Errorf("sum %g, client_golang's %g (more than HDR's 0.1%% apart)", g, w)
	}
}

// TestEachBar: the buckets read from the counts are Distribution's
// non-empty bars.
func TestEachBar(t *testing.T) {
	h := metrics.NewHistogram()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		_ = h.RecordValue(int64(math.Exp(rng.Float64() * 18))) // 1 µs .. 65 s
	}
	_ = h.RecordValue(0)
	_ = h.RecordValue(metrics.Highest)
	var want []hdr.Bar
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			want = append(want, b)
		}
	}
	var got []hdr.Bar
	eachBar(h, func(b hdr.Bar) { got = append(got, b) })
	if len(got) != len(want) {
		t.Fatalf("%d bars, Distribution has %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("bar %d: %+v, Distribution's %+v", i, got[i], want[i])
		}
	}
}
