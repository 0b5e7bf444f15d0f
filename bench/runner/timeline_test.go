package runner_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// TestTimelineReferenceTarget: a ramped run of each engine against the
// reference target records its timeline, marks its seconds with the phases
// in order (1 s ramp-up, 1 s warm-up, 2 s sustain, 1 s ramp-down, drain),
// counts the open connections each second (the throughput engine's
// kept-alive ones: all 8 through the sustain), and is valid against the
// schema; its window's transactions are those of the seconds' steady counts.
func TestTimelineReferenceTarget(t *testing.T) {
	const profile = "ecdhe-ecdsa-aes128-sha256-p256"
	tgt := testdut.StartTargetWith(t, target.Config{}, profile)
	l := tgt.Listeners[0]
	want := []vocab.TimelinePhase{vocab.TimelineRampUp, vocab.TimelineWarmup, vocab.TimelineSustain,
		vocab.TimelineSustain, vocab.TimelineRampDown}
	for _, eng := range []vocab.Engine{vocab.EngineThroughput, vocab.EngineCPS} {
		t.Run(eng.String(), func(t *testing.T) {
			s := runner.Defaults(eng)
			s.Profile, s.Target = profile, metrics.Target{Address: l.Addr, ServerName: "localhost"}
			s.Roots, s.Host, s.Path = tgt.CA.Pool(), "localhost", "/1k"
			s.Concurrency, s.Duration, s.Warmup, s.Drain = 8, 2*time.Second, time.Second, 10*time.Second
			s.RampUp, s.RampDown = time.Second, time.Second
			r, err := runner.Run(context.Background(), &s)
			if err != nil {
				t.Fatal(err)
			}
			wantTL := metrics.Timeline{Target: "concurrency", TargetValue: 8, RampUpS: 1, WarmupS: 1, SustainS: 2,
				RampDownS: 1}
			if r.Timeline == nil || *r.Timeline != wantTL {
				t.Errorf("timeline %v, want %v", r.Timeline, &wantTL)
			}
			if r.SteadyStartS != 2 || !r.Complete || r.Transactions == 0 || r.Errors.Total != 0 {
				t.Errorf("steady start %gs, complete %v, %d transactions, %d errors; want 2s, a complete run "+
					"without errors", r.SteadyStartS, r.Complete, r.Transactions, r.Errors.Total)
			}
			var steady int64
			for i, sec := range r.Series {
				w := vocab.TimelineDrain
				if i < len(want) {
					w = want[i]
				}
				if sec.Phase != string(w) {
					t.Errorf("second %d: phase %q, want %q", sec.T, sec.Phase, w)
				}
				steady += sec.SteadyTransactions
				if w != vocab.TimelineSustain {
					continue
				}
				if eng == vocab.EngineThroughput && sec.OpenConns != 8 {
					t.Errorf("second %d of the sustain: %d connections open, want the 8 kept alive", sec.T,
						sec.OpenConns)
				}
			}
			if len(r.Series) < len(want) {
				t.Errorf("%d seconds, want at least %d", len(r.Series), len(want))
			}
			if steady != r.Transactions {
				t.Errorf("the seconds' steady transactions sum to %d, the window has %d", steady, r.Transactions)
			}
			t.Logf("%s: open connections per second %v", eng, openConns(r.Series))
			if err := r.Validate(); err != nil {
				t.Error(err)
			}
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			schematest.Valid(t, schemas.Run, "the record", data)
		})
	}
}

func openConns(series []metrics.Second) []int64 {
	var n []int64
	for _, s := range series {
		n = append(n, s.OpenConns)
	}
	return slices.Clip(n)
}
