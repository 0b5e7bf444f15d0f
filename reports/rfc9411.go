package reports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// rfcTest is a test of a campaign's plan that runs one of RFC 9411's HTTPS
// tests, and each DUT × profile's judged run.
type rfcTest struct {
	Campaign string       `json:"campaign"`
	Name     string       `json:"name"`
	RFC9411  string       `json:"rfc9411"` // 7.6, 7.7, 7.8 or 7.9
	Engine   vocab.Engine `json:"engine"`
	Path     string       `json:"path,omitempty"`
	Objects  string       `json:"objects,omitempty"`
	// Matched says how the campaign's runs were found to be this test's.
	Matched string      `json:"matched"`
	Results []rfcResult `json:"results"`
	// Protocol carried its runs: http/1.1, http/2.
	Protocol string `json:"protocol"`
}

// rfcResult is one DUT × profile of an RFC 9411 test: the run judged (the
// published final run, else the last final run), its KPIs, its verdict and
// its parameters beside the RFC's.
type rfcResult struct {
	DUT     string `json:"dut"`
	Profile string `json:"profile"`
	Seq     int    `json:"seq,omitempty"` // the final run judged; 0: none
	// Published is false when no final run was accepted: the last one is
	// judged.
	Published bool              `json:"published"`
	Missing   string            `json:"missing,omitempty"` // why no run was judged
	KPIs      []rfcKPI          `json:"kpis,omitempty"`
	Latency   []rfcLatency      `json:"latency,omitempty"` // §7.8's TTFB and TTLB
	Verdict   *analysis.Verdict `json:"verdict,omitempty"`
	Params    []rfcParam        `json:"parameters,omitempty"`
}

// rfcKPI is a key performance indicator of the test, formatted.
type rfcKPI struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// rfcLatency is a latency of §7.8 (µs): TTFB or TTLB, of one object or of
// all.
type rfcLatency struct {
	Object string              `json:"object"`
	Metric string              `json:"metric"`
	Source string              `json:"source"`
	Value  metrics.Percentiles `json:"value_us"`
}

// rfcParam is a parameter RFC 9411 asks to be documented: what the RFC
// (or NetSecOPEN's reference, where the RFC leaves it open) specifies, what
// the run did, and the deviation, "" when none.
type rfcParam struct {
	Name      string `json:"name"`
	RFC       string `json:"rfc"`
	Run       string `json:"run"`
	Deviation string `json:"deviation,omitempty"`
}

// How runs are matched to a plan's tests: by the test's name when the
// campaign's cells carry it, else by engine, profile and path.
const (
	rfcMatchedByName = "by the test's name in the campaign's cells"
	rfcMatched       = "by engine, profile and request path (the campaign's cells do not name their test)"
)

// rfcTitles are the RFC's titles of its HTTPS tests.
var rfcTitles = map[string]string{
	"7.6": "HTTPS connections per second",
	"7.7": "HTTPS throughput",
	"7.8": "HTTPS transaction latency",
	"7.9": "concurrent TCP/HTTPS connection capacity",
}

// rfc9411Tests are the RFC 9411 tests of the inputs' campaigns.
func rfc9411Tests(inputs []Input) []rfcTest {
	var out []rfcTest
	for _, in := range inputs {
		c := in.Campaign
		if c == nil || c.Plan == nil || c.Summary == nil {
			continue
		}
		for _, t := range c.Plan.Tests {
			if t.RFC9411 == "" {
				continue
			}
			rt := rfcTest{Campaign: c.Summary.Name, Name: t.Name, RFC9411: t.RFC9411, Engine: t.Engine, Path: t.Path,
				Objects: t.Objects, Matched: rfcMatched, Protocol: t.Protocol()}
			if rt.Name == "" {
				rt.Name = t.RFC9411 + " " + t.Path
			}
			for _, cell := range c.Summary.Cells {
				name := cellTest(cell)
				switch {
				case name != "" && name != t.Name:
					continue
				case name != "":
					rt.Matched = rfcMatchedByName
				case cell.Engine != t.Engine || !slices.Contains(t.Profiles, cell.Profile) ||
					cmp.Or(cell.Protocol, vocab.DefaultProtocol) != t.Protocol():
					continue
				}
				if res, ok := rfcResultOf(c, t, cell, name != ""); ok {
					rt.Results = append(rt.Results, res)
				}
			}
			out = append(out, rt)
		}
	}
	return out
}

