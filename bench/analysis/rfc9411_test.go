package analysis_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// sustainRun is a CPS record whose steady window is [2.5 s, 7.5 s]: the
// seconds ending at 3 and 8 are cut by its bounds, those ending at 4 to 7
// are whole. Each second completes rate[i] transactions (T = i+1) and ends
// with conns[i] connections open (when given); the window holds 100000
// attempted transactions, none failed, every connection measured.
func sustainRun(rate []int64, conns []int64) *metrics.Run {
	r := &metrics.Run{Engine: vocab.EngineCPS, SteadyStartS: 2.5, DurationS: 5,
		Transactions: 100000, ConnectionsOpened: 100000,
		Errors: metrics.Errors{ByClass: map[vocab.Class]int64{}},
		TCP:    &metrics.TCP{Connections: 100000}}
	for i, n := range rate {
		s := metrics.Second{T: i + 1, Transactions: n, PayloadBytes: n * 1024}
		if i < len(conns) {
			s.OpenConns = conns[i]
		}
		r.Series = append(r.Series, s)
	}
	return r
}

// steady is 10 seconds at 100 a second with 50 connections open.
func steady() *metrics.Run {
	return sustainRun([]int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100},
		[]int64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50})
}

func criterion(t *testing.T, v analysis.Verdict, name string) analysis.Criterion {
	t.Helper()
	for _, c := range v.Criteria {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("verdict %+v has no criterion %q", v, name)
	return analysis.Criterion{}
}

func TestRFC9411Steady(t *testing.T) {
	for _, test := range []string{"7.6", "7.7", "7.9"} {
		v := analysis.RFC9411(steady(), test, 0)
		if !v.Pass || v.Reason() != "" || len(v.Criteria) != 4 || v.Test != test {
			t.Errorf("%s: a steady run without errors: %+v", test, v)
		}
	}
	v := analysis.RFC9411(steady(), "7.8", 20)
	if !v.Pass || len(v.Criteria) != 5 || v.Criteria[4].Name != analysis.CriterionTarget {
		t.Errorf("7.8 at its target: %+v", v)
	}
}

// Criterion a: failed transactions strictly below 0.001% of attempted;
// 1 in 100000 is exactly the limit, a fail.
func TestRFC9411Failed(t *testing.T) {
	for _, tc := range []struct {
		ok, failed int64
		class      vocab.Class
		pass       bool
	}{{100000, 0, "", true}, {99999, 1, vocab.ClassStatus, false}, {100000, 1, vocab.ClassEOF, true},
		{99998, 2, vocab.ClassStatus, false}} {
		r := steady()
		r.Transactions, r.Errors.Total = tc.ok, tc.failed
		if tc.failed > 0 {
			r.Errors.ByClass[tc.class] = tc.failed
		}
		v := analysis.RFC9411(r, "7.6", 0)
		c := criterion(t, v, analysis.CriterionFailed)
		want := 100 * float64(tc.failed) / float64(tc.ok+tc.failed)
		if c.Pass != tc.pass || v.Pass != tc.pass || math.Abs(c.Value-want) > 1e-12 || c.Limit != 0.001 {
			t.Errorf("%d of %d failed: %+v, want pass %v value %g", tc.failed, tc.ok+tc.failed, c, tc.pass, want)
		}
		if tc.class == vocab.ClassStatus && !strings.Contains(c.Note, "status other than 200") {
			t.Errorf("status errors not named: %q", c.Note)
		}
		if !tc.pass && v.Reason() != analysis.CriterionFailed {
			t.Errorf("reason %q", v.Reason())
		}
	}
	r := steady()
	r.Transactions = 0
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionFailed); c.Pass ||
		!strings.HasPrefix(c.Note, "not measured") {
		t.Errorf("nothing attempted: %+v", c)
	}
}

