// Package method automates the qualification method of vendor test labs:
// preliminary validation of every device under test (DUT), exploratory
// search for the best load level, final runs until final.min_accepted
// accepted runs agree, and the best of them published. Every run goes to an
// append-only ledger, from which an interrupted campaign resumes.
package method

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// ErrInterrupted is returned, wrapped, when the campaign stopped because its
// context was cancelled: the ledger holds every finished run, as if the
// interruption had come between two runs (the run it cut short is not in it).
var ErrInterrupted = errors.New("interrupted")

// cutShort is the interruption of req's run (final run seq, if not 0).
func cutShort(req Request, seq int) error {
	n := ""
	if seq > 0 {
		n = fmt.Sprint(" ", seq)
	}
	return fmt.Errorf("%w: the %s run%s of %s %s %s at c=%d was cut short and is not recorded", ErrInterrupted,
		req.Phase, n, req.DUT.Name, cmp.Or(req.Test.Name, req.Test.Engine.String()), req.Profile.Name, req.Concurrency)
}

// DifferencesError is returned by the preliminary phase when the DUTs do not
// negotiate or serve the same thing.
type DifferencesError struct {
	Table []Difference
}

// Difference is one parameter on which DUTs differ for one test.
type Difference struct {
	Engine         vocab.Engine
	Profile, Field string
	Values         map[string]string // DUT → value
	Test           string            `json:",omitempty"` // the plan test's name, if it has one
}

func (e *DifferencesError) Error() string {
	parts := make([]string, 0, len(e.Table))
	for _, d := range e.Table {
		var vs []string
		for dut, v := range d.Values {
			vs = append(vs, dut+"="+v)
		}
		sort.Strings(vs)
		parts = append(parts, fmt.Sprintf("%s %s %s: %s", d.Engine, d.Profile, d.Field, strings.Join(vs, " ")))
	}
	return "preliminary: the DUTs differ (" + strings.Join(parts, "; ") + ")"
}

// PreliminaryError is returned when a DUT fails its preliminary probe.
type PreliminaryError struct {
	DUT     string
	Engine  vocab.Engine
	Profile string
	Reasons []string
}

func (e *PreliminaryError) Error() string {
	return fmt.Sprintf("preliminary: DUT %s, %s %s: %s", e.DUT, e.Engine, e.Profile, strings.Join(e.Reasons, "; "))
}

// Event is one line of progress: a run made (or found in the ledger).
type Event struct {
	Phase        vocab.MethodPhase
	Engine       vocab.Engine
	Protocol     string // http/1.1, http/2
	DUT, Profile string
	Seq, Of      int // final phase: run Seq of at most Of
	Level        int
	Value        float64
	Accepted     bool
	Reasons      []string
	Cached       bool // taken from the ledger of a resumed campaign
	Round        int  // 1: the re-exploration and its final runs
	Repeat       int  // the repeat of the final phase, from 2 (0 the first)
	Note         string
	// Test is the plan test's name ("" for the study's tests); Verdict its
	// RFC 9411 verdict ("pass", or "fail: " and the failed criterion).
	// Unit is the unit of Value for a named test.
	Test, Verdict, Unit string
	// SR is the test's session reuse, if it asks for one (Cell.SR).
	SR float64
}