// cellTest is the name of the plan test a cell was made for ("" for the
// study's tests, and in campaigns whose cells did not name their test). It
// is read from the cell's JSON ("test"), so that campaigns written before
// and after cells carried the name are read alike.
func cellTest(cell *method.Cell) string {
	var named struct {
		Test string `json:"test"`
	}
	if data, err := json.Marshal(cell); err == nil {
		_ = json.Unmarshal(data, &named) // a Cell's own JSON: it decodes
	}
	return named.Test
}

// rfcResultOf judges a cell's run by its test's criteria: the published
// final run, else the last one. ok is false when a cell not named by its
// test is another test's (its run's path differs).
func rfcResultOf(c *Campaign, t plan.Test, cell *method.Cell, named bool) (rfcResult, bool) {
	res := rfcResult{DUT: cell.DUT, Profile: cell.Profile}
	var e *method.Entry
	if r := method.PublishedRun(c.Ledger, cell); r != nil {
		for _, fr := range cell.Runs {
			if x := method.FinalEntry(c.Ledger, cell, fr.Seq); x != nil && x.Run == r {
				e, res.Published = x, true
			}
		}
	}
	for i := len(cell.Runs) - 1; e == nil && i >= 0; i-- {
		e = method.FinalEntry(c.Ledger, cell, cell.Runs[i].Seq)
	}
	if e == nil || e.Run == nil {
		res.Missing = "no final run in the ledger"
		if cell.Unsupported != "" {
			res.Missing = "not supported: " + cell.Unsupported
		}
		return res, true
	}
	r := e.Run
	if p := urlPath(r.Target.URL); !named && t.Path != "" && p != "" && p != t.Path {
		return res, false
	}
	res.Seq = e.Seq
	target := rfcTarget(r)
	if t.RFC9411 == "7.9" {
		target = float64(r.Load.Concurrency) // the connections to hold, as the suite judges it
	}
	v := analysis.RFC9411(r, t.RFC9411, target)
	res.Verdict = &v
	res.KPIs = rfcKPIs(r, t.RFC9411, v)
	if t.RFC9411 == "7.9" && cell.Accepted > 0 {
		res.KPIs = append([]rfcKPI{capacityKPI(cell)}, res.KPIs...)
	}
	if t.RFC9411 == "7.8" {
		res.Latency = rfcLatencies(r)
	}
	res.Params = rfcParams(r, t, c.Plan.Tests)
	return res, true
}

// capacityKPI is §7.9's KPI, the capacity: the most connections held with
// every MUST met, or "≥ N" when the search stopped at a limit (the
// generator's, the search's ceiling), not at the device.
func capacityKPI(cell *method.Cell) rfcKPI {
	how := ""
	if cell.Search != nil {
		how = " (search: " + cell.Search.Stop + ")"
	}
	if cell.Bound != "" {
		return rfcKPI{"connection capacity", fmt.Sprintf("≥ %.0f connections (%s): the search stopped at it, not at "+
			"the device; not the device's capacity%s", cell.Value, cell.Bound, how)}
	}
	return rfcKPI{"connection capacity", fmt.Sprintf("%.0f connections: the most held with every MUST met%s",
		cell.Value, how)}
}

// rfcTarget is §7.8's target objective: the open loop's rate the run was
// given (transactions per second); 0 in closed loop.
func rfcTarget(r *metrics.Run) float64 {
	if r.Load.Mode == "open" {
		return r.Load.Rate
	}
	return 0
}