// Criterion b: resets from the tcp block or from the transactions failed
// by a reset, whichever is larger, below 0.001% of the connections; a
// record of a system without TCP_INFO fails, not measured.
func TestRFC9411Resets(t *testing.T) {
	for _, tc := range []struct {
		conns, tcpResets, failedResets int64
		pass                           bool
		value                          float64
	}{{100000, 0, 0, true, 0}, {100000, 1, 0, false, 0.001}, {200000, 1, 0, true, 0.0005},
		{100000, 0, 3, false, 0.003}, {100000, 2, 1, false, 0.002}} {
		r := steady()
		r.ConnectionsOpened, r.TCP.Connections, r.TCP.ResetsReceived = tc.conns, tc.conns, tc.tcpResets
		r.Errors.ByClass[vocab.ClassReset] = tc.failedResets
		c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionResets)
		if c.Pass != tc.pass || math.Abs(c.Value-tc.value) > 1e-12 {
			t.Errorf("%+v: %+v", tc, c)
		}
	}
	r := steady()
	r.TCP = &metrics.TCP{Unavailable: metrics.TCPUnavailable}
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionResets); c.Pass ||
		!strings.HasPrefix(c.Note, "not measured") {
		t.Errorf("tcp unavailable: %+v", c)
	}
	// No tcp block: the kernel's account was not read, b is not measured
	// (the reset errors alone miss the resets that failed no transaction).
	r = steady()
	r.TCP = nil
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionResets); c.Pass ||
		!strings.HasPrefix(c.Note, "not measured: the record has no tcp block") {
		t.Errorf("no tcp block: %+v", c)
	}
	// §7.9: the connections were opened in the ramp-up and held, none
	// opened in the window, measured at their close at the end: the whole
	// run's count, and a reset at a close after the window (its second's
	// count), judge them.
	r = steady()
	r.ConnectionsOpened, r.Whole.ConnectionsOpened, r.TCP.Connections = 0, 8, 8
	if c := criterion(t, analysis.RFC9411(r, "7.9", 8), analysis.CriterionResets); !c.Pass || c.Value != 0 {
		t.Errorf("8 held connections, no reset: %+v", c)
	}
	r.Series[len(r.Series)-1].TCPResets = 1
	if c := criterion(t, analysis.RFC9411(r, "7.9", 8), analysis.CriterionResets); c.Pass || c.Value != 12.5 {
		t.Errorf("8 held connections, one reset at its close: %+v, want a failure at 12.5%%", c)
	}
}

// TestRFC9411ResetsQUIC: over QUIC (no tcp block, no RST) criterion b is
// measured from the error classes: the connections a stateless reset or a
// transport CONNECTION_CLOSE ended, per QUIC connection.
func TestRFC9411ResetsQUIC(t *testing.T) {
	r := steady()
	r.TCP, r.Transport, r.QUIC = nil, "quic", &metrics.QUIC{Connections: 100001}
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionResets); !c.Pass || c.Value != 0 ||
		!strings.Contains(c.Note, "0 of 100001 QUIC connections") {
		t.Errorf("no reset over QUIC: %+v", c)
	}
	r.Errors.ByClass[vocab.ClassQUICStatelessReset], r.Errors.ByClass[vocab.ClassQUICTransport] = 1, 1
	r.Errors.ByClass[vocab.ClassReset] = 5 // no TCP over QUIC: never counted
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionResets); c.Pass ||
		math.Abs(c.Value-200.0/100001) > 1e-12 {
		t.Errorf("a stateless reset over QUIC: %+v, want a failure", c)
	}
}

// Criterion c: the whole seconds of the window (T 4 to 7, not 3 and 8,
// which its bounds cut, nor a partial one) within 5% of their mean.
func TestRFC9411Rate(t *testing.T) {
	for _, tc := range []struct {
		rate  []int64
		pass  bool
		value float64
	}{
		{[]int64{100, 100, 10, 100, 104, 96, 100, 10, 100}, true, 4},    // the cut seconds 3 and 8 left out
		{[]int64{100, 100, 100, 100, 105, 95, 100, 100, 100}, false, 5}, // exactly 5%: fails
		{[]int64{100, 100, 100, 100, 100, 50, 100, 100, 100}, false, 100.0 * 37.5 / 87.5},
		{[]int64{100, 100, 100, 0, 0, 0, 0, 100, 100}, false, 100},
	} {
		c := criterion(t, analysis.RFC9411(sustainRun(tc.rate, nil), "7.6", 0), analysis.CriterionRate)
		if c.Pass != tc.pass || math.Abs(c.Value-tc.value) > 1e-9 || !strings.Contains(c.Note, "4 whole seconds of 5") {
			t.Errorf("rates %v: %+v, want pass %v value %g", tc.rate, c, tc.pass, tc.value)
		}
	}
	// §7.7's rate is the payload bytes: equal transactions, one second's
	// bytes 10% short.
	r := sustainRun([]int64{100, 100, 100, 100, 100, 100, 100, 100}, nil)
	r.Series[4].PayloadBytes = 90 * 1024
	if c := criterion(t, analysis.RFC9411(r, "7.7", 0), analysis.CriterionRate); c.Pass ||
		!strings.Contains(c.Note, "payload bytes") {
		t.Errorf("7.7 with a second 10%% short in bytes: %+v", c)
	}
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionRate); !c.Pass {
		t.Errorf("7.6 counts transactions, not bytes: %+v", c)
	}
	// A partial last second and a window of one whole second: not measured.
	r = sustainRun([]int64{100, 100, 100, 100, 100, 100, 100, 100}, nil)
	r.DurationS = 1.6
	if c := criterion(t, analysis.RFC9411(r, "7.6", 0), analysis.CriterionRate); c.Pass ||
		!strings.HasPrefix(c.Note, "not measured") {
		t.Errorf("one whole second: %+v", c)
	}
}

