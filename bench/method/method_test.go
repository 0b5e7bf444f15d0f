package method_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// validSummary writes s as qualify does and checks the file against its
// JSON Schema and with DecodeSummary.
func validSummary(t *testing.T, s *method.Summary) {
	t.Helper()
	dir, c := t.TempDir(), *s // WriteSummary sets c's schema version
	if err := method.WriteSummary(dir, &c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, method.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Valid(t, schemas.Summary, method.SummaryFile, data)
	if _, err := method.DecodeSummary(data); err != nil {
		t.Errorf("DecodeSummary(WriteSummary(s)): %v", err)
	}
}

// fakeExec is a test double at the engine boundary: the value of a run is a
// function of the request, so campaigns are deterministic.
type fakeExec struct {
	// value returns the metric, the errors by class and whether the run
	// completed; nil means a fixed curve peaking at 16 connections.
	value func(req method.Request, n int) (float64, map[string]int64)
	// suite is the negotiated suite per DUT (default the same for all).
	suite map[string]string
	calls int
	util  float64
}

func (f *fakeExec) Run(_ context.Context, req method.Request) (*metrics.Run, error) {
	f.calls++
	v, errs := 0.0, map[string]int64(nil)
	if f.value != nil {
		v, errs = f.value(req, f.calls)
	} else {
		v = curve(req.Concurrency)
	}
	r := &metrics.Run{
		Schema: metrics.Schema, Engine: req.Test.Engine, Protocol: req.Test.Protocol(), Profile: req.Profile.Name,
		Complete:     true,
		Transactions: 1000, Negotiated: metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
			OpenSSL: "ECDHE-ECDSA-AES128-SHA256", Group: "P-256", CertKey: "ECDSA P-256"},
		Errors: metrics.Errors{ByClass: map[vocab.Class]int64{}, Examples: map[vocab.Class]string{}},
		Bytes:  metrics.Bytes{Payload: 1000 * 1024},
		Client: metrics.Client{Utilization: f.util, Cores: 2},
	}
	if s, ok := f.suite[req.DUT.Name]; ok {
		r.Negotiated.CipherSuite = s
	}
	for k, n := range errs {
		r.Errors.ByClass[vocab.Class(k)] = n
		r.Errors.Total += n
		r.Errors.Examples[vocab.Class(k)] = "injected " + k
	}
	// A record that passes metrics.Run.Validate: its rate is its count
	// over its window, which is set to give the value v.
	r.Load.Mode, r.DurationS = "closed", 10
	if req.Test.Engine == vocab.EngineCPS {
		if v > 0 {
			r.DurationS = float64(r.Transactions) / v
		} else {
			r.Transactions = 0
		}
		r.CPS = new(v)
	} else {
		if v > 0 {
			r.DurationS = float64(r.Bytes.Payload) * 8 / 1e9 / v
		} else {
			r.Bytes.Payload = 0
		}
		r.Requests, r.RPS, r.Gbps, r.WireGbps = new(int64(1000)), new(1000/r.DurationS), new(v), new(0.0)
	}
	return r, nil
}

func (f *fakeExec) Resumption(context.Context, method.Request) (*metrics.Preflight, error) {
	return &metrics.Preflight{Transactions: 2, Handshakes: 2, Requests: 1, Class: vocab.ClassNotResumed}, nil
}

// curve rises to 16 connections and falls after.
func curve(level int) float64 {
	if level <= 16 {
		return float64(level) * 100
	}
	return 1600 - float64(level-16)*10
}

func testPlan(duts ...string) *plan.Plan {
	var ds []plan.DUT
	for _, d := range duts {
		ds = append(ds, plan.DUT{Name: d, URL: "https://" + d + ".test/"})
	}
	m := plan.DefaultMethod()
	m.Cooldown = 0
	m.Explore.Concurrency = plan.Range{Min: 1, Max: 64}
	return plan.DefaultPlan(ds, m)
}

// finalRuns is a fakeExec whose final runs (the nth counted from 1) are
// worth final(n); the others follow the fixed curve.
func finalRuns(final func(n int) (float64, map[string]int64)) *fakeExec {
	return finalRunsExplored(curve, final)
}

// finalRunsExplored is finalRuns with the exploration's curve explored.
func finalRunsExplored(explored func(level int) float64, final func(n int) (float64, map[string]int64)) *fakeExec {
	n := 0
	return &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		if req.Phase != vocab.Final {
			return explored(req.Concurrency), nil
		}
		n++
		return final(n)
	}}
}

