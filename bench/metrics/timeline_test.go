package metrics_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// withTimeline is a copy of agent r's record that ran timeline tl (its
// share of the target), its seconds marked with phases in order and n open
// connections each.
func withTimeline(r *metrics.Run, tl metrics.Timeline, n int64) *metrics.Run {
	c := *r
	id := *r.Agent
	c.Agent, c.Timeline, c.Series = &id, &tl, slices.Clone(r.Series)
	phases := []vocab.TimelinePhase{vocab.TimelineRampUp, vocab.TimelineWarmup, vocab.TimelineSustain,
		vocab.TimelineRampDown, vocab.TimelineDrain}
	for i := range c.Series {
		c.Series[i].Phase = string(phases[min(i*len(phases)/len(c.Series), len(phases)-1)])
		c.Series[i].OpenConns = n
	}
	return &c
}

// TestMergeTimeline: agents of one timeline merge into it, their shares of
// the target and their open connections summed, each second's phase kept;
// agents of different timelines are refused; and a record's phases must
// be known and in order.
func TestMergeTimeline(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	tl := metrics.Timeline{Target: "concurrency", TargetValue: 4, RampUpS: 2, WarmupS: 2, SustainS: 8, RampDownS: 2}
	var runs []*metrics.Run
	for i, a := range agents {
		runs = append(runs, withTimeline(a, tl, int64(i+1)))
	}
	m := merge(t, runs...)
	want := tl
	want.TargetValue = 4 * playAgents
	if m.Timeline == nil || *m.Timeline != want {
		t.Errorf("merged timeline %v, want %v", m.Timeline, &want)
	}
	for i, s := range m.Series {
		if s.OpenConns != 1+2+3+4 {
			t.Errorf("merged second %d: %d open connections, want the agents' 10", s.T, s.OpenConns)
		}
		if i < len(runs[0].Series) && s.Phase != runs[0].Series[i].Phase {
			t.Errorf("merged second %d: phase %q, the agents' %q", s.T, s.Phase, runs[0].Series[i].Phase)
		}
	}
	if err := m.Validate(); err != nil {
		t.Errorf("merged record: %v", err)
	}

	other := tl
	other.RampDownS = 5
	_, err := metrics.Merge([]*metrics.Run{runs[0], withTimeline(agents[1], other, 1)})
	if err == nil || !strings.Contains(err.Error(), "ran the timeline concurrency 4: ramp-up 2s, warm-up 2s, "+
		"sustain 8s, ramp-down 5s") {
		t.Errorf("two timelines merged: error %v", err)
	}
	_, err = metrics.Merge([]*metrics.Run{runs[0], agents[1]})
	if err == nil || !strings.Contains(err.Error(), "ran the timeline none") {
		t.Errorf("a timeline and none merged: error %v", err)
	}

	bad := withTimeline(agents[0], tl, 1)
	bad.Series[1].Phase, bad.Series[2].Phase = string(vocab.TimelineSustain), string(vocab.TimelineRampUp)
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("phases out of order: %v", err)
	}
	bad.Series[2].Phase = "cooldown"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "not a phase") {
		t.Errorf("an unknown phase: %v", err)
	}
}
