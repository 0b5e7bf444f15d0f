package analysis

import "github.com/tlsbench/tlsbench/bench/metrics"

// Criterion is one of RFC 9411's test results validation criteria as a run
// met it or not: its name, the rule as the RFC states it, the value the run
// measured and the limit it is held to.
type Criterion struct {
	Name  string  `json:"name"`
	Rule  string  `json:"rule"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Pass  bool    `json:"pass"`
	// Note says why a criterion could not be judged, or how it was.
	Note string `json:"note,omitempty"`
}

// Verdict is a run's pass or fail under the criteria of its RFC 9411 test.
type Verdict struct {
	Test     string      `json:"test"` // 7.6, 7.7, 7.8 or 7.9
	Pass     bool        `json:"pass"`
	Criteria []Criterion `json:"criteria"`
}

// Reason is the first failed criterion's name and values, "" when the run
// passed.
func (v Verdict) Reason() string {
	for _, c := range v.Criteria {
		if !c.Pass {
			return c.Name
		}
	}
	return ""
}

// RFC9411 judges r by the criteria of RFC 9411 test ("7.6", "7.7", "7.8",
// "7.9"); target is the objective the run was given (§7.8: the rate it was
// to hold; 0 when none).
func RFC9411(r *metrics.Run, test string, target float64) Verdict {
	return Verdict{Test: test, Pass: true} // the criteria: rfc9411 helper's work
}
