// Package impact runs and analyses impact studies: the same load against a
// baseline and a candidate, interleaved round by round, compared with
// package stats (is the candidate slower, the same, or can these rounds not
// tell?) and side by side in Siege's terms.
package impact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// The sides of an impact study.
const (
	BaselineSide  = "baseline"
	CandidateSide = "candidate"
)

// The schema versions of the study's outputs (their JSON Schemas are in
// package schemas).
const (
	Schema     = "tlsbench/impact/v1"      // a Report as JSON
	RunsSchema = "tlsbench/impact-runs/v1" // Runs as JSON (impact --json)
)

// ErrInterrupted is returned when the study stopped between runs because
// its context was cancelled.
var ErrInterrupted = errors.New("impact study interrupted")

// Study is an A/B study: the same load against a baseline and a candidate,
// interleaved (baseline, candidate, baseline, …) for Rounds rounds so that
// drift hits both sides alike.
type Study struct {
	Baseline, Candidate *runner.Spec
	Rounds              int
	Cooldown            time.Duration
	// Run makes one run; default runner.Run.
	Run func(ctx context.Context, spec *runner.Spec) (*metrics.Run, error)
	// Events, if set, is called after every run.
	Events func(side string, round int, r *metrics.Run)
}

// FailedRunError stops a study at a run that measured nothing of its own:
// its preflight failed or it was aborted (metrics.Run.Failed).
type FailedRunError struct {
	Side  string
	Round int
	Run   *metrics.Run
}

func (e *FailedRunError) Error() string {
	return fmt.Sprintf("%s, round %d: %s", e.Side, e.Round, e.Run.Failed())
}

// Runs are the records of both sides, round by round.
type Runs struct {
	Baseline  []*metrics.Run `json:"baseline"`
	Candidate []*metrics.Run `json:"candidate"`
}

// Do runs the rounds. Cancelling ctx stops after the run in progress; the
// rounds done so far are returned with ErrInterrupted.
func (im *Study) Do(ctx context.Context) (*Runs, error) {
	run := im.Run
	if run == nil {
		run = runner.Run
	}
	out := &Runs{}
	for round := 1; round <= im.Rounds; round++ {
		for _, side := range []struct {
			name string
			spec *runner.Spec
			runs *[]*metrics.Run
		}{{BaselineSide, im.Baseline, &out.Baseline}, {CandidateSide, im.Candidate, &out.Candidate}} {
			if ctx.Err() != nil {
				return out, ErrInterrupted
			}
			r, err := run(context.WithoutCancel(ctx), side.spec)
			if err != nil {
				return out, fmt.Errorf("%s, round %d: %w", side.name, round, err)
			}
			*side.runs = append(*side.runs, r)
			if r.Failed() != "" {
				return out, &FailedRunError{Side: side.name, Round: round, Run: r}
			}
			if im.Events != nil {
				im.Events(side.name, round, r)
			}
			select {
			case <-time.After(im.Cooldown):
			case <-ctx.Done():
			}
		}
	}
	return out, nil
}

// MarshalJSON writes the report with Siege's keys: {"metrics": {KEY:
// {"baseline", "candidate", "delta", "delta_pct", "significant"}}, …}.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report // its fields from response_time_shift to summary, without this method
	return json.Marshal(struct {
		Schema  string            `json:"schema"`
		Metrics map[string]Metric `json:"metrics"`
		Latency map[string]Metric `json:"latency"`
		*plain
		Bound     float64           `json:"equivalence_bound_pct"`
		Baseline  analysis.Siege    `json:"baseline"`
		Candidate analysis.Siege    `json:"candidate"`
		TCP       map[string]Metric `json:"tcp,omitempty"`
	}{Schema, byKey(r.Metrics), byKey(r.Phases), (*plain)(r), r.ResponseTime.EquivalenceBoundPct,
		r.Baseline, r.Candidate, tcpByKey(r.TCP)})
}