// Campaign runs a plan. Set the fields, then call Run once.
type Campaign struct {
	Plan     *plan.Plan
	Profiles *profiles.Set
	Exec     Executor
	Ledger   *ledger
	// AllowDifferences goes on when the DUTs differ in the preliminary phase.
	AllowDifferences bool
	// Events, if set, is called after every run.
	Events func(Event)
	// Progress, if set, is the per-second callback inside runs.
	Progress func(metrics.Second)
	// Sleep waits between runs (the cooldown); default time.Sleep bounded by ctx.
	Sleep func(ctx context.Context, d time.Duration)
	// Preliminary, if set, is called with the preliminary phase's results.
	Preliminary func([]Prelim)
	// Watch, if set, is called with the campaign's progress whenever it
	// changes; Status gives it at any time.
	Watch func(Progress)
	// Now is the clock of the progress; default time.Now.
	Now func() time.Time
	// Verdict judges the runs of an RFC 9411 suite's tests (exploratory
	// and final): a run that fails is rejected; default analysis.RFC9411.
	Verdict func(r *metrics.Run, test string, target float64) analysis.Verdict

	// Sources are the runs' source addresses (--source; 0: one), Agents
	// the processes a run is split over here (each with its descriptors):
	// §7.9's limits (hold.go). HoldLimit, if set, replaces them.
	Sources, Agents int
	HoldLimit       func() (int, string)

	prog tracker
	// holdRate is each §7.9 cell's rate of new connections (per second)
	// during its ramp-up (cellKey).
	holdRate map[string]float64
}

// ErrNothingSupported is returned when no DUT serves any profile of the plan.
var ErrNothingSupported = errors.New("preliminary: no DUT serves any profile of the plan")

// Run carries the campaign out. Cancelling ctx stops it at once (ErrInterrupted):
// the run in progress is cut short, not recorded (a signal may have hit its target too).
func (c *Campaign) Run(ctx context.Context) (*Summary, error) {
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	s := &Summary{Name: c.Plan.Name}
	c.prog.begin(c.Plan, c.Now, c.Watch)
	prelim, unsupported, err := c.preliminary(ctx, s)
	if err != nil {
		return s, err
	}
	// Every cell is explored in turn; its final runs follow at once
	// (sequential), or after every exploration (interleaved).
	interleaved := c.Plan.Method.Final.Interleaved()
	var finals, all []*finalPhase
	var later []*dependent
	for _, d := range c.Plan.DUTs {
		for _, t := range c.Plan.Tests {
			for _, name := range t.Profiles {
				p, _ := c.Profiles.Get(name)
				k := cellKey(d.Name, t, name)
				if why, ok := unsupported[k]; ok {
					cell := newCell(d.Name, t, name)
					cell.Unsupported, cell.Failed = why, "not supported: "+why
					s.Cells = append(s.Cells, cell)
					c.prog.skip(k)
					continue
				}
				if t.Of != "" { // once the test it refers to has published
					cell := newCell(d.Name, t, name)
					s.Cells = append(s.Cells, cell)
					later = append(later, &dependent{d: d, t: t, p: p, pre: prelim[k], cell: cell})
					continue
				}
				f, err := c.explore(ctx, d, t, p, prelim[k])
				s.Cells = append(s.Cells, f.cell)
				c.prog.explored(f.cell)
				if err != nil {
					return s, err
				}
				if f.cell.Failed != "" {
					continue
				}
				all = append(all, f)
				if interleaved {
					finals = append(finals, f)
				} else if err := c.final(ctx, f); err != nil {
					return s, err
				}
			}
		}
	}
	if err := c.final(ctx, finals...); err != nil {
		return s, err
	}
	// With final.repeat N, the cells with a value make N-1 more passes.
	if n := c.Plan.Method.Final.Repeat; n > 1 {
		valued := slices.DeleteFunc(slices.Clone(all), func(f *finalPhase) bool { return f.cell.Failed != "" })
		if err := c.repeat(ctx, valued, n); err != nil {
			return s, err
		}
	}
	for _, dl := range later {
		if err := c.runDependent(ctx, s, dl); err != nil {
			return s, err
		}
	}
	for _, f := range all {
		c.prog.finished(f.cell)
	}
	s.Rows = c.rows(s)
	return s, nil
}

// rule is the acceptance rule of test t's runs: the plan's, taking the
// sessions resumed by design of a test that asks for session reuse.
func (c *Campaign) rule(t plan.Test) plan.Accept {
	a := c.Plan.Method.Accept
	a.SessionReuse = a.SessionReuse || t.Resume > 0
	return a
}

// runError is a run the executor could not make.
type runError struct {
	what string // phase, DUT, engine, profile
	err  error
}

