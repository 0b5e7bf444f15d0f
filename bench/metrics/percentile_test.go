package metrics_test

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/metricstest"
)

// histOf records vs (µs) in a histogram of the shared geometry.
func histOf(t *testing.T, vs ...int64) *hdr.Histogram {
	t.Helper()
	h := metrics.NewHistogram()
	for _, v := range vs {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func oneTo(n int64) []int64 {
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(i) + 1
	}
	return vs
}

// TestValueAtPercentileKnown: the reference implementation's rule (count =
// ceil(p × n ÷ 100), at least 1), by hand, where it and nearest-rank
// rounding agree and where they do not.
func TestValueAtPercentileKnown(t *testing.T) {
	// 168 values 1..168 ms, each in its own bucket: at p99 the count is
	// 166.32, rounded up to the 167th value (the reference), rounded to
	// the nearest the 166th (hdrhistogram-go).
	var ms []int64
	for i := int64(1); i <= 168; i++ {
		ms = append(ms, i*1000)
	}
	h168 := histOf(t, ms...)
	hi := func(v int64) int64 { // the highest value equivalent to v
		return h168.ValueAtPercentile(100 * float64(indexOf(ms, v)+1) / 168)
	}
	tests := []struct {
		name string
		h    *hdr.Histogram
		p    float64
		want int64
	}{
		{"168 values, p99: the 167th", h168, 99, hi(167_000)},
		{"168 values, p50: the 84th", h168, 50, hi(84_000)},
		{"168 values, p0: the lowest", h168, 0, 1000},
		{"168 values, p100: the highest", h168, 100, hi(168_000)},
		// Values below 2048 are exact at 3 significant figures.
		{"10 values, p14: ceil(1.4) = 2", histOf(t, oneTo(10)...), 14, 2},
		{"10 values, p15: ceil(1.5) = 2", histOf(t, oneTo(10)...), 15, 2},
		{"10 values, p50: 5 exactly stays 5", histOf(t, oneTo(10)...), 50, 5},
		{"10 values, p90: 9 exactly stays 9", histOf(t, oneTo(10)...), 90, 9},
		{"10 values, p90.01: ceil(9.001) = 10", histOf(t, oneTo(10)...), 90.01, 10},
		{"10 values, p1: at least the first", histOf(t, oneTo(10)...), 1, 1},
		{"1000 values, p99.9: 999 exactly", histOf(t, oneTo(1000)...), 99.9, 999},
		{"1000 values, p99.95: ceil(999.5)", histOf(t, oneTo(1000)...), 99.95, 1000},
		{"one value", histOf(t, 42), 99, 42},
		{"empty", metrics.NewHistogram(), 99, 0},
		{"above 100 is the maximum", histOf(t, 1, 2, 3), 150, 3},
	}
	for _, tt := range tests {
		if got := metrics.ValueAtPercentile(tt.h, tt.p); got != tt.want {
			t.Errorf("%s: ValueAtPercentile(%g) = %d, want %d", tt.name, tt.p, got, tt.want)
		}
	}
	// The case the function exists for: hdrhistogram-go's own answer
	// differs (the 166th value).
	if got, own := metrics.ValueAtPercentile(h168, 99), h168.ValueAtQuantile(99); got == own || own != hi(166_000) {
		t.Errorf("168 values, p99: ours %d, hdrhistogram-go's %d; want the 167th value against the 166th (%d)", got, own, hi(166_000))
	}
	if got, own := metrics.ValueAtPercentile(histOf(t, oneTo(10)...), 14), histOf(t, oneTo(10)...).ValueAtQuantile(14); got == own {
		t.Errorf("10 values, p14: ours and hdrhistogram-go's agree (%d); the rules differ there", got)
	}
}

func indexOf(vs []int64, v int64) int {
	for i, x := range vs {
		if x == v {
			return i
		}
	}
	return -1
}

// javaValueAt is the reference implementation's getValueAtPercentile,
// written out over the histogram's buckets: an independent check of
// ValueAtPercentile, which leans on hdrhistogram-go's own walk.
func javaValueAt(bars []hdr.Bar, n int64, p float64) int64 {
	q := math.Min(math.Max(math.Nextafter(p, math.Inf(-1)), 0), 100)
	count := max(int64(math.Ceil(q*float64(n)/100)), 1)
	var sum int64
	for _, b := range bars {
		sum += b.Count
		if sum >= count {
			if p == 0 {
				return b.From
			}
			return b.To
		}
	}
	return 0
}

// TestValueAtPercentileRandom holds ValueAtPercentile against javaValueAt on
// random histograms of both geometries, at the percentiles tlsbench uses and
// at random ones.
func TestValueAtPercentileRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ps := append([]float64{0, 1e-9, 50, 90, 99, 99.9, 99.99, 100}, analysis.CurvePercentiles...)
	for range 40 {
		ps = append(ps, rng.Float64()*100)
	}
	for i := range 200 {
		h := metrics.NewHistogram()
		if i%2 == 1 {
			h = hdr.New(metrics.Lowest, metrics.Highest, 2)
		}
		n := 1 + rng.IntN(3000)
		if i%10 == 0 {
			n = 1 + rng.IntN(5)
		}
		for range n {
			v := int64(math.Exp(rng.Float64() * 14)) // 1 µs .. 1.2 s
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		bars := h.Distribution()
		for _, p := range ps {
			if got, want := metrics.ValueAtPercentile(h, p), javaValueAt(bars, h.TotalCount(), p); got != want {
				t.Fatalf("histogram %d (%d values): ValueAtPercentile(%v) = %d, the reference's rule gives %d", i, n, p, got, want)
			}
		}
		// Mean: Σ median × count ÷ n, in that order.
		var sum float64
		for _, b := range bars {
			if b.Count > 0 {
				sum += float64(b.From+(b.To-b.From+1)/2) * float64(b.Count)
			}
		}
		if got, want := metrics.Mean(h), sum/float64(h.TotalCount()); got != want {
			t.Fatalf("histogram %d: Mean = %v, want %v", i, got, want)
		}
	}
	if got := metrics.Mean(metrics.NewHistogram()); got != 0 {
		t.Errorf("Mean of nothing = %v", got)
	}
}

// inflateV2 returns the uncompressed bytes of a V2 compressed encoding.
func inflateV2(t *testing.T, enc string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 {
		t.Fatalf("encoding of %d bytes", len(b))
	}
	if got := int32(binary.BigEndian.Uint32(b)); got != hdr.V2CompressedEncodingCookieBase|0x10 {
		t.Fatalf("cookie %#x, want %#x", got, hdr.V2CompressedEncodingCookieBase|0x10)
	}
	if n := int(binary.BigEndian.Uint32(b[4:])); n != len(b)-8 {
		t.Fatalf("compressed length %d, %d bytes follow", n, len(b)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(b[8:]))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestEncodeV2: EncodeV2 writes the standard encoding: the same bytes
// before compression as hdrhistogram-go's Encode (the Java reference's
// layout), and hdr.Decode gives back an equal histogram.
func TestEncodeV2(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for i := range 60 {
		h := hdr.New(metrics.Lowest, metrics.Highest, 2)
		if i%2 == 1 {
			h = metrics.NewHistogram()
		}
		n := rng.IntN(2000)
		if i == 0 {
			n = 0 // empty
		}
		for range n {
			v := int64(math.Exp(rng.Float64() * 18)) // up to 65 s
			if rng.IntN(50) == 0 {
				v = metrics.Highest
			}
			if err := h.RecordValues(v, 1+int64(rng.IntN(3))*int64(rng.IntN(100000))); err != nil {
				t.Fatal(err)
			}
		}
		enc := metrics.EncodeV2(h)
		theirs, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := inflateV2(t, enc), inflateV2(t, string(theirs)); !bytes.Equal(got, want) {
			t.Fatalf("histogram %d (%d values): uncompressed bytes differ from hdrhistogram-go's:\n%x\n%x", i, n, got, want)
		}
		back, err := hdr.Decode([]byte(enc))
		if err != nil {
			t.Fatalf("histogram %d: hdr.Decode: %v", i, err)
		}
		if !back.Equals(h) {
			t.Fatalf("histogram %d: decoded histogram differs", i)
		}
	}
}

// TestDecodeSecondHistogram: a per-second histogram reads back from the
// standard encoding and from the private one of older records; another
// geometry is refused.
func TestDecodeSecondHistogram(t *testing.T) {
	h := hdr.New(metrics.Lowest, metrics.Highest, 2)
	for _, v := range []int64{3, 150, 151, 20_000, 20_000, 7_000_000} {
		h.RecordValue(v)
	}
	got, err := metrics.DecodeSecondHistogram(metrics.EncodeV2(h))
	if err != nil || !got.Equals(h) {
		t.Fatalf("V2: %v, equal %v", err, err == nil && got.Equals(h))
	}
	got, err = metrics.DecodeSecondHistogram(metricstest.OldSparse(h))
	if err != nil || !got.Equals(h) {
		t.Fatalf("older encoding: %v, equal %v", err, err == nil && got.Equals(h))
	}
	if _, err := metrics.DecodeSecondHistogram(metrics.EncodeV2(histOf(t, 5))); err == nil {
		t.Error("a histogram of 3 significant figures was read as a per-second one")
	}
}