func urlPath(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Path
}

// rfcKPIs are the test's KPIs: §7.6 CPS, §7.7 throughput and transactions
// per second, §7.8 the rate held (its latencies are rfcLatencies), §7.9
// the concurrent connections held; every test's failed transactions.
func rfcKPIs(r *metrics.Run, test string, v analysis.Verdict) []rfcKPI {
	tps := 0.0
	if r.DurationS > 0 {
		tps = float64(r.Transactions) / r.DurationS
	}
	var out []rfcKPI
	switch test {
	case "7.6":
		cps := tps
		if r.CPS != nil {
			cps = *r.CPS
		}
		out = append(out, rfcKPI{"connections per second", fmt.Sprintf("%.1f", cps)})
	case "7.7":
		out = append(out, rfcKPI{"throughput (payload)", FormatGbps(metrics.Value(r.Gbps))},
			rfcKPI{"throughput (TLS, wire)", FormatGbps(metrics.Value(r.WireGbps))},
			rfcKPI{"transactions per second", fmt.Sprintf("%.1f", tps)})
	case "7.8":
		out = append(out, rfcKPI{"transactions per second", fmt.Sprintf("%.1f", tps)})
		if t := rfcTarget(r); t > 0 {
			out = append(out, rfcKPI{"target objective", fmt.Sprintf("%.1f transactions per second", t)})
		}
	case "7.9":
		held := "not measured (no open connections counted)"
		for _, c := range v.Criteria {
			if c.Name == analysis.CriterionConnections && !strings.HasPrefix(c.Note, "not measured") {
				held = c.Note
			}
		}
		out = append(out, rfcKPI{"concurrent connections held", held})
		if r.Load.ConnectionsHeld >= 0 {
			out = append(out, rfcKPI{"open at the window's end (peak)",
				fmt.Sprintf("%d (%d)", r.Load.ConnectionsHeld, r.Load.ConnectionsHeldPeak)})
		}
	}
	return append(out, rfcKPI{"failed transactions", fmt.Sprintf("%d of %d", r.Errors.Total,
		r.Transactions+r.Errors.Total)})
}

// rfcLatencies are §7.8's TTFB and TTLB: each object's (RFC 9411 §6.3's,
// from the transaction's first packet), else the run's own phases (ttfb
// from the request, total from the connection's start).
func rfcLatencies(r *metrics.Run) []rfcLatency {
	var out []rfcLatency
	for _, o := range r.Objects {
		name := sizeText(o.Size)
		out = append(out, rfcLatency{name, "TTFB", "RFC 9411 §6.3", o.TTFB},
			rfcLatency{name, "TTLB", "RFC 9411 §6.3", o.TTLB})
	}
	if len(out) > 0 {
		return out
	}
	if p, ok := r.Latency[vocab.PhaseTTFB.String()]; ok {
		out = append(out, rfcLatency{"all", "TTFB", "tlsbench ttfb: from the request written", p})
	}
	if p, ok := r.Latency[vocab.PhaseTotal.String()]; ok {
		out = append(out, rfcLatency{"all", "TTLB", "tlsbench total: from the connection's start", p})
	}
	return out
}

// sizeText is a size in bytes in KiB when it is whole KiB: "16 KiB".
func sizeText(n int64) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// rfcSpec is what RFC 9411 (or, where it leaves a value open, NetSecOPEN's
// reference scripts) specifies for a test, as printed (objects, perConn)
// and as compared: the objects, one of sets a run (in NetSecOPEN's KB of
// 1000 bytes), the transactions per connection (one of conns) and the pause
// between them, the ramps (s).
type rfcSpec struct {
	objects, perConn string
	sets             []string
	conns            []int
	pause            time.Duration
	ramp             float64
}