// Report is the analysis of an impact study.
type Report struct {
	// Metrics are Siege's, in its order, keyed by its JSON names.
	Metrics []Metric `json:"-"`
	// Phases are the latency percentiles per phase (ms).
	Phases []Metric `json:"-"`
	// ResponseTime compares the rounds' mean response times (ms): the
	// rounds, not the seconds of one run, are the independent samples.
	ResponseTime stats.Shift `json:"response_time_shift"`
	// Rate compares the rounds' transaction rates (/s).
	Rate stats.Shift `json:"transaction_rate_shift"`
	// Rounds are each round's transaction rate and response time.
	Rounds []Round `json:"rounds"`
	// Verdict is the response-time shift's; Summary says it in words
	// (ShiftSummary).
	Verdict string `json:"verdict"`
	Summary string `json:"summary"`
	// Siege is each side's pooled summary.
	Baseline, Candidate analysis.Siege `json:"-"`
	// TCP is the kernel's account of each side's connections (tcp.go).
	TCP []Metric `json:"-"`
	// Protocol carried both sides' runs: http/1.1, http/2.
	Protocol string `json:"protocol"`
}

// Metric is one metric side by side.
type Metric struct {
	Key         string  `json:"-"`
	Label       string  `json:"-"`
	Unit        string  `json:"-"`
	Baseline    float64 `json:"baseline"`
	Candidate   float64 `json:"candidate"`
	Delta       float64 `json:"delta"`
	DeltaPct    float64 `json:"delta_pct"`
	Significant bool    `json:"significant"`
	// Verdict is that of the shift that tests the metric, if Tested.
	Verdict string `json:"verdict,omitempty"`
	// Tested: a significance test applies to the metric.
	Tested bool `json:"-"`
}

// Round is one round of both sides.
type Round struct {
	Round                   int     `json:"round"`
	BaselineRate            float64 `json:"baseline_transaction_rate"`
	CandidateRate           float64 `json:"candidate_transaction_rate"`
	BaselineResponseTimeMS  float64 `json:"baseline_response_time_ms"`
	CandidateResponseTimeMS float64 `json:"candidate_response_time_ms"`
}

// AnalyzeWithin compares the two sides; a shift within boundPct percent of
// the baseline is no difference.
func AnalyzeWithin(runs *Runs, boundPct float64) (*Report, error) {
	b, err := analysis.SiegeOf(runs.Baseline...)
	if err != nil {
		return nil, err
	}
	c, err := analysis.SiegeOf(runs.Candidate...)
	if err != nil {
		return nil, err
	}
	rep := &Report{Baseline: b, Candidate: c, Protocol: vocab.DefaultProtocol}
	if len(runs.Baseline) > 0 { // both sides' spec is one but for its target
		rep.Protocol = runs.Baseline[0].ProtocolName()
	}
	bMean, bRate, err := perRound(runs.Baseline)
	if err != nil {
		return nil, err
	}
	cMean, cRate, err := perRound(runs.Candidate)
	if err != nil {
		return nil, err
	}
	rep.ResponseTime = stats.ShiftWithin(bMean, cMean, boundPct)
	rep.Rate = stats.ShiftWithin(bRate, cRate, boundPct)
	latency, rate := &rep.ResponseTime, &rep.Rate
	add := func(key, label, unit string, bv, cv float64, tested bool, by *stats.Shift) {
		m := newMetric(key, label, unit, bv, cv)
		m.Tested = tested
		if tested {
			m.Significant, m.Verdict = by.Significant, by.Verdict
		}
		rep.Metrics = append(rep.Metrics, m)
	}
	add("transactions", "Transactions", "hits", float64(b.Transactions), float64(c.Transactions), true, rate)
	add("availability", "Availability", "%", b.Availability, c.Availability, false, nil)
	add("elapsed_time", "Elapsed time", "s", b.ElapsedTime, c.ElapsedTime, false, nil)
	add("data_transferred", "Data transferred", "MB", b.DataTransferred, c.DataTransferred, true, rate)
	add("response_time", "Response time", "s", b.ResponseTime, c.ResponseTime, true, latency)
	add("transaction_rate", "Transaction rate", "trans/s", b.TransactionRate, c.TransactionRate, true, rate)
	add("throughput", "Throughput", "MB/s", b.Throughput, c.Throughput, true, rate)
	add("concurrency", "Concurrency", "", b.Concurrency, c.Concurrency, true, latency)
	add("successful_transactions", "Successful transactions", "",
		float64(b.SuccessfulTransactions), float64(c.SuccessfulTransactions), false, nil)
	add("failed_transactions", "Failed transactions", "",
		float64(b.FailedTransactions), float64(c.FailedTransactions), false, nil)
	add("longest_transaction", "Longest transaction", "s", b.LongestTransaction, c.LongestTransaction, false, nil)
	add("shortest_transaction", "Shortest transaction", "s", b.ShortestTransaction, c.ShortestTransaction, false, nil)

	for _, ph := range []vocab.Phase{vocab.PhaseConnect, vocab.PhaseHandshake, vocab.PhaseTTFB, vocab.PhaseTotal} {
		hb, err := analysis.Pooled(ph, runs.Baseline...)
		if err != nil {
			return nil, err
		}
		hc, err := analysis.Pooled(ph, runs.Candidate...)
		if err != nil {
			return nil, err
		}
		for _, q := range []float64{50, 90, 99} {
			bv := float64(metrics.ValueAtPercentile(hb, q)) / 1000
			cv := float64(metrics.ValueAtPercentile(hc, q)) / 1000
			rep.Phases = append(rep.Phases,
				newMetric(fmt.Sprintf("%s_p%g_ms", ph, q), fmt.Sprintf("%s p%g", ph, q), "ms", bv, cv))
		}
	}
	for i := range min(len(bMean), len(cMean)) {
		rep.Rounds = append(rep.Rounds, Round{Round: i + 1, BaselineRate: bRate[i], CandidateRate: cRate[i],
			BaselineResponseTimeMS: bMean[i], CandidateResponseTimeMS: cMean[i]})
	}
	if rep.TCP, err = tcpMetrics(runs.Baseline, runs.Candidate); err != nil {
		return nil, err
	}
	rep.Verdict = rep.ResponseTime.Verdict
	rep.Summary = ShiftSummary(rep.ResponseTime)
	return rep, nil
}

