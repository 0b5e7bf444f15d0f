package method

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// The sides of an impact study.
const (
	BaselineSide  = "baseline"
	CandidateSide = "candidate"
)

// Impact is an A/B study: the same load against a baseline and a candidate,
// interleaved (baseline, candidate, baseline, …) for Rounds rounds so that
// drift hits both sides alike.
type Impact struct {
	Baseline, Candidate *job.Spec
	Rounds              int
	Cooldown            time.Duration
	// Run makes one run; default job.Run.
	Run func(ctx context.Context, spec *job.Spec) (*metrics.Run, error)
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

// ImpactRuns are the records of both sides, round by round.
type ImpactRuns struct {
	Baseline  []*metrics.Run `json:"baseline"`
	Candidate []*metrics.Run `json:"candidate"`
}

// Do runs the rounds. Cancelling ctx stops after the run in progress; the
// rounds done so far are returned with ErrInterrupted.
func (im *Impact) Do(ctx context.Context) (*ImpactRuns, error) {
	run := im.Run
	if run == nil {
		run = job.Run
	}
	out := &ImpactRuns{}
	for round := 1; round <= im.Rounds; round++ {
		for _, side := range []struct {
			name string
			spec *job.Spec
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
				// Its preflight failed (no load sent) or it was
				// aborted: the study has no value from here on.
				return out, &FailedRunError{Side: side.name, Round: round, Run: r}
			}
			if im.Events != nil {
				im.Events(side.name, round, r)
			}
			sleepCtx(ctx, im.Cooldown)
		}
	}
	return out, nil
}

// MarshalJSON writes the report with Siege's keys: {"metrics": {KEY:
// {"baseline", "candidate", "delta", "delta_pct", "significant"}}, …}.
func (r *ImpactReport) MarshalJSON() ([]byte, error) {
	m := make(map[string]ImpactMetric, len(r.Metrics))
	for _, x := range r.Metrics {
		m[x.Key] = x
	}
	ph := make(map[string]ImpactMetric, len(r.Phases))
	for _, x := range r.Phases {
		ph[x.Key] = x
	}
	return json.Marshal(struct {
		Metrics      map[string]ImpactMetric `json:"metrics"`
		Latency      map[string]ImpactMetric `json:"latency"`
		ResponseTime Shift                   `json:"response_time_shift"`
		Rate         Shift                   `json:"transaction_rate_shift"`
		Rounds       []ImpactRound           `json:"rounds"`
		Verdict      string                  `json:"verdict"`
		Baseline     metrics.Siege           `json:"baseline"`
		Candidate    metrics.Siege           `json:"candidate"`
	}{m, ph, r.ResponseTime, r.Rate, r.Rounds, r.Verdict, r.Baseline, r.Candidate})
}

// ImpactReport is the analysis of an impact study.
type ImpactReport struct {
	// Metrics are Siege's, in its order, keyed by its JSON names.
	Metrics []ImpactMetric `json:"-"`
	// Phases are the latency percentiles per phase (ms).
	Phases []ImpactMetric `json:"-"`
	// ResponseTime compares the per-second mean response times (ms) of
	// the two sides' steady windows, pooled over the rounds.
	ResponseTime Shift `json:"response_time_shift"`
	// Rate compares the per-second transaction counts.
	Rate Shift `json:"transaction_rate_shift"`
	// Rounds are each round's transaction rate and response time, for the
	// spread.
	Rounds  []ImpactRound `json:"rounds"`
	Verdict string        `json:"verdict"`
	// Siege is each side's pooled summary.
	Baseline, Candidate metrics.Siege `json:"-"`
}

// ImpactMetric is one metric side by side.
type ImpactMetric struct {
	Key         string  `json:"-"`
	Label       string  `json:"-"`
	Unit        string  `json:"-"`
	Baseline    float64 `json:"baseline"`
	Candidate   float64 `json:"candidate"`
	Delta       float64 `json:"delta"`
	DeltaPct    float64 `json:"delta_pct"`
	Significant bool    `json:"significant"`
	// Tested says whether a significance test applies to the metric.
	Tested bool `json:"-"`
}

// ImpactRound is one round of both sides.
type ImpactRound struct {
	Round                   int     `json:"round"`
	BaselineRate            float64 `json:"baseline_transaction_rate"`
	CandidateRate           float64 `json:"candidate_transaction_rate"`
	BaselineResponseTimeMS  float64 `json:"baseline_response_time_ms"`
	CandidateResponseTimeMS float64 `json:"candidate_response_time_ms"`
}