func (e *runError) Error() string { return e.what + ": " + e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

func key3(dut string, engine vocab.Engine, profile string) string {
	return dut + "|" + engine.String() + "|" + profile
}

// do returns the ledger's entry for key, or makes the run, judges it and
// appends it.
func (c *Campaign) do(ctx context.Context, key string, req Request, e Entry) (*Entry, error) {
	if old, ok := c.Ledger.Lookup(key); ok {
		c.prog.cached(req, e.Seq)
		c.event(old, true)
		return old, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w between two runs", ErrInterrupted)
	}
	req.Progress = c.Progress
	c.shape(&req)
	c.prog.start(req, e.Seq)
	run, err := c.Exec.Run(ctx, req)
	c.prog.end(req)
	if ctx.Err() != nil { // cut short: no verdict on the device
		return nil, cutShort(req, e.Seq)
	}
	if err != nil {
		return nil, &runError{fmt.Sprintf("%s run, DUT %s, %s %s",
			req.Phase, req.DUT.Name, req.Test.Engine, req.Profile.Name), err}
	}
	e.Key, e.Phase, e.DUT, e.Engine, e.Profile = key, req.Phase, req.DUT.Name, req.Test.Engine, req.Profile.Name
	e.Level, e.Run, e.Time, e.Test = req.Concurrency, run, time.Now().UTC(), req.Test.Name
	e.Value = testValue(req, run)
	e.Reasons = Judge(c.rule(req.Test), run)
	c.judgeRFC9411(&e, req, run)
	e.Device = run.DeviceCheck().Lines()
	e.Accepted = len(e.Reasons) == 0
	if req.Phase == vocab.Preliminary {
		pf, err := c.Exec.Resumption(ctx, req)
		e.probed(pf, err)
	}
	if ctx.Err() != nil {
		return nil, cutShort(req, e.Seq)
	}
	if err := c.Ledger.Append(&e); err != nil {
		return nil, err
	}
	c.event(&e, false)
	return &e, nil
}

func (c *Campaign) event(e *Entry, cached bool) {
	if c.Events == nil {
		return
	}
	ev := Event{Phase: e.Phase, DUT: e.DUT, Engine: e.Engine, Profile: e.Profile, Level: e.Level, Value: e.Value,
		Accepted: e.Accepted, Reasons: e.Reasons, Cached: cached, Seq: e.Seq, Of: c.Plan.Method.Final.MaxRuns,
		Round: e.Round, Repeat: e.Repeat, Test: e.Test, Verdict: e.Verdict, SR: entrySR(e)}
	for _, t := range c.Plan.Tests {
		if e.Test != "" && t.Name == e.Test {
			ev.Unit = testUnit(t)
		}
	}
	ev.Protocol = e.Run.ProtocolName()
	if e.Verdict == verdictFail && e.Criterion != "" {
		ev.Verdict += ": " + e.Criterion
	}
	if e.Phase == vocab.Preliminary && e.Resumption != nil {
		ev.Note = "resumption refused by the DUT"
		if *e.Resumption {
			ev.Note = "the DUT would resume sessions (an SR=0 test never does)"
		}
		if strings.Contains(e.Key, "|SR=") {
			ev.Note = "" // the run resumed sessions as asked, or was refused
		}
	}
	c.Events(ev)
}

// preliminary probes every DUT × test × profile, then compares the DUTs.
// A cell whose DUT refuses the profile is not supported and left out
// (unless stop_on_unsupported). It returns the probes and the unsupported
// cells' reasons, by key3.
func (c *Campaign) preliminary(ctx context.Context, s *Summary) (map[string]*Entry, map[string]string, error) {
	m := c.Plan.Method
	out := map[string]*Entry{}
	unsupported := map[string]string{}
	for _, t := range c.Plan.Tests {
		for _, name := range t.Profiles {
			p, _ := c.Profiles.Get(name)
			for _, d := range c.Plan.DUTs {
				k := cellKey(d.Name, t, name)
				req := Request{Phase: vocab.Preliminary, DUT: d, Test: t, Profile: p, Concurrency: 1,
					Duration: min(time.Duration(m.Explore.ProbeDuration), time.Second), ExpectSize: -1}
				e, err := c.do(ctx, "preliminary|"+k, req, Entry{})
				var re *runError
				if err != nil && !errors.As(err, &re) {
					return nil, nil, err // interrupted, or the ledger failed
				}
				if err != nil {
					// The probe could not be made at all; a name that does
					// not resolve is the generator's problem, not a refusal.
					why := re.err.Error()
					var dns *net.DNSError
					if m.StopOnUnsupported || countersUnreadable(re.err) || errors.As(re.err, &dns) {
						return nil, nil, &PreliminaryError{DUT: d.Name, Engine: t.Engine, Profile: name, Reasons: []string{why}}
					}
					unsupported[k] = why
					s.Preliminary = append(s.Preliminary, Prelim{DUT: d.Name, Engine: t.Engine, Protocol: t.Protocol(),
						Profile: name, Test: t.Name, Unsupported: why, SR: t.Resume})
					continue
				}
				pr := prelimOf(e)
				pr.SR = t.Resume
				if strings.Contains(t.Objects, ",") {
					pr.BodySize, pr.Objects = 0, t.Objects // a mix's: the mean of random draws
				}
				out[k] = e
				// Only the device's answer makes a profile unsupported,
				// not the generator's load nor the machine's noise.
				reasons := judgeDevice(c.rule(t), e.Run)
				if len(reasons) > 0 {
					if m.StopOnUnsupported {
						return nil, nil, &PreliminaryError{DUT: d.Name, Engine: t.Engine, Profile: name, Reasons: reasons}
					}
					pr.Unsupported = refusal(e.Run, reasons)
					unsupported[k] = pr.Unsupported
				}
				s.Preliminary = append(s.Preliminary, pr)
			}
		}
	}
	if c.Preliminary != nil {
		c.Preliminary(s.Preliminary)
	}
	if len(unsupported) == len(s.Preliminary) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNothingSupported, firstRefusal(s.Preliminary))
	}
	if diffs := differences(s.Preliminary); len(diffs) > 0 {
		s.Differences = diffs
		if !c.AllowDifferences {
			return nil, nil, &DifferencesError{Table: diffs}
		}
	}
	return out, unsupported, nil
}

