package method

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// The schema versions of the method's files (their JSON Schemas are in
// package schemas).
const (
	LedgerSchema  = "tlsbench/ledger/v1"  // a line of ledger.jsonl
	SummarySchema = "tlsbench/summary/v1" // summary.json
)

// phases are the ledger's phases.
var phases = []string{vocab.Preliminary.String(), vocab.Exploratory.String(), vocab.Final.String()}

// decodeEntry decodes and validates one ledger line (decode); the error
// is a *vocab.FieldError naming the field when the line is JSON.
func decodeEntry(line []byte) (*Entry, error) {
	return decode(line, LedgerSchema, func(e *Entry) string { return e.Schema })
}

// decode unmarshals data, checks its schema version (schema(v)) and that
// every field is known, and validates it.
func decode[T any, P interface {
	*T
	Validate() error
}](data []byte, want string, schema func(P) string) (*T, error) {
	v := P(new(T))
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	if got := schema(v); got != want {
		return nil, &vocab.FieldError{Field: "schema", Msg: fmt.Sprintf("%q, want %q", got, want)}
	}
	if err := metrics.CheckFields(data, v); err != nil {
		return nil, err
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v, nil
}

// Validate checks a ledger entry and its run.
func (e *Entry) Validate() error {
	var c metrics.Checker
	if e.Key == "" {
		c.Failf("key", "empty")
	}
	c.OneOf("phase", e.Phase.String(), phases)
	c.Engine("engine", e.Engine)
	c.Count("level", int64(e.Level))
	c.Count("seq", int64(e.Seq))
	c.Count("round", int64(e.Round))
	c.Count("repeat", int64(e.Repeat))
	c.Rate("value", e.Value)
	if c.Err != nil {
		return c.Err
	}
	if e.Run == nil {
		return &vocab.FieldError{Field: "run", Msg: "missing"}
	}
	if err := e.Run.Validate(); err != nil {
		var fe *vocab.FieldError
		if errors.As(err, &fe) {
			return fe.Under("run")
		}
		return fmt.Errorf("run: %w", err)
	}
	if e.Run.Engine != e.Engine {
		return &vocab.FieldError{Field: "run.engine", Msg: fmt.Sprintf("%q, but the entry's engine is %q",
			e.Run.Engine, e.Engine)}
	}
	return nil
}

// DecodeSummary decodes and validates a campaign summary (summary.json);
// the error is a *vocab.FieldError naming the field when it is JSON.
func DecodeSummary(data []byte) (*Summary, error) {
	return decode(data, SummarySchema, func(s *Summary) string { return s.Schema })
}

// Validate checks a summary's engines, counts and values.
func (s *Summary) Validate() error {
	var c metrics.Checker
	runCount := func(path string, n RunCount) {
		c.Count(path+".accepted", int64(n.Accepted))
		c.Count(path+".total", int64(n.Total))
		if n.Accepted > n.Total {
			c.Failf(path+".accepted", "%d is more than total (%d)", n.Accepted, n.Total)
		}
	}
	for i, r := range s.Rows {
		p := fmt.Sprintf("rows[%d]", i)
		if r.CPS != nil {
			c.Rate(p+".cps", *r.CPS)
		}
		if r.Gbps != nil {
			c.Rate(p+".gbps", *r.Gbps)
		}
		runCount(p+".cps_runs", r.CPSRuns)
		runCount(p+".gbps_runs", r.GbpsRuns)
		if r.Value != nil {
			c.Rate(p+".value", *r.Value)
		}
		if r.Runs != nil {
			runCount(p+".runs", *r.Runs)
		}
	}
	for i, cell := range s.Cells {
		p := fmt.Sprintf("cells[%d]", i)
		if cell == nil {
			c.Failf(p, "null")
			continue
		}
		c.Engine(p+".engine", cell.Engine)
		c.Count(p+".level", int64(cell.Level))
		c.Rate(p+".value", cell.Value)
		c.Rate(p+".spread", cell.Spread)
		c.Rate(p+".rate", cell.Rate)
		runCount(p, RunCount{Accepted: cell.Accepted, Total: cell.Total})
		for j, v := range cell.Best3 {
			c.Rate(fmt.Sprintf("%s.best3[%d]", p, j), v)
		}
		if !slices.IsSortedFunc(cell.Best3, func(a, b float64) int { return cmp.Compare(b, a) }) {
			c.Failf(p+".best3", "%v is not in descending order", cell.Best3)
		}
		for j, pr := range cell.Exploration {
			q := fmt.Sprintf("%s.exploration[%d]", p, j)
			c.Count(q+".level", int64(pr.Level))
			c.Rate(q+".value", pr.Value)
			c.Count(q+".p99_us", pr.P99US)
			c.Count(q+".errors", pr.Errors)
			c.Rate(q+".generator_cpu", pr.GeneratorCPU)
		}
		for j, r := range cell.Runs {
			q := fmt.Sprintf("%s.runs[%d]", p, j)
			c.Count(q+".seq", int64(r.Seq))
			c.Rate(q+".value", r.Value)
		}
	}
	for i, pr := range s.Preliminary {
		p := fmt.Sprintf("preliminary[%d]", i)
		c.Engine(p+".engine", pr.Engine)
		c.Count(p+".body_size", pr.BodySize)
	}
	for i, d := range s.Differences {
		c.Engine(fmt.Sprintf("differences[%d].Engine", i), d.Engine)
	}
	if c.Err != nil {
		return c.Err
	}
	return nil
}
