package method_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// suiteExec is fakeExec with the requests recorded and a mean total
// latency per run (n ms for the nth run) for §7.8's value.
type suiteExec struct {
	fakeExec
	reqs []method.Request
}

func (f *suiteExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	f.reqs = append(f.reqs, req)
	r, err := f.fakeExec.Run(ctx, req)
	if err == nil && req.Test.RFC9411 == plan.RFC9411Concurrent {
		// The device holds 90%, 90% and 60% of the connections asked in
		// the sustain seconds' 10 ms samples, all of them at each second's
		// end: 80% held (the mean of the 10 ms means, a definition).
		n := int64(req.Concurrency)
		for i, share := range []float64{0.9, 0.9, 0.6} {
			r.Series = append(r.Series, metrics.Second{T: i + 1, Phase: string(vocab.TimelineSustain), OpenConns: n,
				OpenConnsMean: share * float64(n)})
		}
	}
	if err == nil && req.Test.RFC9411 == plan.RFC9411Latency {
		ms := float64(len(f.reqs)%5 + 1)
		r.Latency = map[string]metrics.Percentiles{vocab.PhaseTotal.String(): {Count: 10, Min: 1, Mean: ms * 1000,
			P50: 1, P90: 1, P99: 1, P999: 1, Max: int64(ms * 1000)}}
	}
	return r, err
}