// ShiftSummary says the response-time shift s in words: the verdict, the size,
// the 95% interval, p, the equivalence bound and, when inconclusive, the
// reason and the rounds needed.
func ShiftSummary(s stats.Shift) string {
	n := s.RoundsText() + " a side"
	bound := fmt.Sprintf("±%g%% of the baseline, ±%.3g ms", s.EquivalenceBoundPct, s.EquivalenceBound)
	switch s.Verdict {
	case stats.VerdictSignificant:
		verb := "adds"
		if s.Delta < 0 {
			verb = "saves"
		}
		within := "equivalence bound"
		if math.Abs(s.Delta)+s.CI98 < s.EquivalenceBound {
			within = "yet within the equivalence bound"
		}
		return fmt.Sprintf("significant: candidate %s %.3g ms ± %.3g ms per request (%+.1f%%; %s, %s; %s %s)",
			verb, math.Abs(s.Delta), s.CI95, pct(s.Delta, s.Baseline.Mean), pText(s), n, within, bound)
	case stats.VerdictEquivalent:
		return fmt.Sprintf("equivalent: no difference in response time larger than %s "+
			"(shift %+.3g ms, 98%% interval ± %.3g ms inside the bound; %s, %s)",
			bound, s.Delta, s.CI98, pText(s), n)
	}
	return fmt.Sprintf("inconclusive: response time shift %+.3g ms ± %.3g ms (%+.1f%%; %s, equivalence bound %s): %s",
		s.Delta, s.CI95, pct(s.Delta, s.Baseline.Mean), pText(s), bound, s.Reason)
}

// byKey keys metrics by their JSON names.
func byKey(ms []Metric) map[string]Metric {
	out := make(map[string]Metric, len(ms))
	for _, m := range ms {
		out[m.Key] = m
	}
	return out
}

// newMetric is a metric measured bv in the baseline, cv in the candidate.
func newMetric(key, label, unit string, bv, cv float64) Metric {
	return Metric{Key: key, Label: label, Unit: unit, Baseline: bv, Candidate: cv,
		Delta: cv - bv, DeltaPct: pct(cv-bv, bv)}
}

func pct(delta, base float64) float64 {
	if base == 0 {
		return 0
	}
	return 100 * delta / base
}

// pText writes the shift's p, and "(normal approximation)" after it when
// it is not exact.
func pText(s stats.Shift) string {
	if s.P < 0.001 {
		return "p < 0.001" + s.PNote()
	}
	return fmt.Sprintf("p = %.2g%s", s.P, s.PNote())
}

// perRound returns each run's steady-window mean response time (ms) and
// transaction rate (/s): one sample per round.
func perRound(runs []*metrics.Run) (mean, rate []float64, err error) {
	for _, r := range runs {
		s, err := analysis.SiegeOf(r)
		if err != nil {
			return nil, nil, err
		}
		mean = append(mean, s.ResponseTime*1000)
		rate = append(rate, s.TransactionRate)
	}
	return mean, rate, nil
}