// oneCell runs a campaign of one DUT, test and profile and returns its
// summary.
func oneCell(t *testing.T, exec method.Executor) *method.Summary {
	t.Helper()
	p := testPlan("a")
	p.Tests = p.Tests[:1]
	p.Tests[0].Profiles = p.Tests[0].Profiles[:1]
	s, err := campaign(t, p, exec, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	return s
}

func campaign(t *testing.T, p *plan.Plan, exec method.Executor, dir string) *method.Campaign {
	t.Helper()
	l, err := method.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		// Every ledger line the campaign wrote is valid against its schema.
		data, err := os.ReadFile(filepath.Join(dir, method.LedgerFile))
		if err != nil {
			t.Error(err)
			return
		}
		schematest.ValidLines(t, schemas.Ledger, method.LedgerFile, data)
	})
	return &method.Campaign{Plan: p, Profiles: profiles.Builtin(), Exec: exec, Ledger: l}
}

func TestCampaignFindsThePeak(t *testing.T) {
	exec := &fakeExec{}
	s, err := campaign(t, testPlan("a"), exec, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	if got, want := len(s.Cells), 6; got != want {
		t.Fatalf("%d cells, want %d", got, want)
	}
	for _, c := range s.Cells {
		// 1, 2, 4, 8, 16, 32 (falls) then refinement at 11 and 23.
		if got, want := c.Level, 16; got != want {
			t.Errorf("%s %s: level %d, want %d (exploration %+v)", c.Engine, c.Profile, got, want, c.Exploration)
		}
		if !c.Consistent || c.Accepted != 3 || c.Total != 3 || c.Value != 1600 {
			t.Errorf("%s %s: %+v", c.Engine, c.Profile, c)
		}
	}
	if got, want := len(s.Rows), 3; got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	r := s.Rows[0]
	if r.CPS == nil || r.Gbps == nil || *r.CPS != 1600 || r.CPSRuns != (method.RunCount{Accepted: 3, Total: 3}) || r.Cipher != "ECDHE-ECDSA-AES128-SHA256" {
		t.Errorf("row %+v", r)
	}
}

// TestRejectedRuns: final runs with errors are rejected with their reasons;
// the best of three comes from the others.
func TestRejectedRuns(t *testing.T) {
	// The exploration saw 1500 at the level the finals confirm.
	exec := finalRunsExplored(func(level int) float64 { return curve(level) * 15 / 16 }, func(n int) (float64, map[string]int64) {
		switch n % 6 {
		case 1:
			return 5000, map[string]int64{"reset": 2} // the best value, but with errors
		case 2:
			return 1500, nil
		case 3:
			return 1480, nil
		case 4:
			return 1600, map[string]int64{"mismatch": 1}
		case 5:
			return 1490, nil
		}
		return 1000, nil
	})
	s := oneCell(t, exec)
	c := s.Cells[0]
	if got, want := c.Best3, []float64{1500, 1490, 1480}; !reflect.DeepEqual(got, want) {
		t.Errorf("best three %v, want %v", got, want)
	}
	if c.Value != 1500 || !c.Consistent || c.Accepted != 3 || c.Total != 5 {
		t.Errorf("cell %+v", c)
	}
	if r := c.Runs[0]; r.Accepted || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "reset ×2") {
		t.Errorf("run 1 %+v: want rejected for reset ×2", r)
	}
	if r := c.Runs[3]; r.Accepted || !strings.Contains(strings.Join(r.Reasons, ";"), "mismatch ×1") {
		t.Errorf("run 4 %+v: want rejected for the mismatch", r)
	}
}

// TestGeneratorBound: runs whose generator was saturated are rejected.
func TestGeneratorBound(t *testing.T) {
	c := oneCell(t, &fakeExec{util: 0.95}).Cells[0]
	if c.Failed == "" || c.Level != 0 {
		t.Fatalf("cell %+v: want no accepted level", c)
	}
	if r := c.Exploration[0].Reasons; len(r) != 1 || !strings.Contains(r[0], "generator-bound: its CPU was 95% of 2 cores") {
		t.Errorf("reasons %q", r)
	}
}

