package runner

import "github.com/tlsbench/tlsbench/bench/metrics"

// nameSpread is an operation whose connections take the run's server names
// in turn (tlsconn.Endpoint, which every operation embeds).
type nameSpread interface {
	Names() *metrics.Names
	ResetNames()
}

// resetNames starts op's per-name counts after the preflight: the record
// counts the preflight's connections apart, as whole_run does.
func resetNames(op op) {
	if n, ok := op.(nameSpread); ok {
		n.ResetNames()
	}
}

// namesOf is op's spread of connections over the run's names, nil when it
// has one name.
func namesOf(op op) *metrics.Names {
	if n, ok := op.(nameSpread); ok {
		return n.Names()
	}
	return nil
}
