package metrics

import (
	"fmt"
	"slices"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Timeline is a run's timeline (RFC 9411 §4.3.4), in seconds: the ramp up
// from nothing to the target, the warm-up at the target, the sustain phase
// (the steady window, whose statistics are the run's KPIs) and the ramp
// down. Target says what the ramps move: "concurrency" (closed loop: workers
// started and stopped in turn) or "rate" (open loop: the pacer's rate).
type Timeline struct {
	Target      string  `json:"target"`
	TargetValue float64 `json:"target_value"`
	RampUpS     float64 `json:"ramp_up_s"`
	WarmupS     float64 `json:"warmup_s"`
	SustainS    float64 `json:"sustain_s"`
	RampDownS   float64 `json:"ramp_down_s"`
}

// String describes the timeline in a message ("none" for nil).
func (t *Timeline) String() string {
	if t == nil {
		return "none"
	}
	return fmt.Sprintf("%s %g: ramp-up %gs, warm-up %gs, sustain %gs, ramp-down %gs", t.Target, t.TargetValue,
		t.RampUpS, t.WarmupS, t.SustainS, t.RampDownS)
}

// sameTimeline says whether two agents' records ran one timeline: the same
// phases and target (each its own share of the target's value).
func sameTimeline(a, b *Timeline) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.TargetValue, y.TargetValue = 0, 0
	return x == y
}

// mergeTimeline is the agents' one timeline (checkAgreement checked it),
// its target's value the sum of their shares; nil without one.
func mergeTimeline(ins []*mergeInput) *Timeline {
	if ins[0].r.Timeline == nil {
		return nil
	}
	t := *ins[0].r.Timeline
	t.TargetValue = 0
	for _, in := range ins {
		t.TargetValue += in.r.Timeline.TargetValue
	}
	return &t
}

// TimelineTargets are what a timeline's ramps may move.
var TimelineTargets = []string{"concurrency", "rate"}

// timelinePhases are the phases in the order the seconds go through them.
var timelinePhases = []vocab.TimelinePhase{vocab.TimelineRampUp, vocab.TimelineWarmup, vocab.TimelineSustain,
	vocab.TimelineRampDown, vocab.TimelineDrain}

// checkTimeline checks the record's timeline and the series' marks: the
// open connections not negative, the phases known and in their order.
func (r *Run) checkTimeline(c *Checker) {
	if t := r.Timeline; t != nil {
		c.OneOf("timeline.target", t.Target, TimelineTargets)
		c.nums("timeline.", []num{{"target_value", t.TargetValue}, {"ramp_up_s", t.RampUpS},
			{"warmup_s", t.WarmupS}, {"sustain_s", t.SustainS}, {"ramp_down_s", t.RampDownS}})
	}
	last := -1
	for i, s := range r.Series {
		p := fmt.Sprintf("series[%d]", i)
		c.Count(p+".open_conns", s.OpenConns)
		if s.Phase == "" {
			continue
		}
		k := slices.Index(timelinePhases, vocab.TimelinePhase(s.Phase))
		switch {
		case k < 0:
			c.Failf(p+".phase", "%q is not a phase of the timeline", s.Phase)
		case k < last:
			c.Failf(p+".phase", "%q comes after %q: the phases are out of order", s.Phase, timelinePhases[last])
		}
		last = max(last, k)
	}
}

// ObjectStats is one object of a run's mix over the steady window: its
// size and weight as asked, the transactions that drew it, and their
// latency (RFC 9411 §6.3's TTFB and TTLB, µs).
type ObjectStats struct {
	Size         int64       `json:"size"`
	Path         string      `json:"path"`
	Weight       float64     `json:"weight"`
	Transactions int64       `json:"transactions"`
	Errors       int64       `json:"errors"`
	Payload      int64       `json:"payload_bytes"`
	TTFB         Percentiles `json:"ttfb_us"`
	TTLB         Percentiles `json:"ttlb_us"`
	ObjectHists
}
