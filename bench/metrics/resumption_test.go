package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// resumedRun records full handshakes of 1–2 ms and resumed ones of 0.2–0.4
// ms (one of them timed 0: a clock that did not move), and fills a CPS
// record with the split.
func resumedRun(t *testing.T, full, resumed int) *metrics.Run {
	t.Helper()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := metrics.NewRecorder(3, start)
	add := func(i int, hs time.Duration, res bool) {
		s := &metrics.Sample{Steady: true, Opened: true, Handshake: true, Resumed: res, Payload: 1024}
		s.Dur = [vocab.NumTimed]time.Duration{100 * time.Microsecond, hs, time.Millisecond, time.Millisecond,
			3 * time.Millisecond, 3 * time.Millisecond}
		rec.Record(i, s)
	}
	for i := range full {
		add(i, time.Millisecond+time.Duration(i%1000)*time.Microsecond, false)
	}
	for i := range resumed {
		add(i, 200*time.Microsecond+time.Duration(i%200)*time.Microsecond, true)
	}
	add(0, 0, true)
	r := &metrics.Run{Schema: metrics.Schema, Engine: vocab.EngineCPS, Profile: "p", Started: start,
		Ended: start.Add(12 * time.Second), SteadyStartS: 2, Complete: true, Target: metrics.Target{Address: "dut:443"},
		Load: metrics.Load{Mode: "closed", ConnectionsHeld: -1, ConnectionsHeldPeak: -1}}
	snap := rec.Snapshot()
	if err := r.Fill(snap, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.SetResumption("tickets", 0.5, snap); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResumptionSplit(t *testing.T) {
	r := resumedRun(t, 600, 400)
	x := r.Resumption
	if x.Full != 600 || x.Resumed != 401 || x.FullPerS != 60 || x.ResumedPerS != 40.1 || x.Full+x.Resumed != r.Transactions {
		t.Fatalf("split %+v of %d transactions", x, r.Transactions)
	}
	full, res := r.Latency[vocab.PhaseHandshakeFull.String()], r.Latency[vocab.PhaseHandshakeResumed.String()]
	all := r.Percentiles(vocab.PhaseHandshake)
	// The full handshakes' histogram is the handshakes' less the resumed
	// ones', bucket by bucket: it has exactly the full ones' values.
	if full.Count != 600 || res.Count != 400 || all.Count != 1000 || full.Min < 1000 || full.Max > 2000 ||
		res.Max >= 400 || res.Min < 200 {
		t.Errorf("handshake %+v, full %+v, resumed %+v", all, full, res)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := *r
	y := *r.Resumption
	y.Full = r.Transactions
	bad.Resumption = &y
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("a split above the transactions validates: %v", err)
	}

	a, b := resumedRun(t, 600, 400), resumedRun(t, 300, 100)
	a.Agent = &metrics.Agent{Name: "a", Shard: 0, Shards: 2}
	b.Agent = &metrics.Agent{Name: "b", Shard: 1, Shards: 2}
	m, err := metrics.Merge([]*metrics.Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	x = m.Resumption
	if x == nil || x.Full != 900 || x.Resumed != 502 || x.FullPerS != 90 || x.ResumedPerS != 50.2 || x.Mode != "tickets" {
		t.Fatalf("merged split %+v", x)
	}
	if c := m.Latency[vocab.PhaseHandshakeResumed.String()].Count; c != 500 {
		t.Errorf("merged resumed handshakes' histogram counts %d, want 500", c)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}