// When the series marks phases, the sustain seconds are those it marks;
// of them, the ones cut by the window's bounds are still left out.
func TestRFC9411Phases(t *testing.T) {
	r := sustainRun([]int64{10, 50, 100, 100, 100, 100, 100, 100, 50, 5}, []int64{5, 25, 50, 50, 50, 50, 50, 50, 25, 3})
	phases := []vocab.TimelinePhase{vocab.TimelineRampUp, vocab.TimelineRampUp, vocab.TimelineWarmup,
		vocab.TimelineSustain, vocab.TimelineSustain, vocab.TimelineSustain, vocab.TimelineSustain,
		vocab.TimelineRampDown, vocab.TimelineRampDown, vocab.TimelineDrain}
	for i, p := range phases {
		r.Series[i].Phase = string(p)
	}
	r.SteadyStartS, r.DurationS = 3, 4 // seconds 4 to 7
	v := analysis.RFC9411(r, "7.9", 0)
	if !v.Pass {
		t.Errorf("ramps outside the sustain phase judged: %+v", v)
	}
	c := criterion(t, v, analysis.CriterionRate)
	if !strings.Contains(c.Note, "4 whole seconds of 4 marked sustain") {
		t.Errorf("rate note %q", c.Note)
	}
	r.Series[5].Phase = string(vocab.TimelineRampDown) // a ramp-down second inside the window: not sustain
	r.Series[8].Phase = string(vocab.TimelineSustain)  // marked, but outside the window: not whole
	r.Series[8].OpenConns = 50
	if c := criterion(t, analysis.RFC9411(r, "7.9", 0), analysis.CriterionRate); !strings.Contains(c.Note,
		"3 whole seconds of 4 marked sustain") {
		t.Errorf("rate note %q", c.Note)
	}
}

// Criterion d: every sustain second's open connections within 10% of their
// mean; a series without them fails, not measured.
func TestRFC9411Connections(t *testing.T) {
	rate := []int64{100, 100, 100, 100, 100, 100, 100, 100, 100}
	for _, tc := range []struct {
		conns []int64
		pass  bool
		value float64
	}{
		{[]int64{0, 0, 100, 100, 100, 100, 100, 0, 0}, true, 0},
		{[]int64{0, 0, 100, 100, 109, 95, 101, 0, 0}, true, 8},              // mean 101: 109 is 7.9% above
		{[]int64{0, 0, 100, 100, 100, 100, 125, 0, 0}, false, 2000.0 / 105}, // mean 105: 125 is 19%
	} {
		c := criterion(t, analysis.RFC9411(sustainRun(rate, tc.conns), "7.9", 0), analysis.CriterionConnections)
		if c.Pass != tc.pass || math.Abs(c.Value-tc.value) > 0.1 {
			t.Errorf("conns %v: %+v, want pass %v value ≈ %g", tc.conns, c, tc.pass, tc.value)
		}
	}
	c := criterion(t, analysis.RFC9411(sustainRun(rate, nil), "7.6", 0), analysis.CriterionConnections)
	if c.Pass || !strings.Contains(c.Note, "not measured") {
		t.Errorf("no open_conns: %+v", c)
	}
	// §7.9's target, the connections asked, judges each second: 100 held
	// steadily of 125 asked fails at 20%; of 105 asked, passes at 4.8%.
	held := sustainRun(rate, []int64{0, 0, 100, 100, 100, 100, 100, 0, 0})
	if c := criterion(t, analysis.RFC9411(held, "7.9", 125), analysis.CriterionConnections); c.Pass ||
		c.Value != 20 || !strings.Contains(c.Note, "(80.0% of the 125 asked") {
		t.Errorf("7.9, 100 held of 125 asked: %+v, want a fail at 20%%", c)
	}
	if c := criterion(t, analysis.RFC9411(held, "7.9", 105), analysis.CriterionConnections); !c.Pass ||
		math.Abs(c.Value-100.0*5/105) > 1e-9 {
		t.Errorf("7.9, 100 held of 105 asked: %+v, want a pass at 4.8%%", c)
	}
}