var rfcSpecs = map[string]rfcSpec{
	"7.6": {"1, 2, 4, 16, 64 KB (one per run)", "1", []string{"1k", "2k", "4k", "16k", "64k"}, []int{1}, 0, nsoRamp},
	"7.7": {"1, 16, 64, 256 KB and the mix (NetSecOPEN)", "10 (NetSecOPEN)",
		[]string{"1k", "16k", "64k", "256k", plan.SuiteMix}, []int{10}, 0, nsoRamp},
	"7.8": {"1, 16, 64 KB (NetSecOPEN)", "1 and 10 (NetSecOPEN)", []string{"1k", "16k", "64k"}, []int{1, 10}, 0, nsoRamp},
	"7.9": {"1 KB (NetSecOPEN)", "10, (ramp-up + sustain)/10 apart (NetSecOPEN)", []string{"1k"}, []int{10}, -1, 480},
}

// rfcSuites are RFC 9411 §4.3.1.4's recommended TLS 1.2 suites (OpenSSL
// names) with their certificates' keys; TLS 1.3's are RFC 8446's.
var rfcSuites = map[string][]string{"ECDHE-ECDSA-AES128-GCM-SHA256": {"ECDSA P-256"},
	"ECDHE-RSA-AES128-GCM-SHA256": {"RSA 2048"}, "ECDHE-ECDSA-AES256-GCM-SHA384": {"ECDSA P-384", "ECDSA P-521"},
	"ECDHE-RSA-AES256-GCM-SHA384": {"RSA 4096"}}

// The timeline, seconds: NetSecOPEN's reference scripts' startup and ramps
// (RFC 9411 §4.3.4 leaves them to the tester; §7.9's are longer), and the
// sustain phase of 300 s tlsbench reads in the RFC (docs/RFC9411.md: check
// its wording).
const (
	nsoStartup = 5
	nsoRamp    = 10
	nsoSustain = 300
)

// rfcParams are the parameters RFC 9411 asks a report to state, beside
// what it (or NetSecOPEN) specifies, with each deviation from it (tests:
// the plan's, §7.8's of among them).
func rfcParams(r *metrics.Run, t plan.Test, tests []plan.Test) []rfcParam {
	spec := rfcSpecs[t.RFC9411]
	n := r.Negotiated
	suite := rfcParam{Name: "cipher suite and key", RFC: "TLS 1.2: ECDHE-ECDSA or ECDHE-RSA with AES-GCM, " +
		"each with its key (§4.3.1.4); TLS 1.3: RFC 8446's suites", Run: negotiated(n)}
	switch keys, ok := rfcSuites[n.OpenSSL]; {
	case n.Version == "TLS1.3":
	case n.Version != "TLS1.2":
		suite.Deviation = "neither TLS 1.2 nor TLS 1.3"
	case !ok:
		suite.Deviation = n.OpenSSL + " is not among the RFC's recommended suites"
	case !slices.Contains(keys, n.CertKey):
		suite.Deviation = fmt.Sprintf("certificate %s: the RFC pairs %s with %s", n.CertKey, n.OpenSSL,
			strings.Join(keys, " or "))
	}
	out := []rfcParam{suite, rfcObjects(r, t, spec), rfcPerConn(r, t, spec)}
	out = append(out, rfcTimeline(r, t, spec)...)
	clients := fmt.Sprintf("%d workers (%s loop)", r.Load.Concurrency, dash(r.Load.Mode))
	if r.Load.Rate > 0 {
		clients += fmt.Sprintf(" at %.1f transactions per second", r.Load.Rate)
	}
	if r.Load.Sources > 0 {
		clients += fmt.Sprintf(", %d source addresses", r.Load.Sources)
	}
	if len(r.Agents) > 0 {
		clients += fmt.Sprintf(", %d agents", len(r.Agents))
	}
	out = append(out, rfcParam{Name: "clients", RFC: "the tester's choice, stated", Run: clients},
		rfcParam{Name: "servers", RFC: "the tester's choice, stated", Run: "the DUT at " + dash(r.Target.Address) +
			"; its backends are not in the run record"})
	if t.RFC9411 == "7.8" {
		load := rfcParam{Name: "load", RFC: "50% of the maximum of §7.6 or §7.7", Run: "closed loop: no target"}
		if t.Of != "" {
			load.Run = fmt.Sprintf("%s of %s's published rate", t.Share, t.Of)
		}
		if rfcTarget(r) > 0 {
			load.Run += fmt.Sprintf(": %.1f transactions per second", rfcTarget(r))
		}
		i := slices.IndexFunc(tests, func(o plan.Test) bool { return o.Name == t.Of })
		if i < 0 || !slices.Contains([]string{"7.6", "7.7"}, tests[i].RFC9411) || float64(t.Share) != 0.5 {
			load.Deviation = "not 50% of a published maximum of §7.6 or §7.7"
		}
		out = append(out, load)
	}
	return out
}

