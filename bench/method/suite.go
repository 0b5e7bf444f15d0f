package method

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// The verdicts of a suite test's run (Entry.Verdict).
const (
	verdictPass = "pass"
	verdictFail = "fail"
)

// The units of a suite cell's value (Cell.Unit).
const (
	UnitCPS         = "CPS"
	UnitGbps        = "Gbps"
	UnitMS          = "ms"
	UnitConnections = "connections"
)

// cellKey is a cell's identity in the ledger's keys and the progress: the
// DUT, the engine and the profile, its protocol unless HTTP/1.1, and the
// test's name if it has one (the study's HTTP/1.1 tests have neither:
// their keys are those of key3, as in ledgers made before protocols).
func cellKey(dut string, t plan.Test, profile string) string {
	k := key3(dut, t.Engine, profile)
	if p := t.Protocol(); p != vocab.DefaultProtocol {
		k += "|" + p
	}
	if t.Name != "" {
		k += "|" + t.Name
	}
	if t.Resume > 0 {
		k += fmt.Sprintf("|SR=%g", t.Resume)
	}
	if t.EarlyData {
		k += "|0-RTT"
	}
	return k
}

// newCell is test t's cell of DUT dut and a profile.
func newCell(dut string, t plan.Test, profile string) *Cell {
	return &Cell{DUT: dut, Engine: t.Engine, Protocol: t.Protocol(), Profile: profile, Test: t.Name, SR: t.Resume,
		Resumption: t.Resumption, EarlyData: t.EarlyData}
}

// key is the cell's cellKey.
func (c *Cell) key() string {
	return cellKey(c.DUT, plan.Test{Engine: c.Engine, Name: c.Test, Resume: c.SR, EarlyData: c.EarlyData,
		HTTP: strings.TrimPrefix(c.Protocol, "http/")}, c.Profile)
}

// testUnit is the unit of a test's value.
func testUnit(t plan.Test) string {
	switch {
	case t.RFC9411 == plan.RFC9411Latency:
		return UnitMS
	case t.RFC9411 == plan.RFC9411Concurrent:
		return UnitConnections
	case t.Engine == vocab.EngineThroughput:
		return UnitGbps
	}
	return UnitCPS
}

// dependent is a cell of a test run at a share of another test's published
// value (plan.Test.Of): §7.8 (open loop at that share of its rate) or §7.9
// (ramped up at that share of §7.6's connections per second). It runs once
// every other cell has published.
type dependent struct {
	d    plan.DUT
	t    plan.Test
	p    *profiles.Profile
	pre  *Entry
	cell *Cell
}

// shape sets the ramps of a run (RFC 9411 §4.3.4): those of the test in
// the final phase, none in the preliminary one nor in the exploratory
// search (ours, not the RFC's), but for §7.9, whose level is the
// connections held: its ramp-up opens them at the test's share of §7.6's
// maximum (connections ÷ that rate), and each connection pauses between
// its GETs the test's pause (the run then lasts two pauses at least), else
// plan.HoldPause of the ramp-up and the sustain (NetSecOPEN's think time).
// §7.9's sustain lasts holdMinSustain at least: criterion d, its KPI, is
// judged on whole seconds.
func (c *Campaign) shape(req *Request) {
	t := req.Test
	if req.Phase == vocab.Preliminary {
		return
	}
	if req.Phase == vocab.Final || t.RFC9411 == plan.RFC9411Concurrent {
		req.RampUp, req.RampDown = time.Duration(t.RampUp), time.Duration(t.RampDown)
	}
	// A connection that pauses between its requests makes at least two
	// in the measured window.
	req.Duration = max(req.Duration, 2*time.Duration(t.Pause))
	if t.RFC9411 == plan.RFC9411Concurrent {
		req.Duration = max(req.Duration, holdMinSustain)
	}
	if r := c.holdRate[cellKey(req.DUT.Name, t, req.Profile.Name)]; r > 0 {
		req.RampUp = time.Duration(float64(req.Concurrency) / r * float64(time.Second)).Round(time.Millisecond)
		if t.Pause == 0 {
			req.Test.Pause = plan.Duration(plan.HoldPause(req.RampUp, req.Warmup+req.Duration))
		}
	}
}

