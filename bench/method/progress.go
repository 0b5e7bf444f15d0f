package method

import (
	"cmp"
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Progress is where a campaign stands and how long it may still take, as
// copied out of the campaign (Campaign.Status, Campaign.Watch).
//
// The estimate is an upper one: the plan bounds every phase's number of
// runs and their durations, and the campaign lowers the bound as it learns
// (a cell not supported, an exploration ended, runs that agree). The
// largest overhead a run took beyond its warm-up and duration (starting
// the load, the drain, the preflight) is added to every run left.
type Progress struct {
	// The current (or last) run: its phase, cell and load level.
	Phase   vocab.MethodPhase
	DUT     string
	Engine  vocab.Engine
	Profile string
	Test    string // the plan test's name, if it has one
	Level   int
	// Run is the cell's run number in its phase, of at most Of.
	Run, Of int
	// Running: a run is in progress.
	Running bool
	// SR is the test's session reuse (plan.Test.Resume), if it asks for one.
	SR float64

	// RunsDone counts the runs made, RunsCached those of them taken from
	// the ledger; RunsLeft is the most runs still to make.
	RunsDone, RunsCached, RunsLeft int
	// Cells counts the plan's DUT × test × profile cells, CellsDone those
	// settled (not supported, exploration failed, or final runs ended).
	Cells, CellsDone int

	// Elapsed is the time since the campaign started; Remaining the
	// (upper) estimate of the time left.
	Elapsed, Remaining time.Duration
	// Overhead is the largest time a run of this process took beyond its
	// warm-up and duration.
	Overhead time.Duration
	// Protocol carries the current run: http/1.1, http/2.
	Protocol string
}

// Cell names the current cell: "DUT engine profile", "DUT engine SR=R
// profile", or the test's name in place of the engine.
func (p Progress) Cell() string {
	if p.DUT == "" {
		return ""
	}
	name := cmp.Or(p.Test, p.Engine.String()) + vocab.OverProtocol(p.Protocol)
	if p.SR > 0 {
		name += fmt.Sprintf(" SR=%g", p.SR)
	}
	return fmt.Sprintf("%s %s %s", p.DUT, name, p.Profile)
}

// Status returns the campaign's progress now. It may be called from any
// goroutine, while Do runs or after.
func (c *Campaign) Status() Progress {
	return c.prog.status()
}

// cellBudget is the most runs a cell has left in each phase: final.max_runs
// for each final pass (the first, the one after a re-exploration, the
// repeats), and the re-exploration's probes until the campaign knows the
// cell is not re-explored.
type cellBudget struct {
	prelim, explore, final int
	reexplore              int
	noRefinal              bool // the budget of the finals after a re-exploration dropped
	probes, finals         int  // made so far
	lastSeq                int  // the last final run's number in its pass
	settled                bool
}

// reexploreProbes is the most probes of a re-exploration (see neighbours).
const reexploreProbes = 3

// tracker follows a campaign: its hooks are called by the campaign's
// goroutine, status by any.
type tracker struct {
	mu    sync.Mutex
	now   func() time.Time
	watch func(Progress)
	m     plan.Method
	cells map[string]*cellBudget // by key3
	p     Progress

	started, runStart, lastEnd time.Time
	nominal                    time.Duration // the run in progress: warm-up + duration
	cooldown                   time.Duration // after the last run, still to wait
}

// maxProbes is the most exploratory probes of a cell: the geometric steps
// from min to max, the levels probed again, and two refinements.
func maxProbes(r plan.Range) int {
	if r.Min < 1 || r.Max < r.Min {
		return 0
	}
	return bits.Len(uint(r.Max/r.Min)) + maxRepeats + 2
}

// phaseTimes are a phase's nominal run (warm-up + duration) and the
// cool-down after it.
func phaseTimes(m plan.Method, ph vocab.MethodPhase) (run, cool time.Duration) {
	probe := time.Duration(m.Explore.ProbeDuration)
	switch ph {
	case vocab.Preliminary:
		return min(probe, time.Second), 0
	case vocab.Exploratory:
		return probe + min(time.Duration(m.Warmup), probe/2), time.Duration(m.Cooldown)
	default:
		return time.Duration(m.Duration) + time.Duration(m.Warmup), time.Duration(m.Cooldown)
	}
}

// begin starts following a campaign of p.
func (t *tracker) begin(p *plan.Plan, now func() time.Time, watch func(Progress)) {
	t.mu.Lock()
	if now == nil {
		now = time.Now
	}
	t.now, t.watch, t.m = now, watch, p.Method
	t.cells = map[string]*cellBudget{}
	t.p = Progress{}
	for _, d := range p.DUTs {
		for _, tt := range p.Tests {
			for _, name := range tt.Profiles {
				k := cellKey(d.Name, tt, name)
				if _, dup := t.cells[k]; dup {
					continue
				}
				passes := 1 + 1 + max(p.Method.Final.Repeat-1, 0) // the first, after a re-exploration, the repeats
				t.cells[k] = &cellBudget{prelim: 1, explore: maxProbes(p.Method.Explore.Concurrency),
					reexplore: reexploreProbes, final: passes * p.Method.Final.MaxRuns}
			}
		}
	}
	t.p.Cells = len(t.cells)
	t.started, t.lastEnd, t.cooldown = now(), time.Time{}, 0
	t.mu.Unlock()
	t.notify()
}

// start: a run of req begins (seq: a final run's number).
func (t *tracker) start(req Request, seq int) {
	t.mu.Lock()
	t.at(req, seq)
	t.p.Running = true
	t.runStart = t.now()
	t.nominal, _ = phaseTimes(t.m, req.Phase)
	t.cooldown = 0
	t.mu.Unlock()
	t.notify()
}

// end: the run started last has ended.
func (t *tracker) end(req Request) {
	t.mu.Lock()
	now := t.now()
	t.p.Overhead = max(t.p.Overhead, now.Sub(t.runStart)-t.nominal)
	t.p.Running = false
	t.spend(req)
	_, t.cooldown = phaseTimes(t.m, req.Phase)
	t.lastEnd = now
	t.mu.Unlock()
	t.notify()
}

// cached: the run of req was found in the ledger.
func (t *tracker) cached(req Request, seq int) {
	t.mu.Lock()
	t.at(req, seq)
	t.p.Running = false
	t.p.RunsCached++
	t.spend(req)
	t.mu.Unlock()
	t.notify()
}

// at makes req the current run (t.mu held).
func (t *tracker) at(req Request, seq int) {
	t.p.Phase = req.Phase
	t.p.DUT = req.DUT.Name
	t.p.Engine, t.p.Protocol = req.Test.Engine, req.Test.Protocol()
	t.p.Profile = req.Profile.Name
	t.p.Test = req.Test.Name
	t.p.SR = req.Test.Resume
	t.p.Level = req.Concurrency
	b := t.cell(cellKey(req.DUT.Name, req.Test, req.Profile.Name))
	switch req.Phase {
	case vocab.Preliminary:
		t.p.Run, t.p.Of = 1, 1
	case vocab.Exploratory:
		t.p.Run, t.p.Of = b.probes+1, maxProbes(t.m.Explore.Concurrency)
		if req.Round > 0 {
			t.p.Run, t.p.Of = reexploreProbes-b.reexplore+1, reexploreProbes
		}
	default:
		t.p.Run, t.p.Of = seq, t.m.Final.MaxRuns
		b.lastSeq = seq
	}
}

// spend counts a run of req as made (t.mu held).
func (t *tracker) spend(req Request) {
	t.p.RunsDone++
	b := t.cell(cellKey(req.DUT.Name, req.Test, req.Profile.Name))
	switch req.Phase {
	case vocab.Preliminary:
		b.prelim = max(b.prelim-1, 0)
	case vocab.Exploratory:
		b.probes++
		if req.Round > 0 {
			b.reexplore = max(b.reexplore-1, 0)
		} else {
			b.explore = max(b.explore-1, 0)
		}
	default:
		b.finals++
		b.final = max(b.final-1, 0)
		if b.final == 0 && b.reexplore == 0 {
			t.settle(b)
		}
	}
}

// cell returns the budget of a cell, a new one if the plan had none (t.mu
// held).
func (t *tracker) cell(k string) *cellBudget {
	b, ok := t.cells[k]
	if !ok {
		b = &cellBudget{}
		t.cells[k] = b
		t.p.Cells++
	}
	return b
}

func (t *tracker) settle(b *cellBudget) {
	if !b.settled {
		b.settled = true
		t.p.CellsDone++
	}
	b.explore, b.final, b.reexplore = 0, 0, 0
}

// skip: the cell gets no load (not supported).
func (t *tracker) skip(k string) {
	t.mu.Lock()
	t.settle(t.cell(k))
	t.mu.Unlock()
	t.notify()
}

// explored: the cell's exploration is over; without a level it is settled.
func (t *tracker) explored(c *Cell) {
	t.mu.Lock()
	b := t.cell(c.key())
	b.explore = 0
	if c.Failed != "" {
		t.settle(b)
	}
	t.mu.Unlock()
	t.notify()
}

// settled: a pass of the cell's final runs is over (they agree): the rest
// of that pass's final.max_runs will not be made.
func (t *tracker) settled(c *Cell) {
	t.mu.Lock()
	b := t.cell(c.key())
	b.final = max(b.final-max(t.m.Final.MaxRuns-b.lastSeq, 0), 0)
	if b.final == 0 && b.reexplore == 0 {
		t.settle(b)
	}
	t.cooldown = 0 // no cool-down follows the run that settles a pass
	t.mu.Unlock()
	t.notify()
}

// reexplored: the cell will make no more re-exploration probes (it was not
// short, or its re-exploration is over); refinal says whether final runs
// follow a re-exploration (it found an accepted level).
func (t *tracker) reexplored(c *Cell, refinal bool) {
	t.mu.Lock()
	b := t.cell(c.key())
	b.reexplore = 0
	if !refinal && !b.noRefinal {
		b.noRefinal = true
		b.final = max(b.final-t.m.Final.MaxRuns, 0)
	}
	if b.final == 0 {
		t.settle(b)
	}
	t.mu.Unlock()
	t.notify()
}

// finished: the cell's final phase is over, repeats included.
func (t *tracker) finished(c *Cell) {
	t.mu.Lock()
	t.settle(t.cell(c.key()))
	t.mu.Unlock()
	t.notify()
}

func (t *tracker) notify() {
	if t.watch != nil {
		t.watch(t.status())
	}
}

// status computes the progress now.
func (t *tracker) status() Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.now == nil {
		return Progress{}
	}
	now := t.now()
	p := t.p
	p.Elapsed = now.Sub(t.started)
	p.RunsLeft = 0
	var left time.Duration
	for _, b := range t.cells {
		p.RunsLeft += b.prelim + b.explore + b.reexplore + b.final
		for _, ph := range []struct {
			phase vocab.MethodPhase
			n     int
		}{{vocab.Preliminary, b.prelim}, {vocab.Exploratory, b.explore + b.reexplore}, {vocab.Final, b.final}} {
			run, cool := phaseTimes(t.m, ph.phase)
			left += time.Duration(ph.n) * (run + p.Overhead + cool)
		}
	}
	if p.Running {
		// The run in progress is still counted among the runs left.
		left -= min(now.Sub(t.runStart), t.nominal+p.Overhead)
	} else if !t.lastEnd.IsZero() {
		left += max(t.cooldown-now.Sub(t.lastEnd), 0)
	}
	p.Remaining = max(left, 0)
	return p
}