// refusal says why a DUT did not serve a profile: the server's answer when
// nothing succeeded, else the probe's reasons.
func refusal(r *metrics.Run, reasons []string) string {
	if r != nil && r.Transactions == 0 && len(r.Errors.ByClass) > 0 {
		top := byCount(r.Errors.ByClass)[0]
		if ex := r.Errors.Examples[top]; ex != "" {
			return top.String() + ": " + ex
		}
		return top.String()
	}
	return strings.Join(reasons, "; ")
}

func firstRefusal(ps []Prelim) string {
	for _, p := range ps {
		if p.Unsupported != "" {
			return fmt.Sprintf("DUT %s, %s %s: %s", p.DUT, p.Engine, p.Profile, p.Unsupported)
		}
	}
	return ""
}

// Prelim is a preliminary result: what a DUT negotiated and served.
type Prelim struct {
	DUT        string             `json:"dut"`
	Engine     vocab.Engine       `json:"engine"`
	Protocol   string             `json:"protocol,omitempty"` // "" in summaries made before it: HTTP/1.1
	Profile    string             `json:"profile"`
	Test       string             `json:"test,omitempty"` // the plan test's name, if it has one
	Negotiated metrics.Negotiated `json:"negotiated"`
	BodySize   int64              `json:"body_size"`
	Objects    string             `json:"objects,omitempty"` // a mix, whose sizes differ: BodySize 0
	Accepted   bool               `json:"accepted"`
	Reasons    []string           `json:"reasons,omitempty"`
	// Resumption: would the DUT resume a session (informational).
	Resumption    *bool  `json:"resumption,omitempty"`
	ResumptionErr string `json:"resumption_error,omitempty"`
	// Unsupported, if set, is why the DUT does not serve the profile.
	Unsupported string `json:"unsupported,omitempty"`
	// SR is the test's session reuse (Cell.SR).
	SR float64 `json:"sr,omitempty"`
}