// suiteSpec puts the test's objects, transactions per connection and pause,
// and the request's rate and ramps, in a run's spec.
func suiteSpec(spec *runner.Spec, req Request) error {
	t := req.Test
	objs, err := t.ObjectList()
	if err != nil {
		return err
	}
	if objs != nil {
		spec.Objects, spec.ObjectPath = objs, t.ObjectPath
	}
	if t.RequestsPerConn > 0 {
		spec.RequestsPerConn = t.RequestsPerConn
	}
	spec.Resume, spec.Resumption, spec.EarlyData = t.Resume, t.Resumption, t.EarlyData
	spec.Protocol, spec.Streams = t.Protocol(), t.Streams
	spec.Rate, spec.RampUp, spec.RampDown = req.Rate, req.RampUp, req.RampDown
	if req.Rate == 0 {
		spec.Pause = time.Duration(t.Pause)
	}
	return nil
}

// testValue is a run's value for its test: §7.8's mean time to last byte
// (ms), §7.9's connections held, else CPS or Gbps (value).
func testValue(req Request, r *metrics.Run) float64 {
	switch req.Test.RFC9411 {
	case plan.RFC9411Latency:
		return ttlbMean(r) / 1000
	case plan.RFC9411Concurrent:
		held, _ := analysis.HeldConnections(r) // 0 when not measured: the verdict fails it
		return held
	}
	return value(r)
}

// ttlbMean is the run's mean time to last byte (µs): over its objects'
// (RFC 9411 §6.3) when the record has them, else its total latency's.
func ttlbMean(r *metrics.Run) float64 {
	var sum float64
	var n int64
	for _, o := range r.Objects {
		sum += o.TTLB.Mean * float64(o.TTLB.Count)
		n += o.TTLB.Count
	}
	if n > 0 {
		return sum / float64(n)
	}
	return r.Percentiles(vocab.PhaseTotal).Mean
}

// judgeRFC9411 judges a suite test's run by its RFC 9411 criteria: a
// failed verdict rejects it.
func (c *Campaign) judgeRFC9411(e *Entry, req Request, run *metrics.Run) {
	test := req.Test.RFC9411
	if test == "" || req.Phase == vocab.Preliminary {
		return
	}
	target := req.Rate
	if test == plan.RFC9411Concurrent {
		target = float64(req.Concurrency)
	}
	judge := c.Verdict
	if judge == nil {
		judge = analysis.RFC9411
	}
	v := judge(run, test, target)
	if v.Pass {
		e.Verdict = verdictPass
		return
	}
	e.Verdict, e.Criterion = verdictFail, v.Reason()
	reason := "RFC 9411 §" + test + " failed"
	if e.Criterion != "" {
		reason += ": " + e.Criterion
	}
	e.Reasons = append(e.Reasons, reason)
}

// runDependent runs a dependent cell once the cell it refers to published.
func (c *Campaign) runDependent(ctx context.Context, s *Summary, dl *dependent) error {
	t, cell := dl.t, dl.cell
	cell.RFC9411, cell.Unit = t.RFC9411, testUnit(t)
	i := slices.IndexFunc(s.Cells, func(o *Cell) bool {
		return o.DUT == cell.DUT && o.Profile == cell.Profile && o.Test == t.Of && o.Protocol == cell.Protocol
	})
	rate := 0.0
	if i >= 0 {
		rate = c.publishedRate(s.Cells[i])
	}
	if rate <= 0 {
		cell.Failed = fmt.Sprintf("%s published no value to take %s of", t.Of, t.Share)
		c.prog.finished(cell)
		return nil
	}
	rate *= float64(t.Share)
	if t.RFC9411 == plan.RFC9411Concurrent {
		return c.hold(ctx, dl, rate)
	}
	return c.latency(ctx, dl, s.Cells[i].Level, rate)
}

// publishedRate is a cell's published rate: its connections per second
// (CPS engine), or its published run's requests per second; 0 when it
// published nothing.
func (c *Campaign) publishedRate(ref *Cell) float64 {
	if ref.Failed != "" || ref.Accepted == 0 {
		return 0
	}
	if ref.Engine == vocab.EngineCPS && ref.RFC9411 != plan.RFC9411Latency && ref.RFC9411 != plan.RFC9411Concurrent {
		return ref.Value
	}
	if ref.Engine == vocab.EngineThroughput {
		if run := PublishedRun(c.Ledger.Entries(), ref); run != nil && run.RPS != nil {
			return *run.RPS
		}
	}
	return 0
}

