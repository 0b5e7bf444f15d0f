package method_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// degraded is a fake DUT that loses 12.5% once the final phase starts: its
// first finals (1400 at c=16) fall short of the exploration (1600 there);
// the re-exploration and the finals after it see the degraded curve. It is
// a function of the request alone, so that a resumed campaign sees the
// same DUT.
func degraded() *fakeExec {
	return &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		if req.Phase == vocab.Final || req.Round > 0 {
			return curve(req.Concurrency) * 7 / 8, nil
		}
		return curve(req.Concurrency), nil
	}}
}

func onePlan(duts ...string) *plan.Plan {
	p := testPlan(duts...)
	p.Tests = p.Tests[:1]
	p.Tests[0].Profiles = p.Tests[0].Profiles[:1]
	return p
}

// TestReexplored: a cell whose finals fall short of its exploration is
// re-explored around its level once (the level and its explored
// neighbours), frozen again and given new finals; those agree with the
// re-exploration, so the cell publishes them, consistent, and keeps the
// first finals as evidence. The ledger shows the re-exploration, and the
// published run is found in it.
func TestReexplored(t *testing.T) {
	dir := t.TempDir()
	s, err := campaign(t, onePlan("a"), degraded(), dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	c := s.Cells[0]
	r := c.Reexplored
	if r == nil {
		t.Fatalf("cell %+v: not re-explored", c)
	}
	if r.Level != 16 || r.Value != 1400 || r.Explored != 1600 || len(r.Finals) != 3 {
		t.Errorf("re-exploration %+v: want the first finals at 16 (1400) against the exploration's 1600", r)
	}
	var levels []int
	for _, p := range r.Probes {
		levels = append(levels, p.Level)
	}
	if want := []int{11, 16, 23}; !reflect.DeepEqual(levels, want) {
		t.Errorf("re-explored levels %v, want %v", levels, want)
	}
	if !c.Consistent || c.Unstable != "" || c.Value != 1400 || c.Level != 16 || c.Total != 3 {
		t.Errorf("cell %+v: want consistent at 1400 after the re-exploration", c)
	}
	entries, err := method.ReadLedger(filepath.Join(dir, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	var re, finals1 int
	for _, e := range entries {
		switch {
		case e.Round == 1 && e.Phase == vocab.Exploratory && strings.HasPrefix(e.Key, "reexplore|"):
			re++
		case e.Round == 1 && e.Phase == vocab.Final:
			finals1++
		}
	}
	if re != 3 || finals1 != 3 {
		t.Errorf("ledger: %d re-exploration runs and %d final runs after it, want 3 and 3", re, finals1)
	}
	if e := method.FinalEntry(entries, c, method.PublishedSeq(c.Runs)); e == nil || e.Round != 1 || e.Value != 1400 {
		t.Errorf("published run's entry %+v: want the final after the re-exploration", e)
	}
}

// TestReexploredStillShort: finals that fall short of the re-exploration
// too make the cell unstable (never consistent), after one re-exploration
// only.
func TestReexploredStillShort(t *testing.T) {
	s := oneCell(t, finalRuns(func(int) (float64, map[string]int64) { return 1400, nil }))
	c := s.Cells[0]
	if c.Reexplored == nil || len(c.Reexplored.Probes) != 3 {
		t.Fatalf("cell %+v: want one re-exploration of three levels", c)
	}
	if c.Consistent || c.Unstable != "exploration 1600 CPS, finals 1400 CPS" || s.Rows[0].Consistent {
		t.Errorf("cell %+v: want unstable", c)
	}
}

// TestReexploreInterleaved: the re-explorations of two cells come after
// every first final, and their new finals are interleaved like the first.
func TestReexploreInterleaved(t *testing.T) {
	c := campaign(t, onePlan("a", "b"), degraded(), t.TempDir())
	var order []string
	c.Events = func(e method.Event) {
		switch {
		case e.Phase == vocab.Final:
			order = append(order, fmt.Sprintf("%s%d.%d", e.DUT, e.Seq, e.Round))
		case e.Round == 1:
			order = append(order, fmt.Sprintf("%s@%d", e.DUT, e.Level))
		}
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "a1.0 b1.0 a2.0 b2.0 a3.0 b3.0 a@11 a@16 a@23 b@11 b@16 b@23 a1.1 b1.1 a2.1 b2.1 a3.1 b3.1"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order\n%s\nwant\n%s", got, want)
	}
	for _, cell := range s.Cells {
		if cell.Reexplored == nil || !cell.Consistent {
			t.Errorf("cell %+v", cell)
		}
	}
}

// TestResumeReexplored: a campaign interrupted anywhere, re-exploration
// included, and resumed makes no run twice (the ledger holds the
// re-exploration) and gives the same summary.
func TestResumeReexplored(t *testing.T) {
	resumeAt(t, func() *plan.Plan { return onePlan("a", "b") }, degraded, func(calls int) []int {
		var stops []int
		for stopAfter := 1; stopAfter < calls; stopAfter += 3 {
			stops = append(stops, stopAfter)
		}
		return stops
	})
}

// TestReexploreRampingTarget: a real reference target that slows down
// steadily (DelayRamp) has finals short of its exploration: the cell is
// re-explored (the ledger shows it) and, if the finals after it fall
// short again, unstable — never consistent with its first finals short of
// the exploration.
func TestReexploreRampingTarget(t *testing.T) {
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// 20 ms, then 40 ms more every second: a final run made a second after
	// the exploration waits about twice as long.
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 20 * time.Millisecond, DelayRamp: 40 * time.Millisecond,
		DelayJitter: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, tg.CA.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	m := plan.QuickMethod()
	m.Duration, m.Warmup, m.Cooldown = plan.Duration(time.Second), plan.Duration(200*time.Millisecond), 0
	m.Explore.Concurrency = plan.Range{Min: 16, Max: 16}
	m.Explore.ProbeDuration = plan.Duration(time.Second)
	m.Accept.MaxGeneratorCPU = 1
	m.Final = plan.Final{MinAccepted: 1, MaxRuns: 2, Tolerance: 0.10}
	pl := &plan.Plan{Name: "ramp", DUTs: []plan.DUT{{Name: "ramp", URL: "https://" + tg.Listener(p.Name).Addr + "/", CACert: ca}},
		Tests: []plan.Test{{Engine: vocab.EngineCPS, Path: "/1k", Profiles: []string{p.Name}}}, Method: m}
	if err := pl.Check(profiles.Builtin()); err != nil {
		t.Fatal(err)
	}
	ledgerDir := filepath.Join(dir, "campaign")
	if err := os.MkdirAll(ledgerDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := campaign(t, pl, &method.Local{UserAgent: "tlsbench-test"}, ledgerDir).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	c := s.Cells[0]
	t.Logf("exploration %+v; re-explored %+v; finals %+v; value %.0f consistent %v unstable %q", c.Exploration, c.Reexplored, c.Runs, c.Value, c.Consistent, c.Unstable)
	if c.Reexplored == nil {
		t.Fatalf("a target slowing down by 40 ms a second was not re-explored: %+v", c)
	}
	if c.Consistent && c.Unstable == "" && c.Reexplored.Finals == nil {
		t.Errorf("cell consistent on finals short of its exploration: %+v", c)
	}
	entries, err := method.ReadLedger(filepath.Join(ledgerDir, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	re := 0
	for _, e := range entries {
		if e.Round == 1 && strings.HasPrefix(e.Key, "reexplore|") {
			re++
		}
	}
	if re == 0 {
		t.Error("the ledger has no re-exploration run")
	}
}
