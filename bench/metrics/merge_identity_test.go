package metrics_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// shifted returns a copy of r (and of its agent identity) started d later.
func shifted(r *metrics.Run, d time.Duration) *metrics.Run {
	c := *r
	id := *r.Agent
	c.Agent = &id
	c.Started, c.Ended = c.Started.Add(d), c.Ended.Add(d)
	return &c
}

// TestMergeRefusesDisjointWindows: two agents that ran 25 s apart did not
// load the device together; their rates are not summed. The refusal names
// both agents and their absolute windows.
func TestMergeRefusesDisjointWindows(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	a, b := agents[0], shifted(agents[1], 25*time.Second)
	_, err := metrics.Merge([]*metrics.Run{a, b})
	var we *metrics.WindowError
	if !errors.As(err, &we) {
		t.Fatalf("Merge of windows 25 s apart: %v, want a *WindowError", err)
	}
	// a's window: t0+2 s to t0+12 s; b's 25 s later.
	for _, want := range []string{
		"agent a (shard 0/4) (2026-03-01T12:00:02.000Z–2026-03-01T12:00:12.000Z)",
		"agent b (shard 1/4) (2026-03-01T12:00:27.000Z–2026-03-01T12:00:37.000Z)",
		"overlap by -15.000 s", "less than 90% of the shortest window (10.000 s)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if we.Overlap != -15*time.Second || we.Shortest != 10*time.Second || !strings.HasPrefix(we.Late.Agent, "agent b") || !strings.HasPrefix(we.Early.Agent, "agent a") {
		t.Errorf("WindowError %+v", we)
	}

	// A merged record keeps its agents' windows: merging it with a late
	// agent is refused too.
	ab := merge(t, agents[0], agents[1])
	if _, err := metrics.Merge([]*metrics.Run{ab, shifted(agents[2], 25*time.Second)}); !errors.As(err, &we) || !strings.Contains(err.Error(), "agent c (shard 2/4)") {
		t.Errorf("merged record + a late agent: %v", err)
	}

	// The bound: 1 s apart in 10 s windows shares 90% (accepted), 1.5 s 85%
	// (refused).
	if _, err := metrics.Merge([]*metrics.Run{a, shifted(agents[1], time.Second)}); err != nil {
		t.Errorf("windows sharing 90%%: %v", err)
	}
	if _, err := metrics.Merge([]*metrics.Run{a, shifted(agents[1], 1500*time.Millisecond)}); !errors.As(err, &we) {
		t.Errorf("windows sharing 85%%: %v, want a *WindowError", err)
	}
	// A shorter window inside a longer one shares all of itself.
	short := shifted(agents[1], 3*time.Second)
	short.DurationS = 5
	if _, err := metrics.Merge([]*metrics.Run{a, short}); err != nil {
		t.Errorf("a 5 s window inside a 10 s one: %v", err)
	}
}

// TestMergeRefusesOtherDevice: agents that measured different devices (by
// name, address dialled or leaf certificate) are not merged.
func TestMergeRefusesOtherDevice(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	leaf := strings.Repeat("ab", 32)
	with := func(r *metrics.Run, f func(*metrics.Target)) *metrics.Run {
		c := *r
		f(&c.Target)
		return &c
	}
	a := with(agents[0], func(tg *metrics.Target) { tg.DUT, tg.LeafSHA256 = "lb-waf", leaf })
	for _, tc := range []struct {
		name, field string
		b           *metrics.Run
		want        string
	}{
		{"name", "dut", with(agents[1], func(tg *metrics.Target) { tg.DUT, tg.LeafSHA256 = "lb", leaf }),
			"agent b (shard 1/4) measured DUT lb, agent a (shard 0/4) lb-waf: not one device"},
		{"address", "address", with(agents[1], func(tg *metrics.Target) { tg.DUT, tg.LeafSHA256, tg.Address = "lb-waf", leaf, "10.0.0.6:443" }),
			"agent b (shard 1/4) measured dialled address 10.0.0.6:443, agent a (shard 0/4) 10.0.0.1:443"},
		{"certificate", "leaf_sha256", with(agents[1], func(tg *metrics.Target) { tg.DUT, tg.LeafSHA256 = "lb-waf", strings.Repeat("cd", 32) }),
			"measured leaf certificate (SHA-256) " + strings.Repeat("cd", 32) + ", agent a (shard 0/4) " + leaf},
	} {
		_, err := metrics.Merge([]*metrics.Run{a, tc.b})
		var ie *metrics.IdentityError
		if !errors.As(err, &ie) || ie.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *IdentityError on %s saying %q", tc.name, err, tc.field, tc.want)
		}
	}
	// An agent that verified no connection saw no certificate: that is no
	// difference.
	b := with(agents[1], func(tg *metrics.Target) { tg.DUT, tg.LeafSHA256 = "lb-waf", "" })
	m, err := metrics.Merge([]*metrics.Run{b, a})
	if err != nil {
		t.Fatalf("an agent without a certificate: %v", err)
	}
	if m.Target.DUT != "lb-waf" || m.Target.LeafSHA256 != leaf {
		t.Errorf("merged target %+v", m.Target)
	}
}