// suitePlan is the RFC 9411 suite's §7.6 1k, §7.7 16k, §7.8 1k s1 and
// 16k s2 (renamed to refer to 16k's §7.7) and §7.9 1k against one DUT, one
// profile.
func suitePlan(t *testing.T) *plan.Plan {
	t.Helper()
	tests, _, err := plan.Suite(plan.SuiteRFC9411, false)
	if err != nil {
		t.Fatal(err)
	}
	keep := []string{"7.6 1k", "7.7 16k", "7.8 1k s1", "7.8 16k s2", "7.9 1k"}
	tests = slices.DeleteFunc(tests, func(tt plan.Test) bool { return !slices.Contains(keep, tt.Name) })
	p := testPlan("a")
	for i := range tests {
		tests[i].Profiles = p.Tests[0].Profiles[:1]
		tests[i].RampUp, tests[i].RampDown = 0, 0
	}
	p.Tests = tests
	p.Method.Duration = plan.Duration(time.Second)
	if err := p.Check(profiles.Builtin()); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSuiteSharesAndHeldConnections: §7.8's open-loop rate is the share of
// the value §7.6 published (CPS) and of §7.7's published run's requests per
// second; §7.9's search stops at the first level whose verdict fails, its
// value is the most connections held, and its ramp-up keeps new
// connections at half §7.6's maximum.
func TestSuiteSharesAndHeldConnections(t *testing.T) {
	p := suitePlan(t)
	exec := &suiteExec{}
	dir := t.TempDir()
	c := campaign(t, p, exec, dir)
	c.Verdict = func(r *metrics.Run, test string, target float64) analysis.Verdict {
		if test == plan.RFC9411Concurrent && target >= 32 {
			return analysis.Verdict{Test: test, Criteria: []analysis.Criterion{{Name: "connections held", Pass: false}}}
		}
		return analysis.Verdict{Test: test, Pass: true}
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	cells := map[string]*method.Cell{}
	for _, cell := range s.Cells {
		cells[cell.Test] = cell
	}
	if len(cells) != 5 {
		t.Fatalf("cells %v, want the five tests", cells)
	}
	cps := cells["7.6 1k"]
	if cps.Value != 1600 || cps.Level != 16 {
		t.Fatalf("7.6 1k: %v at %d, want 1600 at 16 (the fake's peak)", cps.Value, cps.Level)
	}
	rps := method.PublishedRun(c.Ledger.Entries(), cells["7.7 16k"]).RPS
	want := map[string]float64{"7.8 1k s1": 800, "7.8 16k s2": *rps / 2}
	for _, req := range exec.reqs {
		switch req.Test.RFC9411 {
		case plan.RFC9411Latency:
			if req.Phase != vocab.Preliminary && math.Abs(req.Rate-want[req.Test.Name]) > 1e-9 {
				t.Errorf("%s: rate %v, want %v (50%% of the published value)", req.Test.Name, req.Rate, want[req.Test.Name])
			}
		case plan.RFC9411Concurrent:
			if req.Phase == vocab.Preliminary {
				continue
			}
			if req.Concurrency >= 64 {
				t.Errorf("7.9 probed %d connections after 32 failed its verdict", req.Concurrency)
			}
			if ramp := time.Duration(float64(req.Concurrency) / 800 * float64(time.Second)); req.RampUp < ramp-time.Millisecond {
				t.Errorf("7.9 at %d: ramp-up %v, want at least %v (800 new connections/s)", req.Concurrency, req.RampUp, ramp)
			}
		}
	}
	for name, cell := range cells {
		if cell.Failed != "" || cell.Accepted == 0 {
			t.Errorf("%s: failed %q, %d accepted", name, cell.Failed, cell.Accepted)
		}
	}
	for _, name := range []string{"7.8 1k s1", "7.8 16k s2"} {
		cell := cells[name]
		if cell.Level != 64 {
			t.Errorf("%s: %d in flight at most, want 64 (4 × the referred level 16, at most explore's 64)", name, cell.Level)
		}
		if cell.Rate != want[name] || cell.Unit != method.UnitMS || cell.Published == 0 {
			t.Errorf("%s: rate %v unit %q published %d", name, cell.Rate, cell.Unit, cell.Published)
		}
		var vs []float64
		for _, r := range cell.Runs {
			if r.Accepted {
				vs = append(vs, r.Value)
			}
		}
		slices.Sort(vs)
		if med := vs[(len(vs)-1)/2]; cell.Value != med {
			t.Errorf("%s: published %v ms, want the median %v of %v", name, cell.Value, med, vs)
		}
	}
	held := cells["7.9 1k"]
	if held.Level != 31 || math.Abs(held.Value-0.8*31) > 1e-9 || held.Unit != method.UnitConnections || held.Bound != "" {
		t.Errorf("7.9: level %d value %v %s (bound %q), want 31 (doubling to 32, bisected), 80%% of it held (the "+
			"10 ms samples' mean), the device's capacity", held.Level, held.Value, held.Unit, held.Bound)
	}
	if want := []int{1, 2, 4, 8, 16, 32, 24, 28, 30, 31}; !slices.Equal(held.Search.Order, want) {
		t.Errorf("7.9 searched %v, want %v (doubling, then bisection)", held.Search.Order, want)
	}
	failed := 0
	for _, e := range c.Ledger.Entries() {
		if e.Test == "7.9 1k" && e.Level >= 32 {
			if e.Accepted || e.Verdict != "fail" || e.Criterion != "connections held" {
				t.Errorf("7.9 at %d: accepted %v verdict %q criterion %q", e.Level, e.Accepted, e.Verdict, e.Criterion)
			}
			failed++
		}
		if e.Test == "" {
			t.Errorf("ledger entry %s has no test name", e.Key)
		}
	}
	if failed != 1 {
		t.Errorf("%d runs of 7.9 at 32 or more connections, want the one probe whose verdict failed", failed)
	}
	rows := 0
	for _, r := range s.Rows {
		if r.Test != "" && r.Value != nil && r.Runs != nil {
			rows++
		}
	}
	if rows != 5 {
		t.Errorf("%d suite rows with a value, want 5: %+v", rows, s.Rows)
	}
}

// TestSuiteHeldBound: §7.9's search that reaches the generator's limit or
// the search's ceiling without a failure publishes a lower bound, saying
// which, never the device's capacity.
func TestSuiteHeldBound(t *testing.T) {
	for _, c := range []struct {
		limit, max, level int
		bound             string
	}{
		{limit: 40, level: 40, bound: "the generator's limit: descriptors (test)"},
		{limit: 1000, max: 20, level: 20, bound: "the search's ceiling, explore.connections.max 20"},
	} {
		p := suitePlan(t)
		p.Tests = slices.DeleteFunc(p.Tests, func(tt plan.Test) bool { return tt.RFC9411 == plan.RFC9411Latency })
		p.Method.Explore.Connections = plan.Range{Min: 4, Max: c.max}
		camp := campaign(t, p, &suiteExec{}, t.TempDir())
		camp.HoldLimit = func() (int, string) { return c.limit, "descriptors (test)" }
		camp.Verdict = func(_ *metrics.Run, test string, _ float64) analysis.Verdict {
			return analysis.Verdict{Test: test, Pass: true}
		}
		s, err := camp.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(s.Cells, func(cell *method.Cell) bool { return cell.Test == "7.9 1k" })
		j := slices.IndexFunc(s.Rows, func(r method.Row) bool { return r.Test == "7.9 1k" })
		if i < 0 || j < 0 {
			t.Fatalf("no 7.9 cell or row: %+v", s.Rows)
		}
		if cell := s.Cells[i]; cell.Search == nil || cell.Level != c.level || cell.Bound != c.bound || s.Rows[j].Bound != c.bound ||
			!strings.Contains(cell.Search.Stop, c.bound) {
			t.Errorf("limit %d, max %d: level %d bound %q (row %q), stop %q; want %d, %q", c.limit, c.max, cell.Level,
				cell.Bound, s.Rows[j].Bound, cell.Search.Stop, c.level, c.bound)
		}
	}
}

// TestLocalSpecSuite: a suite test's objects, transactions per connection,
// pause, and the request's ramps and rate reach the run's spec, which
// validates; in open loop there is no pause.
func TestLocalSpecSuite(t *testing.T) {
	p, err := profiles.Builtin().Get(profiles.SeedProfiles[0])
	if err != nil {
		t.Fatal(err)
	}
	tt := plan.Test{Name: "7.9 1k", RFC9411: plan.RFC9411Concurrent, Engine: vocab.EngineCPS, Objects: "1k,2k:3",
		ObjectPath: "/o/{size}", RequestsPerConn: 100, Pause: plan.Duration(time.Second), Profiles: []string{p.Name}}
	req := method.Request{Phase: vocab.Final, DUT: plan.DUT{Name: "a", URL: "https://a.test/"}, Test: tt, Profile: p,
		Concurrency: 4, Duration: time.Second, RampUp: 2 * time.Second, RampDown: 3 * time.Second, ExpectSize: -1}
	l := &method.Local{}
	spec, err := l.Spec(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Objects) != 2 || spec.Objects[0].Size != 1024 || spec.Objects[1].Size != 2048 ||
		spec.Objects[1].Weight != 3 || spec.ObjectPath != "/o/{size}" {
		t.Errorf("objects %+v at %q", spec.Objects, spec.ObjectPath)
	}
	if spec.RequestsPerConn != 100 || spec.Pause != time.Second || spec.RampUp != 2*time.Second ||
		spec.RampDown != 3*time.Second || spec.Rate != 0 {
		t.Errorf("requests/conn %d pause %v ramps %v/%v rate %v", spec.RequestsPerConn, spec.Pause, spec.RampUp,
			spec.RampDown, spec.Rate)
	}
	if err := spec.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	req.Rate = 50
	if spec, err = l.Spec(req); err != nil || spec.Rate != 50 || spec.Pause != 0 {
		t.Fatalf("open loop: %v, rate %v pause %v", err, spec.Rate, spec.Pause)
	}
	if err := spec.Validate(); err != nil {
		t.Errorf("Validate, open loop: %v", err)
	}
	req.Test.Objects = "1k,nope"
	if _, err := l.Spec(req); err == nil {
		t.Error("objects that do not parse: no error")
	}
}