// object is an object's size and weight: the record's, the plan's (its
// httpreq.Object) or the preflight's body.
type object struct {
	Size   int64
	Weight float64
}

// objectsOf are the objects of a plan's objects string ("16k", a mix),
// in tlsbench's KiB; nil when it has none or does not parse.
func objectsOf(spec string) []object {
	list, _ := plan.Test{Objects: spec}.ObjectList()
	var out []object
	for _, o := range list {
		out = append(out, object{o.Size, o.Weight})
	}
	return out
}

// rfcObjects is the object sizes' parameter: the record's objects, else
// the plan test's, else the one whose body the preflight read.
func rfcObjects(r *metrics.Run, t plan.Test, spec rfcSpec) rfcParam {
	p := rfcParam{Name: "object sizes", RFC: spec.objects, Run: "the object at " + dash(urlPath(r.Target.URL))}
	var objs []object
	for _, o := range r.Objects {
		objs = append(objs, object{o.Size, o.Weight})
	}
	if len(objs) == 0 && t.Objects != "" {
		objs = objectsOf(t.Objects) // the plan's, validated
	} else if pf := r.Preflight; len(objs) == 0 && pf != nil && pf.OK {
		objs = []object{{pf.BodySize, 1}}
	}
	if len(objs) == 0 {
		p.Deviation = "its size is not recorded"
		return p
	}
	var sizes []string
	for _, o := range objs {
		sizes = append(sizes, fmt.Sprintf("%s ×%g", sizeText(o.Size), o.Weight))
	}
	p.Run = strings.Join(sizes, ", ")
	switch rfcUnit(objs, spec.sets) {
	case 1024:
		p.Deviation = "sizes in KiB (1024 bytes); NetSecOPEN's KB are 1000 bytes"
	case 0:
		p.Deviation = "not one of the RFC's objects for this test"
	}
	return p
}

// rfcUnit is the size of a k, 1000 or 1024 bytes, with which the objects,
// equally weighted, are one of the sets (tlsbench's syntax: "16k", a mix);
// 0 with neither.
func rfcUnit(objs []object, sets []string) float64 {
	slices.SortFunc(objs, func(a, b object) int { return cmp.Compare(a.Size, b.Size) })
	for _, unit := range []float64{1000, 1024} {
		for _, set := range sets {
			if slices.EqualFunc(objs, objectsOf(set), func(o, w object) bool {
				return o.Weight == objs[0].Weight && o.Size == int64(math.Round(float64(w.Size)*unit/1024))
			}) {
				return unit
			}
		}
	}
	return 0
}