func prelimOf(e *Entry) Prelim {
	p := Prelim{DUT: e.DUT, Engine: e.Engine, Profile: e.Profile, Test: e.Test, Negotiated: e.Run.Negotiated,
		Accepted: e.Accepted, Reasons: e.Reasons, Resumption: e.Resumption, ResumptionErr: e.ResumptionErr,
		Protocol: e.Run.ProtocolName()}
	if n := e.Run.Transactions; n > 0 {
		p.BodySize = e.Run.Bytes.Payload / n
	}
	return p
}

// differences lists, per test and profile, the fields on which DUTs differ.
func differences(ps []Prelim) []Difference {
	type groupKey struct {
		engine                  vocab.Engine
		protocol, profile, test string
		sr                      float64
	}
	groups := map[groupKey][]Prelim{}
	var order []groupKey
	for _, p := range ps {
		if p.Unsupported != "" {
			continue // a refusal is reported as such, not as a difference
		}
		k := groupKey{p.Engine, p.Protocol, p.Profile, p.Test, p.SR}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	var out []Difference
	for _, k := range order {
		g := groups[k]
		fields := []struct {
			name string
			get  func(Prelim) string
		}{
			{"version", func(p Prelim) string { return p.Negotiated.Version }},
			{"cipher_suite", func(p Prelim) string { return p.Negotiated.CipherSuite }},
			{"group", func(p Prelim) string { return p.Negotiated.Group }},
			{"cert_key", func(p Prelim) string { return p.Negotiated.CertKey }},
			{"body_size", func(p Prelim) string { return fmt.Sprint(p.BodySize) }},
		}
		for _, f := range fields {
			vals := map[string]string{}
			distinct := map[string]bool{}
			for _, p := range g {
				vals[p.DUT] = f.get(p)
				distinct[f.get(p)] = true
			}
			if len(distinct) > 1 {
				out = append(out, Difference{Engine: k.engine, Profile: k.profile, Test: k.test, Field: f.name, Values: vals})
			}
		}
	}
	return out
}

// Cell is the result of one DUT × test × profile.
type Cell struct {
	DUT         string       `json:"dut"`
	Engine      vocab.Engine `json:"engine"`
	Protocol    string       `json:"protocol,omitempty"` // "" in summaries made before it: HTTP/1.1
	Profile     string       `json:"profile"`
	Test        string       `json:"test,omitempty"` // the plan test's name, if it has one
	Level       int          `json:"level"`          // the load level chosen and frozen
	Exploration []Probe      `json:"exploration"`
	// Search is how the exploration went.
	Search     *Search    `json:"search,omitempty"`
	Runs       []FinalRun `json:"runs"`
	Best3      []float64  `json:"best3"`
	Value      float64    `json:"value"`
	Spread     float64    `json:"spread"`
	Consistent bool       `json:"consistent"`
	Accepted   int        `json:"accepted"`
	Total      int        `json:"total"`
	// Failed says why the cell has no value, if it has none.
	Failed string `json:"failed,omitempty"`
	// Unsupported, if set, is why the DUT does not serve the profile.
	Unsupported string `json:"unsupported,omitempty"`
	// Unstable, if set, says that the final runs fell short of the
	// exploration at the same level by more than the tolerance
	// ("exploration X, finals Y"): the cell is not consistent.
	Unstable string `json:"unstable,omitempty"`
	// Reexplored, if set, is the first final runs of a cell re-explored
	// because they fell short; Level, Runs and Value are the later ones.
	Reexplored *Reexploration `json:"reexplored,omitempty"`
	// Repeats, with final.repeat above 1, are the repeats' values.
	Repeats *Repeats `json:"repeats,omitempty"`
	// An RFC 9411 suite's test: its test (7.6 … 7.9), the unit of Value
	// when it is neither CPS nor Gbps (§7.8: "ms", the mean time to last
	// byte; §7.9: "connections"), the open-loop rate of a test run at a
	// share of another's value (§7.8), and its published final run when
	// that is not the best one (§7.8: the median).
	RFC9411   string  `json:"rfc9411,omitempty"`
	Unit      string  `json:"unit,omitempty"`
	Rate      float64 `json:"rate,omitempty"`
	Published int     `json:"published,omitempty"`
	// DeviceNotSaturated: neither the published run's DUT nor its generator
	// was saturated (unsaturated): the value is not the device's capacity.
	DeviceNotSaturated bool `json:"device_not_saturated,omitempty"`
	// Bound, if set, is where §7.9's search stopped, not at the device:
	// Value is a lower bound, published "≥ Value (Bound)".
	Bound string `json:"bound,omitempty"`
	// AtCeiling: the search stopped at explore.concurrency.max, the level frozen: the device may do more.
	AtCeiling bool `json:"at_ceiling,omitempty"`
	// SR, if positive, is the test's session reuse (plan.Test.Resume) and
	// Resumption its mode, if the plan names one: SSL TPS with session reuse.
	SR         float64 `json:"sr,omitempty"`
	Resumption string  `json:"resumption,omitempty"`
	EarlyData  bool    `json:"early_data,omitempty"` // the resuming connections sent 0-RTT data
}

// Probe is one exploratory run.
type Probe struct {
	Level        int      `json:"level"`
	Value        float64  `json:"value"`
	P99US        int64    `json:"p99_us"` // handshake p99 (CPS) or total p99 (throughput)
	Errors       int64    `json:"errors"`
	GeneratorCPU float64  `json:"generator_cpu"`
	Accepted     bool     `json:"accepted"`
	Reasons      []string `json:"reasons,omitempty"`
	DUTCPU       *float64 `json:"dut_cpu,omitempty"` // the DUT's CPU ÷ the cores it could have used (dutShare)
}

// FinalRun is one run of the final phase.
type FinalRun struct {
	Seq      int      `json:"seq"`
	Value    float64  `json:"value"`
	Accepted bool     `json:"accepted"`
	Reasons  []string `json:"reasons,omitempty"`
}

// finalPhase is a cell between its exploration and the end of its final
// runs.
type finalPhase struct {
	cell     *Cell
	req      Request // the final runs' request
	probe    Request // the exploration's request (its level and duration aside)
	round    int     // 1 once re-explored
	accepted []float64
}

// explore finds the cell's load level (exploratory phase) and returns the
// cell ready for its final runs.
func (c *Campaign) explore(ctx context.Context, d plan.DUT, t plan.Test, p *profiles.Profile,
	pre *Entry) (*finalPhase, error) {
	m := c.Plan.Method
	cell := newCell(d.Name, t, p.Name)
	if t.Name != "" {
		cell.RFC9411, cell.Unit = t.RFC9411, testUnit(t)
	}
	expect := int64(-1)
	if pre != nil && pre.Run.Transactions > 0 && t.Objects == "" {
		expect = pre.Run.Bytes.Payload / pre.Run.Transactions
	}
	base := Request{
		DUT:        d,
		Test:       t,
		Profile:    p,
		Warmup:     min(time.Duration(m.Warmup), time.Duration(m.Explore.ProbeDuration)/2),
		ExpectSize: expect,
	}

	// Exploratory (search): probes are memoised by level.
	f := &finalPhase{cell: cell}
	probe := func(level int, kind string) (*Entry, error) {
		req := base
		req.Phase, req.Concurrency, req.Duration = vocab.Exploratory, level, time.Duration(m.Explore.ProbeDuration)
		key := strings.TrimSuffix(fmt.Sprintf("exploratory|%s|%d|%s", cellKey(d.Name, t, p.Name), level, kind), "|")
		if kind == "longer" {
			req.Duration = min(longerTimes*req.Duration, max(req.Duration, time.Duration(m.Duration)))
		}
		e, err := c.do(ctx, key, req, Entry{})
		if err != nil {
			return nil, err
		}
		c.Sleep(ctx, time.Duration(m.Cooldown))
		return e, nil
	}
	best, got, info, err := 0, map[int]*Entry(nil), Search{}, error(nil)
	if t.RFC9411 == plan.RFC9411Concurrent { // §7.9: its capacity search (hold.go)
		best, got, info, err = c.capacity(cell, probe)
	} else {
		srch := newSearch(m.Explore.Concurrency.Min, m.Explore.Concurrency.Max, float64(m.Explore.MinGain), probe)
		best, err = srch.run()
		got, info = srch.got, srch.info
	}
	cell.Exploration = probesOf(got)
	cell.Search = &info
	if err != nil {
		return f, err
	}
	if best == 0 {
		cell.Failed = "the exploratory phase found no load level with an accepted run"
		return f, nil
	}
	cell.Level = best
	cell.AtCeiling = best == m.Explore.Concurrency.Max && strings.HasPrefix(info.Stop, "reached")
	f.probe = base
	f.probe.Phase = vocab.Exploratory
	f.probe.Duration = time.Duration(m.Explore.ProbeDuration)
	f.req = base
	f.req.Phase = vocab.Final
	f.req.Concurrency = best
	f.req.Duration = time.Duration(m.Duration)
	f.req.Warmup = time.Duration(m.Warmup)
	return f, nil
}

// final makes the final runs of cells at their frozen levels (finalPass);
// a cell whose finals fall short of its exploration at that level by more
// than the tolerance is re-explored once (reexplore) and given new final
// runs; if those fall short too, it is unstable.
func (c *Campaign) final(ctx context.Context, fs ...*finalPhase) error {
	tol := float64(c.Plan.Method.Final.Tolerance)
	finish := func(f *finalPhase) {
		f.finish(tol)
		if f.cell.Failed != "" { // no repeat follows
			c.prog.finished(f.cell)
		}
	}
	sets, err := c.finalPass(ctx, fs, 1)
	if err != nil {
		return err
	}
	var short []*finalPhase
	for i, f := range fs {
		f.apply(sets[i])
		if _, fell := f.short(tol); fell {
			short = append(short, f)
			continue
		}
		c.prog.reexplored(f.cell, false)
		finish(f)
	}
	var again []*finalPhase
	for _, f := range short {
		ok, err := c.reexplore(ctx, f)
		if err != nil {
			return err
		}
		c.prog.reexplored(f.cell, ok)
		if !ok {
			finish(f)
			continue
		}
		again = append(again, f)
	}
	if sets, err = c.finalPass(ctx, again, 1); err != nil {
		return err
	}
	for i, f := range again {
		f.apply(sets[i])
		finish(f)
	}
	return nil
}

// finalSet is one cell's final runs of one pass: the first, the one after a
// re-exploration, or a repeat.
type finalSet struct {
	runs       []FinalRun
	accepted   []float64
	consistent bool
	unsat      map[int]bool // the runs (by seq) neither whose DUT nor generator was saturated
}

// finalPass makes the final runs of cells at their frozen levels,
// round-robin (run k of every cell that needs one, then run k+1), each cell
// until min_accepted of its accepted runs lie within tolerance of the best,
// or max_runs. repeat is the repeat of the final phase (1 the first).
func (c *Campaign) finalPass(ctx context.Context, fs []*finalPhase, repeat int) ([]*finalSet, error) {
	m := c.Plan.Method
	sets := make([]*finalSet, len(fs))
	for i := range sets {
		sets[i] = &finalSet{unsat: map[int]bool{}}
	}
	for seq := 1; seq <= m.Final.MaxRuns; seq++ {
		for i, f := range fs {
			set := sets[i]
			if set.consistent {
				continue
			}
			cell := f.cell
			key := fmt.Sprintf("final|%s|%d|%d", cell.key(), cell.Level, seq)
			e := Entry{Seq: seq, Round: f.round}
			if f.round > 0 {
				key += fmt.Sprintf("|round%d", f.round)
			}
			if repeat > 1 {
				key += fmt.Sprintf("|repeat%d", repeat)
				e.Repeat = repeat
			}
			got, err := c.do(ctx, key, f.req, e)
			if err != nil {
				return nil, err
			}
			set.runs = append(set.runs, FinalRun{Seq: seq, Value: got.Value, Accepted: got.Accepted, Reasons: got.Reasons})
			if got.Accepted {
				set.accepted = append(set.accepted, got.Value)
			}
			set.unsat[seq] = unsaturated(got.Run)
			if agreeing(set.accepted, float64(m.Final.Tolerance)) >= m.Final.MinAccepted {
				set.consistent = true
				c.prog.settled(cell)
				continue
			}
			c.Sleep(ctx, time.Duration(m.Cooldown))
		}
	}
	return sets, nil
}

// apply makes a pass's runs the cell's final runs.
func (f *finalPhase) apply(set *finalSet) {
	cell := f.cell
	cell.Runs, cell.Consistent, f.accepted = set.runs, set.consistent, set.accepted
	cell.DeviceNotSaturated = set.unsat[PublishedSeq(set.runs)] && cell.Unit != UnitMS && cell.Unit != UnitConnections
	cell.Total, cell.Accepted = len(set.runs), len(set.accepted)
}

// explored is what the (re-)exploration measured at the cell's frozen
// level; ok is false when it has no accepted probe there.
func (f *finalPhase) explored() (v float64, ok bool) {
	probes := f.cell.Exploration
	if f.round > 0 {
		probes = f.cell.Reexplored.Probes
	}
	for _, pr := range probes {
		if pr.Level == f.cell.Level && pr.Accepted {
			return pr.Value, true
		}
	}
	return 0, false
}

// short reports whether the cell's best final run falls short of what the
// exploration measured at its level by more than the tolerance, with that.
func (f *finalPhase) short(tol float64) (explored float64, fell bool) {
	if len(f.accepted) == 0 {
		return 0, false
	}
	best := slices.Max(f.accepted)
	v, ok := f.explored()
	return v, ok && best < v*(1-tol)
}

// finish publishes the best of the cell's accepted runs; finals that fall
// short of the exploration (short) make the cell unstable.
func (f *finalPhase) finish(tol float64) {
	cell := f.cell
	cell.Best3, cell.Value, cell.Spread = bestOf(f.accepted)
	if len(f.accepted) == 0 {
		cell.Failed = "no final run was accepted"
		return
	}
	if v, fell := f.short(tol); fell {
		cell.Consistent = false
		cell.Unstable = fmt.Sprintf("exploration %s, finals %s",
			valueText(cell.Engine, v), valueText(cell.Engine, cell.Value))
		if r := cell.Reexplored; r != nil && r.Finals == nil {
			cell.Unstable += "; the re-exploration found no accepted level"
		}
	}
}

// valueText writes a cell's value with its unit.
func valueText(engine vocab.Engine, v float64) string {
	if engine == vocab.EngineThroughput {
		return fmt.Sprintf("%.3g Gbps", v)
	}
	return fmt.Sprintf("%.0f CPS", v)
}

// agreeing counts the values within tolerance of the largest.
func agreeing(vs []float64, tol float64) int {
	if len(vs) == 0 {
		return 0
	}
	top := slices.Max(vs)
	n := 0
	for _, v := range vs {
		if v >= top*(1-tol) {
			n++
		}
	}
	return n
}

func p99(r *metrics.Run) int64 {
	if r.Engine == vocab.EngineCPS {
		return r.Percentiles(vocab.PhaseHandshake).P99
	}
	return r.Percentiles(vocab.PhaseTotal).P99
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