// hold runs a §7.9 cell: the exploratory search for the most connections
// held (each probe ramped up at rate new connections per second at most,
// accepted only if its verdict passes), then the final runs at that level.
func (c *Campaign) hold(ctx context.Context, dl *dependent, rate float64) error {
	if c.holdRate == nil {
		c.holdRate = map[string]float64{}
	}
	c.holdRate[dl.cell.key()] = rate
	f, err := c.explore(ctx, dl.d, dl.t, dl.p, dl.pre)
	f.cell.RFC9411, f.cell.Unit, f.cell.Rate = dl.cell.RFC9411, dl.cell.Unit, rate
	*dl.cell = *f.cell
	f.cell = dl.cell
	c.prog.explored(f.cell)
	if err != nil || f.cell.Failed != "" {
		return err
	}
	if err := c.final(ctx, f); err != nil {
		return err
	}
	c.prog.finished(f.cell)
	return nil
}

// latency runs a §7.8 cell: final.min_accepted accepted runs (at most
// final.max_runs) in open loop at rate, with four times the referred
// cell's level (at least 16; at most the exploration's largest) in flight
// at most (room for the rate when the latency grows: the engine drops a
// start that finds none free); it publishes the accepted run of
// the median mean time to last byte.
func (c *Campaign) latency(ctx context.Context, dl *dependent, refLevel int, rate float64) error {
	m := c.Plan.Method
	cell := dl.cell
	cell.Level, cell.Rate = min(max(4*refLevel, 16), max(m.Explore.Concurrency.Max, 16)), rate
	expect := int64(-1)
	if pre := dl.pre; pre != nil && pre.Run.Transactions > 0 && dl.t.Objects == "" {
		expect = pre.Run.Bytes.Payload / pre.Run.Transactions
	}
	req := Request{Phase: vocab.Final, DUT: dl.d, Test: dl.t, Profile: dl.p, Concurrency: cell.Level, Rate: rate,
		Duration: time.Duration(m.Duration), Warmup: time.Duration(m.Warmup), ExpectSize: expect}
	var accepted []*Entry
	for seq := 1; seq <= m.Final.MaxRuns && len(accepted) < m.Final.MinAccepted; seq++ {
		if seq > 1 {
			c.Sleep(ctx, time.Duration(m.Cooldown))
		}
		got, err := c.do(ctx, fmt.Sprintf("final|%s|%d|%d", cell.key(), cell.Level, seq), req, Entry{Seq: seq})
		if err != nil {
			return err
		}
		cell.Runs = append(cell.Runs, FinalRun{Seq: seq, Value: got.Value, Accepted: got.Accepted, Reasons: got.Reasons})
		if got.Accepted {
			accepted = append(accepted, got)
		}
	}
	cell.Total, cell.Accepted = len(cell.Runs), len(accepted)
	defer c.prog.finished(cell)
	if len(accepted) == 0 {
		cell.Failed = "no final run was accepted"
		return nil
	}
	slices.SortStableFunc(accepted, func(a, b *Entry) int { return cmpFloat(a.Value, b.Value) })
	med := accepted[(len(accepted)-1)/2]
	cell.Value, cell.Published = med.Value, med.Seq
	for i := len(accepted) - 1; i >= 0 && len(cell.Best3) < 3; i-- { // descending, as bestOf's
		cell.Best3 = append(cell.Best3, accepted[i].Value)
	}
	lo, hi := accepted[0].Value, accepted[len(accepted)-1].Value
	if hi > 0 {
		cell.Spread = (hi - lo) / hi
	}
	cell.Consistent = len(accepted) >= m.Final.MinAccepted && cell.Spread <= float64(m.Final.Tolerance)
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// suiteRows are the published table's rows of the plan's named tests: one
// per DUT, test and profile, with the test's value in its unit.
func suiteRows(s *Summary, neg func(dut, profile string) metrics.Negotiated) []Row {
	var out []Row
	for _, cell := range s.Cells {
		if cell.Test == "" && cell.SR == 0 {
			continue
		}
		n := neg(cell.DUT, cell.Profile)
		row := Row{DUT: cell.DUT, Profile: cell.Profile, Test: cell.Test, Cipher: n.OpenSSL, Group: n.GroupOrKey(),
			Unit: cell.Unit, Runs: &RunCount{Accepted: cell.Accepted, Total: cell.Total}, Consistent: cell.Consistent,
			Unsupported: cell.Unsupported, Bound: cell.Bound, SR: cell.SR, Protocol: cell.Protocol}
		if cell.Accepted > 0 && cell.Failed == "" {
			v := cell.Value
			row.Value = &v
		}
		if strings.TrimSpace(row.Unit) == "" {
			row.Unit = testUnit(plan.Test{Engine: cell.Engine})
		}
		out = append(out, row)
	}
	return out
}
