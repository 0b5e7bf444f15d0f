package promexp

import (
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// CampaignState is where a campaign is (tlsbench qualify): the current
// run's phase and cell, its number, and the counts so far.
type CampaignState struct {
	// The current (or last) run: its method phase, its cell (DUT × test ×
	// profile), its load level, and its number in the cell's phase, of at
	// most Of (0 when unknown).
	Phase, DUT, Engine, Profile string
	Protocol                    string // http/1.1, http/2
	Level                       int
	Seq, Of                     int
	// Run is the run's number in the campaign (1, 2, …); Running says it
	// is in progress.
	Run     int
	Running bool
	// RunsDone, by phase; Accepted and Rejected, by phase, of the runs
	// judged; RunsLeft is the most runs still to make, -1 when unknown.
	RunsDone, Accepted, Rejected map[string]int
	RunsLeft                     int
	// Cells and CellsDone count the plan's cells and those settled (-1
	// when unknown).
	Cells, CellsDone int
}

// Campaign exposes a campaign's state.
type Campaign struct {
	mu sync.Mutex
	st CampaignState
}

// Campaign registers a campaign's metrics and returns it.
func (e *Exporter) Campaign() *Campaign {
	c := &Campaign{st: CampaignState{RunsDone: map[string]int{}, Accepted: map[string]int{}, Rejected: map[string]int{},
		RunsLeft: -1, Cells: -1, CellsDone: -1}}
	e.reg.MustRegister(c)
	return c
}

// Update changes the state under the campaign's lock.
func (c *Campaign) Update(f func(*CampaignState)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.st)
}

var (
	descCampRun     = campDesc("campaign_run", "The current (or last) run's number in the campaign.")
	descCampRunning = campDesc("campaign_running", "1 while a run of the campaign is in progress.")
	descCampCurrent = campDesc("campaign_current_run_info",
		"1, labelled with the current (or last) run's phase and cell.", "phase", "dut", "engine", "protocol", "profile")
	descCampSeq      = campDesc("campaign_cell_run", "The current run's number in its cell's phase.")
	descCampOf       = campDesc("campaign_cell_runs_max", "The most runs of the current cell's phase.")
	descCampLevel    = campDesc("campaign_level", "The current run's load level (concurrency).")
	descCampDone     = campDesc("campaign_runs_done_total", "Runs made, by phase.", "phase")
	descCampAccepted = campDesc("campaign_runs_accepted_total", "Runs accepted, by phase.", "phase")
	descCampRejected = campDesc("campaign_runs_rejected_total", "Runs rejected, by phase.", "phase")
	descCampLeft     = campDesc("campaign_runs_left", "The most runs the campaign may still make (its worst case).")
	descCampCells    = campDesc("campaign_cells", "The plan's cells (DUT × test × profile).")
	descCampCellDone = campDesc("campaign_cells_done", "The cells settled.")
)

func campDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
}

// phasesOfMethod are always exposed (0 before any run of them).
var phasesOfMethod = []string{"preliminary", "exploratory", "final"}

// Describe implements prometheus.Collector.
func (c *Campaign) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descCampRun, descCampRunning, descCampCurrent, descCampSeq, descCampOf, descCampLevel,
		descCampDone, descCampAccepted, descCampRejected, descCampLeft, descCampCells, descCampCellDone,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Campaign) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	st := c.st
	done, acc, rej := maps.Clone(st.RunsDone), maps.Clone(st.Accepted), maps.Clone(st.Rejected)
	c.mu.Unlock()
	g := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	k := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
	}
	g(descCampRun, float64(st.Run))
	g(descCampRunning, b2f(st.Running))
	if st.Run > 0 {
		g(descCampCurrent, 1, st.Phase, st.DUT, st.Engine, st.Protocol, st.Profile)
		g(descCampSeq, float64(st.Seq))
		g(descCampOf, float64(st.Of))
		g(descCampLevel, float64(st.Level))
	}
	for _, p := range phasesOfMethod {
		k(descCampDone, float64(done[p]), p)
		k(descCampAccepted, float64(acc[p]), p)
		k(descCampRejected, float64(rej[p]), p)
	}
	if st.RunsLeft >= 0 {
		g(descCampLeft, float64(st.RunsLeft))
	}
	if st.Cells >= 0 {
		g(descCampCells, float64(st.Cells))
	}
	if st.CellsDone >= 0 {
		g(descCampCellDone, float64(st.CellsDone))
	}
}