// rfcPerConn is the transactions per connection's parameter: their number
// and the pause between them, both the RFC's or a deviation.
func rfcPerConn(r *metrics.Run, t plan.Test, spec rfcSpec) rfcParam {
	p := rfcParam{Name: "transactions per connection", RFC: spec.perConn}
	n, pause, want := t.RequestsPerConn, time.Duration(t.Pause), spec.pause
	switch {
	case n > 0:
		p.Run = strconv.Itoa(n)
	case t.Engine == vocab.EngineCPS:
		n, p.Run = 1, "1 (a new connection per transaction)"
	default:
		p.Run = "unbounded (kept-alive connections)"
	}
	if want < 0 { // §7.9: NetSecOPEN's think time, (ramp-up + sustain)/10
		up := time.Duration(t.RampUp)
		if r.Timeline != nil {
			up = time.Duration(r.Timeline.RampUpS * float64(time.Second))
		}
		sustain := time.Duration(r.DurationS * float64(time.Second))
		want = ((up + sustain) / 10).Round(time.Second)
		if pause == 0 { // the suite's own: plan.HoldPause
			pause = plan.HoldPause(up, sustain+time.Duration(r.WarmupS*float64(time.Second)))
		}
	}
	if pause > 0 {
		p.Run += fmt.Sprintf(", %s between them", pause.Round(time.Millisecond))
	}
	if !slices.Contains(spec.conns, n) || (pause-want).Abs() >= time.Second {
		p.Deviation = "not the RFC's " + spec.perConn
		if spec.pause < 0 {
			p.Deviation += fmt.Sprintf(" (%s here)", want)
		}
	}
	return p
}

// rfcTimeline is the timeline's parameters: startup (warm-up), ramp up,
// sustain, ramp down, each beside NetSecOPEN's reference: a deviation when
// they differ as printed (a window measured to the nanosecond is not 300 s).
func rfcTimeline(r *metrics.Run, t plan.Test, spec rfcSpec) []rfcParam {
	up, down := time.Duration(t.RampUp).Seconds(), time.Duration(t.RampDown).Seconds()
	if tl := r.Timeline; tl != nil {
		up, down = tl.RampUpS, tl.RampDownS
	}
	phase := func(name string, want, got float64) rfcParam {
		p := rfcParam{Name: name, RFC: fmt.Sprintf("%g s (NetSecOPEN's reference)", want), Run: fmt.Sprintf("%.3g s", got)}
		if name == "sustain" {
			p.RFC = fmt.Sprintf("%g s (RFC 9411, as tlsbench reads it; NetSecOPEN's scripts: 30 s per goal-seeking step)",
				want)
		}
		switch {
		case p.Run == fmt.Sprintf("%.3g s", want):
		case got < want:
			p.Deviation = fmt.Sprintf("%.3g s shorter", want-got)
		default:
			p.Deviation = fmt.Sprintf("%.3g s longer", got-want)
		}
		return p
	}
	sustain := phase("sustain", nsoSustain, r.DurationS)
	if strings.HasSuffix(sustain.Deviation, "shorter") {
		sustain.Deviation += ": a short method's window, too short for the RFC's sustain phase"
	}
	return []rfcParam{phase("ramp up", spec.ramp, up), phase("startup (warm-up)", nsoStartup, r.WarmupS), sustain,
		phase("ramp down", spec.ramp, down)}
}