// Criterion e (§7.8): the window's rate at most 5% below the target.
func TestRFC9411Target(t *testing.T) {
	for _, tc := range []struct {
		transactions int64
		target       float64
		pass         bool
		value        float64
	}{{500, 100, true, 0}, {480, 100, true, 4}, {475, 100, false, 5}, {250, 100, false, 50}, {600, 100, true, 0}} {
		r := steady()
		r.Transactions = tc.transactions
		c := criterion(t, analysis.RFC9411(r, "7.8", tc.target), analysis.CriterionTarget)
		if c.Pass != tc.pass || math.Abs(c.Value-tc.value) > 1e-9 || !strings.Contains(c.Note, "tlsbench's") {
			t.Errorf("%d transactions in 5 s, target %g/s: %+v", tc.transactions, tc.target, c)
		}
	}
	c := criterion(t, analysis.RFC9411(steady(), "7.8", 0), analysis.CriterionTarget)
	if c.Pass || !strings.HasPrefix(c.Note, "not measured") {
		t.Errorf("no target: %+v", c)
	}
	if v := analysis.RFC9411(steady(), "7.6", 100); len(v.Criteria) != 4 {
		t.Errorf("7.6 judged by a target: %+v", v)
	}
}

// A run that measured nothing, and a test RFC 9411 does not have, fail on
// one criterion.
func TestRFC9411NotMeasured(t *testing.T) {
	r := steady()
	r.Preflight = &metrics.Preflight{Class: vocab.ClassRefused}
	v := analysis.RFC9411(r, "7.6", 0)
	if v.Pass || len(v.Criteria) != 1 || v.Reason() != analysis.CriterionMeasured ||
		!strings.Contains(v.Criteria[0].Note, "preflight failed") {
		t.Errorf("failed preflight: %+v", v)
	}
	if v := analysis.RFC9411(steady(), "7.5", 0); v.Pass || v.Reason() != analysis.CriterionMeasured {
		t.Errorf("test 7.5: %+v", v)
	}
}

// A missed SHOULD (c: the rate not constant) is a deviation the verdict
// states: the run passes; a missed MUST (a) fails it.
func TestRFC9411Levels(t *testing.T) {
	r := sustainRun([]int64{100, 100, 100, 100, 100, 50, 100, 100, 100}, nil)
	v := analysis.RFC9411(r, "7.6", 0)
	c := criterion(t, v, analysis.CriterionRate)
	if c.Pass || c.Level != analysis.LevelShould {
		t.Fatalf("rate criterion %+v: want missed, a SHOULD", c)
	}
	if dev := v.Deviations(); !slices.Contains(dev, analysis.CriterionRate) {
		t.Errorf("deviations %v: want %q", dev, analysis.CriterionRate)
	}
	if v.Reason() == analysis.CriterionRate {
		t.Errorf("a missed SHOULD is the verdict's reason: %+v", v)
	}
	if c := criterion(t, v, analysis.CriterionFailed); c.Level != analysis.LevelMust {
		t.Errorf("failed transactions: level %q, want MUST", c.Level)
	}
	if c := criterion(t, analysis.RFC9411(r, "7.9", 0), analysis.CriterionConnections); c.Level != analysis.LevelMust {
		t.Errorf("7.9's connections: level %q, want MUST (its KPI)", c.Level)
	}
}