// TestInconsistent: runs that never agree within the tolerance mark the
// cell inconsistent after max_runs, with the spread.
func TestInconsistent(t *testing.T) {
	exec := finalRuns(func(n int) (float64, map[string]int64) {
		return 1000 * float64(n), nil // 1000, 2000, 3000, …: each new run is the best
	})
	s := oneCell(t, exec)
	c := s.Cells[0]
	if c.Consistent || c.Total != testPlan("a").Method.Final.MaxRuns || c.Value != 10000 {
		t.Errorf("cell %+v", c)
	}
	if got, want := c.Spread, 0.2; got != want {
		t.Errorf("spread %v, want %v", got, want)
	}
	if s.Rows[0].Consistent {
		t.Error("row says consistent")
	}
}

// TestResume: a campaign interrupted after some runs and resumed gives the
// same summary as one run straight through, without repeating runs.
func TestResume(t *testing.T) {
	resumeAt(t, func() *plan.Plan { return testPlan("a", "b") }, func() *fakeExec { return &fakeExec{} },
		func(calls int) []int { return []int{1, 7, 20, calls - 1} })
}

// resumeAt makes a campaign of p straight through, then, for each number
// of runs stops gives (of the runs straight through), one interrupted after
// that many runs and resumed: together they make the same runs, none twice,
// and the same summary.
func resumeAt(t *testing.T, p func() *plan.Plan, exec func() *fakeExec, stops func(calls int) []int) {
	t.Helper()
	straight := exec()
	want, err := campaign(t, p(), straight, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, want)
	for _, stopAfter := range stops(straight.calls) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		first := exec()
		c := campaign(t, p(), first, dir)
		c.Events = func(method.Event) {
			if first.calls == stopAfter {
				cancel()
			}
		}
		if _, err := c.Run(ctx); !errors.Is(err, method.ErrInterrupted) {
			t.Fatalf("stop after %d: %v, want ErrInterrupted", stopAfter, err)
		}
		cancel()
		second := exec()
		got, err := campaign(t, p(), second, dir).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if first.calls+second.calls != straight.calls {
			t.Errorf("stop after %d: %d + %d runs, straight through %d", stopAfter, first.calls, second.calls, straight.calls)
		}
		if !reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)) {
			t.Errorf("stop after %d: resumed summary differs", stopAfter)
		}
	}
}

// TestTornLedger: a line cut short by a crash is dropped; the run it held
// is made again.
func TestTornLedger(t *testing.T) {
	dir := t.TempDir()
	exec := &fakeExec{}
	want, err := campaign(t, testPlan("a"), exec, dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, want)
	file := filepath.Join(dir, method.LedgerFile)
	data, _ := os.ReadFile(file)
	lines := strings.SplitAfter(string(data), "\n")
	torn := strings.Join(lines[:5], "") + lines[5][:len(lines[5])/2]
	if err := os.WriteFile(file, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	again := &fakeExec{}
	got, err := campaign(t, testPlan("a"), again, dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, got)
	if got, want := again.calls, exec.calls-5; got != want {
		t.Errorf("made %d runs again, want %d", got, want)
	}
	if !reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)) {
		t.Error("summary after a torn ledger differs")
	}
}

