package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Criterion is one of RFC 9411's test results validation criteria as a run
// met it or not: its name, the rule as the RFC states it, the value the run
// measured and the limit it is held to.
type Criterion struct {
	Name  string  `json:"name"`
	Rule  string  `json:"rule"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Pass  bool    `json:"pass"`
	// Level is the RFC's keyword for the criterion: LevelMust (a run that
	// misses it fails) or LevelShould (a run that misses it passes with the
	// deviation stated).
	Level string `json:"level"`
	// Note says why a criterion could not be judged, or how it was.
	Note string `json:"note,omitempty"`
}

// The RFC's requirement levels of a criterion (RFC 2119).
const (
	LevelMust   = "MUST"
	LevelShould = "SHOULD"
)

// Verdict is a run's pass or fail under the criteria of its RFC 9411 test.
type Verdict struct {
	Test     string      `json:"test"` // 7.6, 7.7, 7.8 or 7.9
	Pass     bool        `json:"pass"`
	Criteria []Criterion `json:"criteria"`
}

// Reason is the first failed MUST criterion's name, "" when the run passed.
func (v Verdict) Reason() string {
	for _, c := range v.Criteria {
		if !c.Pass && c.Level != LevelShould {
			return c.Name
		}
	}
	return ""
}

// Deviations are the names of the SHOULD criteria the run missed: it passed
// (if nothing else failed), with these stated.
func (v Verdict) Deviations() []string {
	var out []string
	for _, c := range v.Criteria {
		if !c.Pass && c.Level == LevelShould {
			out = append(out, c.Name)
		}
	}
	return out
}

// The criteria's names, in the order a Verdict lists them.
const (
	CriterionMeasured    = "measured"
	CriterionFailed      = "failed transactions"
	CriterionResets      = "TCP resets"
	CriterionRate        = "constant rate"
	CriterionConnections = "constant connections"
	CriterionTarget      = "target objective"
)

// The limits of the criteria. The first four are RFC 9411's (§7.6.3.3,
// §7.7.3.3, §7.8.3.3, §7.9.3.3); TargetTolerance is tlsbench's own: the RFC
// says the latency test "MUST achieve the target objective" and does not
// say how closely.
const (
	MaxFailedPercent     = 0.001 // failed transactions, % of attempted
	MaxResetPercent      = 0.001 // connections ended by the device's RST, % of initiated
	RateTolerance        = 5.0   // % deviation of a sustain second's rate from the mean
	ConnectionsTolerance = 10.0  // % deviation of the open connections from the mean
	TargetTolerance      = 5.0   // % the sustain rate may fall short of the target
)

// RFC9411Tests are the HTTPS tests of RFC 9411 a verdict is made for.
var RFC9411Tests = []string{"7.6", "7.7", "7.8", "7.9"}

// RFC9411 judges r by the criteria of RFC 9411 test ("7.6", "7.7", "7.8",
// "7.9"); target is the objective the run was given (§7.8: the rate it was
// to hold, transactions per second; §7.9: the connections it was to hold,
// which the note of d compares with the mean held; 0 when none).
//
// Every test is held to the failed transactions (a), the device's resets
// (b), a constant rate (c) and constant concurrent connections (d); §7.8
// also to its target objective (e). As the RFC words them, a, b and e are
// MUSTs, c and d SHOULDs (d a MUST in §7.9, whose KPI the connections held
// are): a missed SHOULD is a deviation the verdict states, not a failure. A
// criterion the record cannot show (no tcp block, no open connections
// counted, no whole sustain second) is missed, its note saying what is
// missing: a lab does not pass what it cannot see. A run that measured
// nothing (its preflight failed, it was aborted) fails on one criterion,
// measured.
func RFC9411(r *metrics.Run, test string, target float64) Verdict {
	v := Verdict{Test: test}
	switch {
	case !slices.Contains(RFC9411Tests, test):
		v.Criteria = []Criterion{{Name: CriterionMeasured, Rule: "one of RFC 9411's HTTPS tests (7.6 to 7.9)",
			Level: LevelMust, Note: fmt.Sprintf("%q is not an RFC 9411 HTTPS test", test)}}
	case r.Failed() != "":
		v.Criteria = []Criterion{{Name: CriterionMeasured, Rule: "the test was run", Level: LevelMust,
			Note: r.Failed()}}
	default:
		w := sustainOf(r)
		v.Criteria = []Criterion{failedCriterion(r), resetCriterion(r), rateCriterion(test, w),
			connectionsCriterion(test, w, target)}
		if test == "7.8" {
			v.Criteria = append(v.Criteria, targetCriterion(r, target, w))
		}
	}
	v.Pass = v.Reason() == ""
	return v
}

// failedCriterion is criterion a: the window's failed transactions (every
// error class, a status other than 200 among them) per attempted one.
func failedCriterion(r *metrics.Run) Criterion {
	c := Criterion{Name: CriterionFailed, Limit: MaxFailedPercent, Level: LevelMust,
		Rule: "failed application transactions MUST be less than 0.001% of attempted transactions"}
	attempted := r.Transactions + r.Errors.Total
	if attempted == 0 {
		c.Note = "not measured: no transaction was attempted in the sustain window"
		return c
	}
	c.Value = 100 * float64(r.Errors.Total) / float64(attempted)
	c.Pass = c.Value < c.Limit
	c.Note = fmt.Sprintf("%d failed of %d attempted", r.Errors.Total, attempted)
	if n := r.Errors.ByClass[vocab.ClassStatus]; n > 0 {
		c.Note += fmt.Sprintf(" (%d with a status other than 200)", n)
	}
	if r.Load.Dropped > 0 {
		c.Note += fmt.Sprintf("; %d open-loop starts dropped by the generator are not counted", r.Load.Dropped)
	}
	return c
}

// resetCriterion is criterion b: the run's connections the device ended
// with a TCP RST, per connection initiated, over the whole test (the RFC
// counts "total initiated TCP connections": §7.9's are opened in the ramp
// and held through the sustain phase, none of them opened in it). The
// kernel's account of each connection at its close (the seconds'
// tcp_resets_received, the window's tcp block) and the transactions failed
// by a reset overlap, so the larger count is taken. Without the kernel's
// account (no tcp block, or tcp.unavailable: not Linux) the resets that
// failed no transaction are not seen, and b is not measured.
func resetCriterion(r *metrics.Run) Criterion {
	c := Criterion{Name: CriterionResets, Limit: MaxResetPercent, Level: LevelMust,
		Rule: "connections terminated by an unexpected TCP RST from the DUT MUST be less than 0.001% " +
			"of initiated connections"}
	if r.QUIC != nil {
		return quicResetCriterion(r, c)
	}
	failed := r.Errors.ByClass[vocab.ClassReset]
	var kernel int64
	for _, s := range r.Series {
		kernel += s.TCPResets
	}
	initiated := max(r.Whole.ConnectionsOpened, r.ConnectionsOpened)
	measured := hasTCP(r)
	if measured {
		kernel = max(kernel, r.TCP.ResetsReceived)
		initiated = max(initiated, r.TCP.Connections)
	}
	resets := max(failed, kernel)
	if initiated == 0 {
		c.Note = "not measured: the run opened no connection"
		return c
	}
	c.Value = 100 * float64(resets) / float64(initiated)
	if !measured {
		why := "the record has no tcp block (TCP_INFO was not read at the connections' close)"
		if r.TCP != nil {
			why = fmt.Sprintf("the tcp block is unavailable (%s)", r.TCP.Unavailable)
		}
		c.Note = fmt.Sprintf("not measured: %s; only the %d resets that failed a transaction were seen, "+
			"of %d connections", why, failed, initiated)
		return c
	}
	c.Note = fmt.Sprintf("%d reset of %d connections, whole run (TCP_INFO at each close: %d resets received, "+
		"%d connections measured in the window; %d transactions of the window failed by a reset)",
		resets, initiated, kernel, r.TCP.Connections, failed)
	c.Pass = c.Value < c.Limit
	return c
}

// quicResetCriterion is criterion b over QUIC, which has no TCP RST: the
// connections the device ended abruptly (a stateless reset or its
// CONNECTION_CLOSE with a transport error) per connection initiated.
// Each fails the transaction it carried, so the error classes see them
// all: measured without TCP_INFO.
func quicResetCriterion(r *metrics.Run, c Criterion) Criterion {
	c.Rule = "connections terminated by an unexpected stateless reset or transport CONNECTION_CLOSE from the DUT " +
		"(QUIC's RST) MUST be less than 0.001% of initiated connections"
	resets := r.Errors.ByClass[vocab.ClassQUICStatelessReset] + r.Errors.ByClass[vocab.ClassQUICTransport]
	initiated := max(r.Whole.ConnectionsOpened, r.ConnectionsOpened, r.QUIC.Connections)
	if initiated == 0 {
		c.Note = "not measured: the run opened no connection"
		return c
	}
	c.Value = 100 * float64(resets) / float64(initiated)
	c.Pass = c.Value < c.Limit
	c.Note = fmt.Sprintf("%d of %d QUIC connections ended by a stateless reset or a transport error "+
		"(over QUIC: no TCP RST, no TCP_INFO)", resets, initiated)
	return c
}

// sustain is a run's sustain phase in its per-second series.
type sustain struct {
	start, end float64 // the window, seconds since the run started
	// seconds are those that ended in the sustain phase; whole, of those,
	// the ones that lie within the window entirely (the rates).
	seconds, whole []metrics.Second
	byPhase        bool // the series marks the phases
}

// eps absorbs the rounding of the window's bounds (milliseconds in JSON).
const eps = 1e-3

// sustainOf finds r's sustain seconds: those the series marks sustain when
// it marks phases, else those that ended in the steady window [start,
// start+duration]. The whole ones began at or after the window's start and
// ended by its end, and are not the run's partial last second: the window's
// first and last seconds, cut by its bounds, are not rates of a second.
func sustainOf(r *metrics.Run) sustain {
	w := sustain{start: r.SteadyStartS, end: r.SteadyStartS + r.DurationS}
	for _, s := range r.Series {
		if s.Phase != "" {
			w.byPhase = true
		}
	}
	for _, s := range r.Series {
		t := float64(s.T)
		in := t > w.start+eps && t <= w.end+eps
		if w.byPhase {
			in = s.Phase == string(vocab.TimelineSustain)
		}
		if !in {
			continue
		}
		w.seconds = append(w.seconds, s)
		if !s.Partial && t-1 >= w.start-eps && t <= w.end+eps {
			w.whole = append(w.whole, s)
		}
	}
	return w
}

// describe says which seconds were judged.
func (w sustain) describe(n int) string {
	how := "ended in the steady window"
	if w.byPhase {
		how = "marked sustain"
	}
	return fmt.Sprintf("%d whole seconds of %d %s [%.1f s, %.1f s]", n, len(w.seconds), how, w.start, w.end)
}

// rateOf is a second's rate: the payload bytes of the throughput test
// (§7.7), the successful transactions of the others.
func rateOf(test string, s metrics.Second) float64 {
	if test == "7.7" {
		return float64(s.PayloadBytes)
	}
	return float64(s.Transactions)
}

// rates are the seconds' rates (rateOf).
func rates(test string, ss []metrics.Second) []float64 {
	vs := make([]float64, len(ss))
	for i, s := range ss {
		vs[i] = rateOf(test, s)
	}
	return vs
}

// maxDeviation is the largest deviation of vs from their mean, in percent
// of the mean (infinite when the mean is 0), the index of the value that
// deviates most, and the mean.
func maxDeviation(vs []float64) (dev float64, worst int, mean float64) {
	for _, v := range vs {
		mean += v
	}
	mean /= float64(len(vs))
	for i, v := range vs {
		if math.Abs(v-mean) > math.Abs(vs[worst]-mean) {
			worst = i
		}
	}
	if mean == 0 {
		return math.Inf(1), worst, 0
	}
	return 100 * math.Abs(vs[worst]-mean) / mean, worst, mean
}

// rateCriterion is criterion c: every whole sustain second's rate within
// RateTolerance of the sustain mean.
func rateCriterion(test string, w sustain) Criterion {
	unit := "successful transactions per second"
	if test == "7.7" {
		unit = "payload bytes per second"
	}
	c := Criterion{Name: CriterionRate, Limit: RateTolerance, Level: LevelShould,
		Rule: "during the sustain phase traffic SHOULD be forwarded at a constant rate (deviation less than 5%)"}
	if len(w.whole) < 2 {
		c.Note = "not measured: " + w.describe(len(w.whole)) + "; two are needed"
		return c
	}
	vs := rates(test, w.whole)
	dev, worst, mean := maxDeviation(vs)
	c.Value, c.Pass = dev, dev < c.Limit
	c.Note = fmt.Sprintf("%s: mean %.6g %s; farthest from it: second %d at %.6g", w.describe(len(vs)), mean, unit,
		w.whole[worst].T, vs[worst])
	if mean == 0 {
		c.Value = 100
		c.Note = fmt.Sprintf("%s: nothing forwarded (mean 0 %s)", w.describe(len(vs)), unit)
	}
	return c
}

// HeldConnections is §7.9's KPI, the connections held: the mean of
// heldSeries, as criterion d, the table, the summary and the report take
// it; ok is false when nothing was counted (not measured, not the level).
func HeldConnections(r *metrics.Run) (held float64, ok bool) {
	vs, _, ok := heldSeries(sustainOf(r))
	if !ok {
		return 0, false
	}
	_, _, held = maxDeviation(vs)
	return held, true
}

// heldSeries is each sustain second's connections: its 10 ms samples' mean,
// else those open at its end; 0 (not skipped) when it counted none; ok
// when one counted some.
func heldSeries(w sustain) (vs []float64, how string, ok bool) {
	vs, how = make([]float64, len(w.seconds)), "open at each second's end"
	for i, s := range w.seconds {
		vs[i] = float64(s.OpenConns)
		if s.OpenConnsMean > 0 {
			vs[i], how = s.OpenConnsMean, "the mean of each second's 10 ms samples"
		}
		ok = ok || vs[i] > 0
	}
	return vs, how, ok
}

// connectionsCriterion is criterion d: each sustain second's concurrent
// connections (heldSeries) within ConnectionsTolerance of their mean (§7.9,
// given the connections asked: of those; the mean is the KPI,
// HeldConnections, set beside target).
func connectionsCriterion(test string, w sustain, target float64) Criterion {
	c := Criterion{Name: CriterionConnections, Limit: ConnectionsTolerance, Level: LevelShould,
		Rule: "concurrent TCP connections MUST be constant during the sustain phase (deviation SHOULD be less than 10%)"}
	if test == "7.9" {
		c.Level = LevelMust
		c.Rule = "the concurrent TCP connections MUST be held constant during the sustain phase (deviation less than 10%)"
	}
	vs, how, counted := heldSeries(w)
	switch {
	case len(vs) == 0:
		c.Note = "not measured: no second ended in the sustain phase"
		return c
	case !counted:
		c.Note = "not measured: the series has no open connections counted (open_conns)"
		return c
	}
	dev, _, mean := maxDeviation(vs)
	lo, hi := slicesMinMax(vs)
	c.Value, c.Pass = dev, dev < c.Limit
	c.Note = fmt.Sprintf("%d sustain seconds: mean %.1f open connections (%s), min %.1f, max %.1f", len(vs), mean,
		how, lo, hi)
	if test == "7.9" && target > 0 {
		// The connections held are the KPI: each second against those
		// asked, not only against the others.
		c.Value = 100 * max(target-lo, hi-target) / target
		c.Pass = c.Value < c.Limit
		c.Note += fmt.Sprintf(" (%.1f%% of the %.0f asked; the farthest second %.1f%% from them)", 100*mean/target,
			target, c.Value)
	}
	return c
}

func slicesMinMax(vs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// targetCriterion is criterion e (§7.8): the sustain phase's rate, the
// window's successful transactions per second, reaches target, within
// TargetTolerance (tlsbench's). That every second held it is criterion c.
func targetCriterion(r *metrics.Run, target float64, w sustain) Criterion {
	c := Criterion{Name: CriterionTarget, Limit: TargetTolerance, Level: LevelMust,
		Rule: "the DUT MUST achieve the target objective and remain in that state for the entire sustain phase"}
	if target <= 0 {
		c.Note = "not measured: the run was given no target objective"
		return c
	}
	if r.DurationS <= 0 {
		c.Note = "not measured: the record has no sustain window"
		return c
	}
	achieved := float64(r.Transactions) / r.DurationS
	c.Value = 100 * max(0, target-achieved) / target
	c.Pass = c.Value < c.Limit
	c.Note = fmt.Sprintf("target %.6g transactions/s, sustain mean %.6g (short by %.2f%%; the 5%% "+
		"tolerance is tlsbench's, the RFC gives none)", target, achieved, c.Value)
	if len(w.whole) > 0 {
		lo, _ := slicesMinMax(rates("7.8", w.whole))
		c.Note += fmt.Sprintf(", lowest whole second %.6g", lo)
	}
	return c
}
