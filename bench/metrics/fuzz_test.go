package metrics_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// FuzzDecodeRun: any bytes decode to a run record (with decodable
// histograms) or an error, never a panic.
func FuzzDecodeRun(f *testing.F) {
	r := metrics.NewRecorder(1, time.Unix(0, 0))
	var d [vocab.NumTimed]time.Duration
	d[vocab.PhaseTotal] = 3 * time.Millisecond
	r.Record(0, &metrics.Sample{Steady: true, Dur: d})
	run := &metrics.Run{Schema: metrics.Schema, Engine: "cps"}
	if err := run.Fill(r.Snapshot(), time.Second); err != nil {
		f.Fatal(err)
	}
	seed, _ := json.Marshal(run)
	f.Add(seed)
	f.Add([]byte(`{"schema":"tlsbench/run/v1","histograms":{"total":"HISTFAAAAB54nJNpmSzMwMDAxQABzFCaEUz+h9IMAEKLAk0="}}`))
	f.Add([]byte(`{"schema":"other"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := metrics.DecodeRun(data)
		if err != nil {
			return
		}
		for phase := range r.Histograms {
			if _, err := r.Histogram(phase); err != nil {
				t.Errorf("DecodeRun accepted an undecodable %s histogram: %v", phase, err)
			}
		}
	})
}