// rfc9411Blocks is the report's RFC 9411 section: per test, the results
// (KPIs and verdict), the criteria, §7.8's latencies and the parameters
// beside the RFC's; nothing when no campaign ran an RFC 9411 test.
func rfc9411Blocks(r *Report) []block {
	if len(r.RFC9411) == 0 {
		return nil
	}
	out := []block{heading{2, "RFC 9411"}, para("The campaigns' RFC 9411 tests (Benchmarking Methodology for " +
		"Network Security Device Performance, §7.6–§7.9), each DUT × profile's published final run (else its last) " +
		"judged by the test's pass/fail criteria. Where the RFC leaves a value to the tester, NetSecOPEN's " +
		"reference value is the one specified; docs/RFC9411.md says which and why.")}
	for _, t := range r.RFC9411 {
		out = append(out, heading{3, fmt.Sprintf("§%s %s: %s (%s) over %s", t.RFC9411, rfcTitles[t.RFC9411], t.Name,
			t.Campaign, vocab.ProtocolTitle(t.Protocol))})
		if len(t.Results) == 0 {
			out = append(out, para("No run of this test in the campaign."))
			continue
		}
		out = append(out, rfcResultsTable(t), para("Runs matched to the test "+t.Matched+"."))
		for _, res := range t.Results {
			if res.Verdict == nil {
				continue
			}
			what := res.DUT + ", " + res.Profile
			out = append(out, para(what+": the criteria"), rfcCriteriaTable(res.Verdict))
			if len(res.Latency) > 0 {
				out = append(out, para(what+": TTFB and TTLB"), rfcLatencyTable(res.Latency))
			}
			params := newTable("Parameter", "RFC 9411 specifies", "this run", "deviation")
			for _, p := range res.Params {
				params.add(p.Name, p.RFC, p.Run, dash(p.Deviation))
			}
			out = append(out, para(what+": the parameters"), params)
		}
	}
	return out
}

// rfcResultsTable is a test's results: per DUT × profile, the run judged,
// its KPIs, its verdict and the first failed criterion with its value.
func rfcResultsTable(t rfcTest) *table {
	tb := newTable("DUT", "Profile", ">Run", "KPIs", "Verdict", "Failed criterion")
	for _, res := range t.Results {
		if res.Verdict == nil {
			tb.add(res.DUT, res.Profile, "-", "-", "not judged", res.Missing)
			continue
		}
		var kpis []string
		for _, k := range res.KPIs {
			kpis = append(kpis, k.Name+": "+k.Value)
		}
		run := strconv.Itoa(res.Seq)
		if !res.Published {
			run += " (none accepted: the last)"
		}
		verdict, failed := "PASS", "-"
		var missed []string
		for _, c := range res.Verdict.Criteria {
			if !c.Pass {
				missed = append(missed, c.Level+" "+c.Name+" "+criterionValue(c))
			}
		}
		if len(missed) > 0 {
			failed = strings.Join(missed, "; ")
		}
		if !res.Verdict.Pass {
			verdict = "FAIL"
		} else if len(missed) > 0 {
			verdict = "PASS, SHOULD not met"
		}
		tb.add(res.DUT, res.Profile, run, strings.Join(kpis, "; "), verdict, failed)
	}
	return tb
}

// criterionValue is a criterion's value against its limit: "1.98% (limit
// < 0.001%)"; "not measured" when it could not be.
func criterionValue(c analysis.Criterion) string {
	if strings.HasPrefix(c.Note, "not measured") {
		return "not measured"
	}
	return fmt.Sprintf("%.4g%% (limit < %g%%)", c.Value, c.Limit)
}

func rfcCriteriaTable(v *analysis.Verdict) *table {
	tb := newTable("Criterion", "Level", "RFC 9411", ">Value", "Result", "How")
	for _, c := range v.Criteria {
		result := "pass"
		switch {
		case !c.Pass && c.Level == analysis.LevelShould:
			result = "deviation (SHOULD)"
		case !c.Pass:
			result = "FAIL"
		}
		tb.add(c.Name, c.Level, c.Rule, criterionValue(c), result, dash(c.Note))
	}
	return tb
}

func rfcLatencyTable(ls []rfcLatency) *table {
	tb := newTable("Object", "Metric", ">Min", ">Mean", ">p50", ">p90", ">p99", ">Max", ">Count", "Measured as")
	for _, l := range ls {
		p := l.Value
		tb.add(l.Object, l.Metric, Micros(float64(p.Min)), Micros(p.Mean), Micros(float64(p.P50)),
			Micros(float64(p.P90)), Micros(float64(p.P99)), Micros(float64(p.Max)), strconv.FormatInt(p.Count, 10), l.Source)
	}
	return tb
}
