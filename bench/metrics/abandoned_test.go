package metrics_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// abandonedRun is agent shard's record of 100 successes and abandoned
// transactions of the window, recorded as the engine records them (errors
// of class abandoned) and counted in load.abandoned.
func abandonedRun(t *testing.T, shard, abandoned int) *metrics.Run {
	t.Helper()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := metrics.NewRecorder(2, start)
	for i := range 100 {
		s := &metrics.Sample{Steady: true, Opened: true, Handshake: true, Payload: 1000}
		s.Dur = [vocab.NumTimed]time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond,
			4 * time.Millisecond, 4 * time.Millisecond}
		rec.Record(i, s)
	}
	for i := range abandoned {
		rec.Record(i, &metrics.Sample{Steady: true, Class: vocab.ClassAbandoned,
			Err: errors.New("still in flight when the drain bound (30s) expired")})
	}
	r := &metrics.Run{Schema: metrics.Schema, Engine: vocab.EngineCPS, Profile: "p", Started: start, Ended: start.Add(12 * time.Second),
		SteadyStartS: 2, Target: metrics.Target{Address: "dut:443"}, Complete: true,
		Load:  metrics.Load{Mode: "closed", Concurrency: 4, ConnectionsHeld: -1, ConnectionsHeldPeak: -1, Abandoned: int64(abandoned)},
		Agent: &metrics.Agent{Name: "a" + string(rune('0'+shard)), Shard: shard, Shards: 2}}
	if err := r.Fill(rec.Snapshot(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAbandonedInRecord: load.abandoned is in the record (valid, and by the
// schema), absent when 0 (records without it are byte for byte as before),
// summed by Merge, and a count that the errors contradict is refused.
func TestAbandonedInRecord(t *testing.T) {
	a0, a1 := abandonedRun(t, 0, 3), abandonedRun(t, 1, 2)
	data := marshalIndent(t, a0)
	if !strings.Contains(string(data), `"abandoned": 3`) {
		t.Errorf("record does not carry load.abandoned 3:\n%s", data)
	}
	schematest.Valid(t, schemas.Run, "abandoned", data)
	if _, err := metrics.DecodeRun(data); err != nil {
		t.Errorf("DecodeRun: %v", err)
	}
	if n := a0.Errors.ByClass[vocab.ClassAbandoned]; n != 3 || a0.Errors.Total != 3 {
		t.Errorf("errors %+v: want 3 of class abandoned", a0.Errors)
	}
	m := merge(t, a0, a1)
	if m.Load.Abandoned != 5 || m.Errors.ByClass[vocab.ClassAbandoned] != 5 {
		t.Errorf("merged: load.abandoned %d, abandoned errors %d; want 5 and 5", m.Load.Abandoned, m.Errors.ByClass[vocab.ClassAbandoned])
	}
	if err := m.Validate(); err != nil {
		t.Errorf("merged: %v", err)
	}
	schematest.Valid(t, schemas.Run, "merged", marshalIndent(t, m))

	none := abandonedRun(t, 0, 0)
	if strings.Contains(string(marshalIndent(t, none)), "abandoned") {
		t.Errorf("a record with nothing abandoned mentions it:\n%s", marshalIndent(t, none))
	}

	for _, tc := range []struct {
		name string
		edit func(l map[string]any)
		want string
	}{
		{"negative", func(l map[string]any) { l["abandoned"] = -1 }, "load.abandoned: -1 is negative"},
		{"fewer than the window's abandoned errors", func(l map[string]any) { l["abandoned"] = 2 },
			"load.abandoned: 2, but the window has 3 abandoned errors"},
		{"more than the whole run's errors", func(l map[string]any) { l["abandoned"] = 4 },
			"load.abandoned: 4, but the window has 3 abandoned errors and the whole run 3 errors"},
	} {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		tc.edit(doc["load"].(map[string]any))
		edited, _ := json.Marshal(doc)
		_, err := metrics.DecodeRun(edited)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