// Analyze compares the two sides.
func Analyze(runs *ImpactRuns) (*ImpactReport, error) {
	b, err := metrics.SiegeOf(runs.Baseline...)
	if err != nil {
		return nil, err
	}
	c, err := metrics.SiegeOf(runs.Candidate...)
	if err != nil {
		return nil, err
	}
	rep := &ImpactReport{Baseline: b, Candidate: c}
	bMean, bRate := perSecond(runs.Baseline)
	cMean, cRate := perSecond(runs.Candidate)
	rep.ResponseTime = Compare(bMean, cMean)
	rep.Rate = Compare(bRate, cRate)
	latency := rep.ResponseTime.Significant
	rate := rep.Rate.Significant
	add := func(key, label, unit string, bv, cv float64, tested, sig bool) {
		m := ImpactMetric{Key: key, Label: label, Unit: unit, Baseline: bv, Candidate: cv, Delta: cv - bv, Tested: tested, Significant: tested && sig}
		if bv != 0 {
			m.DeltaPct = 100 * (cv - bv) / bv
		}
		rep.Metrics = append(rep.Metrics, m)
	}
	add("transactions", "Transactions", "hits", float64(b.Transactions), float64(c.Transactions), true, rate)
	add("availability", "Availability", "%", b.Availability, c.Availability, false, false)
	add("elapsed_time", "Elapsed time", "s", b.ElapsedTime, c.ElapsedTime, false, false)
	add("data_transferred", "Data transferred", "MB", b.DataTransferred, c.DataTransferred, true, rate)
	add("response_time", "Response time", "s", b.ResponseTime, c.ResponseTime, true, latency)
	add("transaction_rate", "Transaction rate", "trans/s", b.TransactionRate, c.TransactionRate, true, rate)
	add("throughput", "Throughput", "MB/s", b.Throughput, c.Throughput, true, rate)
	add("concurrency", "Concurrency", "", b.Concurrency, c.Concurrency, true, latency)
	add("successful_transactions", "Successful transactions", "", float64(b.SuccessfulTransactions), float64(c.SuccessfulTransactions), false, false)
	add("failed_transactions", "Failed transactions", "", float64(b.FailedTransactions), float64(c.FailedTransactions), false, false)
	add("longest_transaction", "Longest transaction", "s", b.LongestTransaction, c.LongestTransaction, false, false)
	add("shortest_transaction", "Shortest transaction", "s", b.ShortestTransaction, c.ShortestTransaction, false, false)

	for _, ph := range []string{"connect", "handshake", "ttfb", "total"} {
		hb, err := metrics.Pooled(ph, runs.Baseline...)
		if err != nil {
			return nil, err
		}
		hc, err := metrics.Pooled(ph, runs.Candidate...)
		if err != nil {
			return nil, err
		}
		for _, q := range []float64{50, 90, 99} {
			bv, cv := float64(hb.ValueAtQuantile(q))/1000, float64(hc.ValueAtQuantile(q))/1000
			m := ImpactMetric{Key: fmt.Sprintf("%s_p%g_ms", ph, q), Label: fmt.Sprintf("%s p%g", ph, q), Unit: "ms", Baseline: bv, Candidate: cv, Delta: cv - bv}
			if bv != 0 {
				m.DeltaPct = 100 * (cv - bv) / bv
			}
			rep.Phases = append(rep.Phases, m)
		}
	}
	for i := 0; i < min(len(runs.Baseline), len(runs.Candidate)); i++ {
		sb, _ := metrics.SiegeOf(runs.Baseline[i])
		sc, _ := metrics.SiegeOf(runs.Candidate[i])
		rep.Rounds = append(rep.Rounds, ImpactRound{Round: i + 1, BaselineRate: sb.TransactionRate, CandidateRate: sc.TransactionRate,
			BaselineResponseTimeMS: sb.ResponseTime * 1000, CandidateResponseTimeMS: sc.ResponseTime * 1000})
	}
	rep.Verdict = verdict(rep.ResponseTime)
	return rep, nil
}

// verdict says the response-time shift in words.
func verdict(s Shift) string {
	if !s.Significant {
		return fmt.Sprintf("no significant difference in response time (%+.2f ms ± %.2f ms per request, %s)", s.Delta, s.CI95, pText(s.P))
	}
	verb := "adds"
	if s.Delta < 0 {
		verb = "saves"
	}
	return fmt.Sprintf("candidate %s %.2f ms ± %.2f ms per request (%s)", verb, math.Abs(s.Delta), s.CI95, pText(s.P))
}

func pText(p float64) string {
	switch {
	case p < 0.001:
		return "p < 0.001"
	case p < 0.01:
		return "p < 0.01"
	}
	return fmt.Sprintf("p = %.2f", p)
}

// perSecond collects the steady-window seconds of runs: mean response time
// (ms) and transactions, one sample per second with transactions.
func perSecond(runs []*metrics.Run) (mean, rate []float64) {
	for _, r := range runs {
		for _, s := range r.Series {
			// Whole seconds inside the steady window only.
			if float64(s.T) <= r.SteadyStartS || float64(s.T) > r.SteadyStartS+r.DurationS || s.Transactions == 0 {
				continue
			}
			mean = append(mean, s.TotalMean/1000)
			rate = append(rate, float64(s.Transactions))
		}
	}
	return mean, rate
}
