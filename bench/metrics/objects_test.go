package metrics_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

var mixAsked = []metrics.ObjectStats{{Size: 1024, Path: "/bytes/1024", Weight: 3},
	{Size: 16384, Path: "/bytes/16384", Weight: 1}, {Size: 5, Path: "/bytes/5", Weight: 0}}

// objectRun records samples of a two-object mix (object 3 never drawn)
// into one recorder and, round-robin, into n agents' recorders, and
// returns the one's record and the agents'.
func objectRuns(t *testing.T, n int) (*metrics.Run, []*metrics.Run) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	one := metrics.NewRecorder(3, t0)
	recs := make([]*metrics.Recorder, n)
	for a := range recs {
		recs[a] = metrics.NewRecorder(2, t0)
	}
	for i := range 3000 {
		obj := 1 + rng.IntN(4)/3 // 1, 1, 1, 2
		s := &metrics.Sample{Steady: i >= 200, Opened: i%10 == 0, Handshake: i%10 == 0, Object: uint16(obj),
			Payload: mixAsked[obj-1].Size}
		if i%97 == 0 {
			s.Class, s.Err, s.Payload = vocab.ClassBodySize, errors.New("body of 1 bytes"), 1
		}
		s.Dur[vocab.PhaseTTFB] = time.Duration(100+rng.IntN(5000)) * time.Microsecond
		s.Dur[vocab.PhaseTransfer] = time.Duration(10*obj+rng.IntN(300)) * time.Microsecond
		s.Dur[vocab.PhaseTotal] = s.Dur[vocab.PhaseTTFB] + s.Dur[vocab.PhaseTransfer]
		s.Dur[vocab.PhaseUncorrected] = s.Dur[vocab.PhaseTotal]
		s.RFCTTFB, s.RFCTTLB = s.Dur[vocab.PhaseTTFB]+time.Microsecond, s.Dur[vocab.PhaseTotal]+time.Microsecond
		one.Record(i, s)
		recs[i%n].Record(i, s)
	}
	newRun := func(rec *metrics.Recorder, shard int) *metrics.Run {
		r := &metrics.Run{Schema: metrics.Schema, Engine: vocab.EngineCPS, Profile: "p", Started: t0,
			Ended: t0.Add(12 * time.Second), SteadyStartS: 2, Target: metrics.Target{Address: "dut:443"},
			Complete: true, Load: metrics.Load{Mode: "closed", Concurrency: 4, ConnectionsHeld: -1,
				ConnectionsHeldPeak: -1}}
		if shard >= 0 {
			r.Agent = &metrics.Agent{Name: "a" + string(rune('0'+shard)), Shard: shard, Shards: n}
		}
		snap := rec.Snapshot()
		if err := r.Fill(snap, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := r.SetRFC9411(snap); err != nil {
			t.Fatal(err)
		}
		if err := r.SetObjects(mixAsked, snap); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var agents []*metrics.Run
	for a, rec := range recs {
		agents = append(agents, newRun(rec, a))
	}
	return newRun(one, -1), agents
}

// TestObjectsInRecord: each object's window counts, payload and RFC 9411
// percentiles are in the record (valid, and by the schema), with the
// whole window's rfc9411_ttfb and rfc9411_ttlb; Merge recomputes them
// exactly from the agents' histograms.
func TestObjectsInRecord(t *testing.T) {
	single, agents := objectRuns(t, 3)
	if err := single.Validate(); err != nil {
		t.Fatal(err)
	}
	data := marshalIndent(t, single)
	schematest.Valid(t, schemas.Run, "objects", data)
	back, err := metrics.DecodeRun(data)
	if err != nil {
		t.Fatal(err)
	}
	o := single.Objects
	if len(o) != 3 || o[0].Transactions+o[1].Transactions != single.Transactions || o[2].Transactions != 0 ||
		o[0].Errors+o[1].Errors != single.Errors.Total || o[1].Payload != 16384*o[1].Transactions ||
		o[0].TTLB.Count != o[0].Transactions || o[0].TTFB.P50 == 0 || o[1].TTFBHist == "" {
		t.Fatalf("objects %+v (transactions %d, errors %d)", o, single.Transactions, single.Errors.Total)
	}
	if back.Objects[1].TTLB != o[1].TTLB || back.Objects[1].TTLBHist != o[1].TTLBHist {
		t.Errorf("decoded object differs: %+v, want %+v", back.Objects[1], o[1])
	}
	ttfb, ttlb := single.Latency["rfc9411_ttfb"], single.Latency["rfc9411_ttlb"]
	if ttfb.Count != single.Transactions || ttlb.Count != single.Transactions || ttlb.P50 < ttfb.P50 ||
		ttfb.P50 <= single.Latency["ttfb"].P50-2 {
		t.Errorf("rfc9411_ttfb %+v, rfc9411_ttlb %+v, ttfb %+v", ttfb, ttlb, single.Latency["ttfb"])
	}
	m := merge(t, agents...)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := range single.Objects {
		if m.Objects[i] != single.Objects[i] {
			t.Errorf("merged object %d:\n%+v\nwant\n%+v", i, m.Objects[i], single.Objects[i])
		}
	}
	for _, k := range []string{"rfc9411_ttfb", "rfc9411_ttlb"} {
		if m.Latency[k] != single.Latency[k] || m.Histograms[k] != single.Histograms[k] {
			t.Errorf("merged %s %+v, want %+v", k, m.Latency[k], single.Latency[k])
		}
	}
	// Agents of different mixes do not merge; a record whose object
	// counts more transactions than it has is refused.
	other := *agents[1]
	other.Objects = other.Objects[:2]
	if _, err := metrics.Merge([]*metrics.Run{agents[0], &other}); err == nil ||
		!strings.Contains(err.Error(), "mixes differ") {
		t.Errorf("merging mixes of 3 and 2 objects: %v", err)
	}
	bad := *single
	bad.Objects = append([]metrics.ObjectStats(nil), single.Objects...)
	bad.Objects[2].Transactions = single.Transactions
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "objects") {
		t.Errorf("objects counting more than the record's transactions: %v", err)
	}
}

// TestNoObjectsNoChange: a run without objects or RFC timings has neither
// in its record.
func TestNoObjectsNoChange(t *testing.T) {
	rec := metrics.NewRecorder(1, t0)
	s := &metrics.Sample{Steady: true}
	s.Dur[vocab.PhaseTotal] = time.Millisecond
	rec.Record(0, s)
	r := &metrics.Run{Engine: vocab.EngineCPS}
	snap := rec.Snapshot()
	if err := r.Fill(snap, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRFC9411(snap); err != nil {
		t.Fatal(err)
	}
	if err := r.SetObjects(nil, snap); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Latency["rfc9411_ttfb"]; ok || r.Objects != nil || snap.ObjectCounts() != nil {
		t.Errorf("latency %v, objects %v", r.Latency, r.Objects)
	}
}