// TestDifferences: two DUTs that negotiate different suites stop the
// campaign in the preliminary phase, unless differences are allowed.
func TestDifferences(t *testing.T) {
	exec := &fakeExec{suite: map[string]string{"b": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}
	_, err := campaign(t, testPlan("a", "b"), exec, t.TempDir()).Run(context.Background())
	var de *method.DifferencesError
	if !errors.As(err, &de) {
		t.Fatalf("error %v, want differences", err)
	}
	if got, want := len(de.Table), 6; got != want {
		t.Errorf("%d differences, want one per test and profile (%d)", got, want)
	}
	d := de.Table[0]
	if d.Field != "cipher_suite" || d.Values["a"] == d.Values["b"] {
		t.Errorf("difference %+v", d)
	}
	if exec.calls != 12 {
		t.Errorf("%d runs: the campaign went on past the preliminary phase", exec.calls)
	}
	c := campaign(t, testPlan("a", "b"), &fakeExec{suite: exec.suite}, t.TempDir())
	c.AllowDifferences = true
	s, err := c.Run(context.Background())
	if err != nil || len(s.Differences) != 6 || len(s.Rows) != 6 {
		t.Errorf("with differences allowed: %v, %d differences, %d rows", err, len(s.Differences), len(s.Rows))
	}
}

// TestPreliminaryFailure: a DUT that refuses its probes is "not supported"
// for those cells and the campaign goes on with the other DUT; a plan that
// says stop_on_unsupported stops with the reasons; when no DUT serves
// anything, the campaign stops.
func TestPreliminaryFailure(t *testing.T) {
	exec := &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		if req.DUT.Name == "b" {
			return 0, map[string]int64{"tls_alert:handshake_failure": 3}
		}
		return 100, nil
	}}
	s, err := campaign(t, testPlan("a", "b"), exec, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatalf("error %v", err)
	}
	for _, r := range s.Rows {
		switch {
		case r.DUT == "b" && (r.Unsupported == "" || r.CPS != nil || r.Consistent ||
			!strings.Contains(r.Unsupported, "tls_alert:handshake_failure")):
			t.Errorf("row of the refusing DUT: %+v", r)
		case r.DUT == "a" && (r.Unsupported != "" || r.CPS == nil):
			t.Errorf("row of the serving DUT: %+v", r)
		}
	}
	for _, c := range s.Cells {
		if c.DUT == "b" && (c.Unsupported == "" || len(c.Runs) > 0 || len(c.Exploration) > 0 || c.Consistent) {
			t.Errorf("the refusing DUT's cell got load: %+v", c)
		}
	}

	p := testPlan("a", "b")
	p.Method.StopOnUnsupported = true
	_, err = campaign(t, p, exec, t.TempDir()).Run(context.Background())
	var pe *method.PreliminaryError
	if !errors.As(err, &pe) || pe.DUT != "b" || !strings.Contains(err.Error(), "tls_alert:handshake_failure ×3") {
		t.Fatalf("stop_on_unsupported: error %v", err)
	}

	_, err = campaign(t, testPlan("b"), exec, t.TempDir()).Run(context.Background())
	if !errors.Is(err, method.ErrNothingSupported) {
		t.Fatalf("nothing served: error %v", err)
	}
}

func jsonOf(t *testing.T, s *method.Summary) any {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUnstable: final runs that agree with each other but fall short of
// what the exploration measured at their level by more than the tolerance
// make the cell unstable, never consistent.
func TestUnstable(t *testing.T) {
	s := oneCell(t, finalRuns(func(int) (float64, map[string]int64) { return 1400, nil }))
	c := s.Cells[0]
	if c.Consistent || c.Value != 1400 || c.Unstable != "exploration 1600 CPS, finals 1400 CPS" {
		t.Errorf("cell %+v: want unstable, exploration 1600 and finals 1400", c)
	}
	if s.Rows[0].Consistent {
		t.Error("row says consistent")
	}
	// Within the tolerance (3%) of the exploration: consistent.
	s = oneCell(t, finalRuns(func(int) (float64, map[string]int64) { return 1560, nil }))
	if c := s.Cells[0]; !c.Consistent || c.Unstable != "" {
		t.Errorf("cell %+v: want consistent", c)
	}
}

// TestInterleavedFinals: by default run k of every cell comes before run
// k+1 of any, so that drift lands on every DUT alike; in sequential order
// each cell's runs come together. The ledger keeps the order, and both give
// the same cells.
func TestInterleavedFinals(t *testing.T) {
	order := func(o string) ([]string, *method.Summary) {
		p := testPlan("a", "b")
		p.Tests = p.Tests[:1]
		p.Tests[0].Profiles = p.Tests[0].Profiles[:1]
		p.Method.Final.Order = o
		c := campaign(t, p, &fakeExec{}, t.TempDir())
		var finals []string
		c.Events = func(e method.Event) {
			if e.Phase == vocab.Final {
				finals = append(finals, fmt.Sprintf("%s%d", e.DUT, e.Seq))
			}
		}
		s, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return finals, s
	}
	inter, si := order("")
	if got, want := strings.Join(inter, " "), "a1 b1 a2 b2 a3 b3"; got != want {
		t.Errorf("interleaved finals %s, want %s", got, want)
	}
	seq, ss := order(plan.OrderSequential)
	if got, want := strings.Join(seq, " "), "a1 a2 a3 b1 b2 b3"; got != want {
		t.Errorf("sequential finals %s, want %s", got, want)
	}
	for i := range si.Cells {
		if a, b := si.Cells[i], ss.Cells[i]; a.Value != b.Value || a.Consistent != b.Consistent || a.Level != b.Level {
			t.Errorf("cell %d: interleaved %+v, sequential %+v", i, a, b)
		}
	}
}
