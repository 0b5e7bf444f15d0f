// Package metricstest is test support for run records: synthetic runs and
// samples, and the older per-second histogram encoding, for the tests of
// metrics and of the packages that read its records.
package metricstest

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Run is a CPS run of n successful transactions of total latency
// d (phases in proportion) and failed ones, over a 10 s window.
func Run(t *testing.T, n, failed int, d time.Duration) *metrics.Run {
	t.Helper()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := metrics.NewRecorder(2, start)
	for i := range n {
		s := &metrics.Sample{Steady: true, Opened: true, Handshake: true, Payload: 1000}
		s.Dur = [vocab.NumTimed]time.Duration{d / 10, d / 2, d / 5, d / 10, d, d}
		rec.Record(i, s)
	}
	for i := range failed {
		rec.Record(i, &metrics.Sample{Steady: true, Class: vocab.ClassReset, Err: errors.New("reset")})
	}
	r := &metrics.Run{
		Schema:       metrics.Schema,
		Engine:       "cps",
		Profile:      "p",
		Started:      start,
		Ended:        start.Add(12 * time.Second),
		SteadyStartS: 2,
		Target:       metrics.Target{Address: "dut:443"},
		Client:       metrics.Client{Utilization: 0.5},
	}
	if err := r.Fill(rec.Snapshot(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// PlayedSample draws one transaction: mostly successes with a completed
// handshake, some errors (some before the handshake completed), now and
// then a total beyond the histograms' range.
func PlayedSample(rng *rand.Rand, steady bool) *metrics.Sample {
	us := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo)) * time.Microsecond }
	s := &metrics.Sample{Steady: steady, Opened: true, BytesOut: 80, WireOut: 300 + int64(rng.IntN(200))}
	s.Dur[vocab.PhaseConnect] = us(50, 800)
	switch r := rng.IntN(100); {
	case r < 3:
		s.Class, s.Err = "timeout", errors.New("handshake: i/o timeout")
		return s
	case r < 6:
		s.Class, s.Err, s.Handshake = "reset", fmt.Errorf("read: connection reset by peer (%d)", r), true
		s.Payload, s.BytesIn = int64(rng.IntN(500)), 100
		return s
	}
	s.Handshake = true
	s.Dur[vocab.PhaseHandshake] = time.Duration(math.Exp(7+rng.NormFloat64())) * time.Microsecond
	s.Dur[vocab.PhaseTTFB] = us(100, 5000)
	s.Dur[vocab.PhaseTransfer] = us(1, 300)
	s.Dur[vocab.PhaseTotal] = s.Dur[vocab.PhaseConnect] + s.Dur[vocab.PhaseHandshake] +
		s.Dur[vocab.PhaseTTFB] + s.Dur[vocab.PhaseTransfer]
	if rng.IntN(100) == 0 {
		s.Dur[vocab.PhaseTotal] = 150 * time.Second // out of range
	}
	s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
	s.Payload, s.BytesIn, s.WireIn = 1024, 1200, 4000+int64(rng.IntN(100))
	return s
}

// OldSparse is the private encoding per-second histograms had before the
// standard one: (index delta, count) varints of the non-empty buckets,
// deflated, base64.
func OldSparse(h *hdr.Histogram) string {
	var b []byte
	prev := 0
	for i, c := range h.Export().Counts {
		if c > 0 {
			b = binary.AppendUvarint(b, uint64(i-prev))
			b = binary.AppendUvarint(b, uint64(c))
			prev = i
		}
	}
	var out bytes.Buffer
	zw, _ := flate.NewWriter(&out, flate.BestSpeed)
	zw.Write(b)
	zw.Close()
	return base64.StdEncoding.EncodeToString(out.Bytes())
}
