package reports

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// ReportJSON writes the report as indented JSON (the Report type).
func ReportJSON(w io.Writer, r *Report) error { return writeJSON(w, r) }

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReportCSV writes the published table as CSV, one line per DUT and
// profile, with unformatted values (empty when there is none).
func ReportCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"dut", "profile", "cipher", "group", "gbps", "cps", "gbps_ratio", "cps_ratio",
		"gbps_runs_accepted", "gbps_runs_total", "cps_runs_accepted", "cps_runs_total", "consistent", "note",
		"gbps_spread", "cps_spread", "gbps_marks", "cps_marks", "gbps_why", "cps_why", "certificates", "sr", "footnote",
		"protocol"})
	verified := map[string]string{}
	for _, b := range r.Bed {
		verified[b.DUT] = verifiedText(b)
	}
	for _, row := range r.Table {
		for _, res := range row.Results {
			if res.Gbps == nil && res.CPS == nil && res.GbpsRuns.Total == 0 && res.CPSRuns.Total == 0 && res.Note == "" &&
				res.GbpsCell.Why == "" && res.CPSCell.Why == "" {
				continue // the DUT has no test of this profile
			}
			note := res.Note
			for _, n := range append(slices.Clone(res.GbpsCell.Notes), res.CPSCell.Notes...) {
				note = joinNote(note, n)
			}
			cw.Write([]string{
				res.DUT, row.Profile, row.Cipher, row.Group,
				csvFloat(res.Gbps), csvFloat(res.CPS), csvFloat(res.GbpsRatio), csvFloat(res.CPSRatio),
				strconv.Itoa(res.GbpsRuns.Accepted), strconv.Itoa(res.GbpsRuns.Total),
				strconv.Itoa(res.CPSRuns.Accepted), strconv.Itoa(res.CPSRuns.Total),
				strconv.FormatBool(res.Consistent), note,
				csvFloat(res.GbpsCell.Spread), csvFloat(res.CPSCell.Spread), strings.Join(res.GbpsCell.Marks, " "),
				strings.Join(res.CPSCell.Marks, " "), res.GbpsCell.Why, res.CPSCell.Why, verified[res.DUT],
				map[bool]string{true: "0"}[res.CPSRuns.Total > 0], res.CPSFootnote, row.Protocol,
			})
		}
	}
	for _, x := range r.Reuse {
		if x.Ratio == 0 {
			continue // the table's line above
		}
		line := make([]string, 24) // the columns above
		v, runs := 5, 10           // cps, cps_runs_accepted; +10, +12, +14: cps_spread, cps_marks, cps_why
		if x.Engine == vocab.EngineThroughput {
			v, runs = 4, 8
		}
		line[0], line[1], line[v], line[13], line[20] = x.DUT, x.Profile, csvFloat(x.Value), x.Note, verified[x.DUT]
		if i := slices.IndexFunc(r.Table, func(row tableRow) bool { return row.Profile == x.Profile }); i >= 0 {
			line[2], line[3] = r.Table[i].Cipher, r.Table[i].Group
		}
		for _, n := range x.Cell.Notes {
			line[13] = joinNote(line[13], n)
		}
		line[runs], line[runs+1] = strconv.Itoa(x.Runs.Accepted), strconv.Itoa(x.Runs.Total)
		line[v+10], line[v+12], line[v+14] = csvFloat(x.Cell.Spread), strings.Join(x.Cell.Marks, " "), x.Cell.Why
		line[21], line[22], line[23] = strconv.FormatFloat(x.Ratio, 'g', -1, 64), x.Footnote, x.Protocol
		cw.Write(line)
	}
	cw.Flush()
	return cw.Error()
}

// csvFloat formats a value to ten significant digits, "" when there is
// none.
func csvFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', 10, 64)
}

// ReportDoc lays the report out: its first page (the title and the runs'
// dates, the published tables, the verdict and the signature block), what
// was tested, how, by which tool and where the raw data is, the charts, the
// configurations the plans give, then the methodology appendix.
func ReportDoc(r *Report) Document {
	d := Document{title: "tlsbench report: " + r.Title, running: r.Title}
	d.add(heading{1, d.title}, coverDates(r))
	d.add(heading{2, "Published table"})
	d.add(publishedTable(r)...)
	d.add(reuseBlocks(r)...)
	for _, proto := range protocols(r.Suite, func(s suiteResult) string { return s.Protocol }) {
		t := newTable("DUT", "Test", "Profile", "Cipher (OpenSSL)", ">Value", ">Runs", "Verdict", "Note")
		for _, s := range r.Suite {
			if s.Protocol == proto {
				t.add(s.DUT, s.Test, s.Profile, dash(s.Cipher), optional(s.Value, func(v float64) string {
					return suiteValue(v, s.Unit, s.Bound)
				}), runs(s.Runs), s.Verdict, s.Note)
			}
		}
		d.add(heading{3, "RFC 9411 tests over " + vocab.ProtocolTitle(proto)}, t)
	}
	explain := "Throughput: payload Gbps of the throughput test; " +
		"CPS (SR=0): connections per second, each a full TLS handshake (session reuse off)."
	if len(r.Reuse) > 0 {
		explain += " SSL TPS with session reuse: the CPS of a test whose connections resumed sessions on the share SR " +
			"of each worker's connections (SR=0 beside it)."
	}
	if p := publishes(r); p != "" {
		explain += " " + p
	}
	if len(r.Records) > 0 {
		explain += " Run records: their best accepted record (none when none is accepted)."
	}
	if len(r.DUTs) > 1 {
		explain += fmt.Sprintf(" (n.nn×): the DUT's value ÷ %s's.", r.DUTs[0])
	}
	d.add(para(explain))
	d.add(coverBlocks(r)...)
	d.add(aboutBlocks(r)...)
	if charts := barCharts(r); len(charts) > 0 {
		d.add(heading{2, "Published values, charted"})
		d.add(charts...)
	}
	d.add(configBlocks(r)...)
	d.add(rfc9411Blocks(r)...)
	d.add(heading{2, "Methodology appendix"})
	for _, c := range r.Campaigns {
		d.add(campaignBlocks(c)...)
	}
	d.add(deviceBlocks(r)...)
	d.add(backendsBlocks(r)...)
	d.add(heading{3, "Environment"})
	env := newTable("Tool", "Go", "Host", "CPU", ">Cores", "OS/arch", ">Runs", "From", "To")
	for _, e := range r.Environment {
		env.add(e.Tool+" "+e.Version, e.GoVersion, e.Hostname, dash(e.CPUModel), strconv.Itoa(e.CPUs), e.OS+"/"+e.Arch,
			strconv.Itoa(e.Runs), stamp(e.First), stamp(e.Last))
	}
	d.add(env)
	if hasNoise(r) {
		d.add(para("Machine noise (per run): shares of the generator machine's CPU over the run's steady window " +
			"— stolen by the hypervisor (steal), used by processes that are neither tlsbench nor the DUT's (other), " +
			"used by the DUT's own processes on this machine (DUT; - when none was listed)."))
	}
	for i := range r.Appendix {
		d.add(sectionBlocks(&r.Appendix[i])...)
	}
	return d
}

// publishedTable is the study's table, one per protocol and test
// (Throughput, then CPS), its heading naming both: a line per profile — its
// cipher and group or key — and a column per DUT, each value beside its
// ratio to the first DUT's; then the notes. Its width grows with the DUTs
// by one column each, so that 2–4 DUTs fit a page.
func publishedTable(r *Report) []block {
	var out []block
	protos := protocols(r.Table, func(row tableRow) string { return row.Protocol })
	for _, m := range publishedTests {
		for _, proto := range protos {
			out = append(out, publishedTest(r, m.engine, m.title, m.format, proto)...)
		}
	}
	var notes []string
	used := map[string]bool{}
	for _, row := range r.Table {
		for _, res := range row.Results {
			who := row.Profile
			if len(protos) > 1 {
				who += " over " + vocab.ProtocolTitle(row.Protocol)
			}
			if len(row.Results) > 1 {
				who += ", " + res.DUT
			}
			for _, m := range publishedTests {
				_, _, _, _, f := res.test(m.engine)
				notes = append(notes, cellNotes(who+", "+unitOf(m.engine), *f, used)...)
			}
			if res.Note != "" {
				notes = append(notes, who+": "+res.Note)
			}
		}
	}
	if len(notes) > 0 {
		out = append(out, para("Notes:"), list(notes))
	}
	if l := legend(used, false); len(l) > 0 {
		out = append(out, para("Legend:"), list(l))
	}
	return out
}

// protocols are the protocols of xs (proto(x)), in their order.
func protocols[T any](xs []T, proto func(T) string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, proto(x)) {
			out = append(out, proto(x))
		}
	}
	return out
}

// publishedTest is the published table of one test (engine e) over one
// protocol: its heading and table, nothing when no row has the test.
func publishedTest(r *Report, e vocab.Engine, title string, format func(float64) string, proto string) []block {
	cols := []string{"Profile", "Cipher (OpenSSL)", "ECDHE group / key"}
	for _, dut := range r.DUTs {
		cols = append(cols, ">"+dut)
	}
	t := newTable(cols...)
	for _, row := range r.Table {
		if row.Protocol != proto {
			continue
		}
		cells := []string{row.Profile, dash(row.Cipher), dash(row.Group)}
		tested := false
		for i, res := range row.Results {
			v, ratio, runs, unsupported, f := res.test(e)
			tested = tested || *v != nil || *unsupported != "" || runs.Total > 0 || f.Why != ""
			cell := cellText(*v, format, *f)
			if i > 0 && *ratio != nil {
				cell += " (" + formatRatio(**ratio) + ")"
			}
			cells = append(cells, cell)
		}
		if tested {
			t.add(cells...)
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return []block{heading{3, title + " over " + vocab.ProtocolTitle(proto)}, t}
}

// aboutBlocks are the report's first page: what was tested, how, by which
// tool, and where the raw data is.
func aboutBlocks(r *Report) []block {
	out := []block{heading{2, "About this report"}, heading{3, "What was tested"}}
	out = append(out, bedBlocks(r)...)
	out = append(out, para("Tests:"), list(testedList(r)))
	if generators := generatorTexts(r); len(generators) > 0 {
		out = append(out, para("Load generator: "+strings.Join(generators, "; ")+"."))
	}
	out = append(out, heading{3, "How"}, list(howList(r)))
	out = append(out, heading{3, "Tool"}, list(toolList(r)))
	out = append(out, heading{3, "Raw data"}, list(rawDataList(r)))
	return out
}

// generatorTexts describes each campaign's load generator, when it was described.
func generatorTexts(r *Report) []string {
	var generators []string
	for _, c := range r.Campaigns {
		g := c.Generator
		if g.Empty() {
			continue
		}
		parts := slices.DeleteFunc([]string{g.Model, g.Version, g.Topology}, func(p string) bool { return p == "" })
		text := strings.Join(parts, "; ")
		if g.Config != "" {
			text += " (configuration below)"
		}
		generators = append(generators, text)
	}
	return generators
}

// testedList names the tests: each campaign's, then the run records' by engine.
func testedList(r *Report) []string {
	var tests []string
	for _, c := range r.Campaigns {
		for _, t := range c.Tests {
			if t.Name != "" {
				tests = append(tests, fmt.Sprintf("%s (%s): %s, objects %s, with the profiles %s",
					t.Name, c.Name, testName(t.Engine), t.Objects, strings.Join(t.Profiles, ", ")))
				continue
			}
			name := testName(t.Engine) + vocab.OverProtocol(t.Protocol())
			if t.Resume > 0 {
				name = fmt.Sprintf("%s%s at SR=%g %s (SSL TPS with session reuse)", t.Engine, vocab.OverProtocol(t.Protocol()),
					t.Resume, t.Resumption)
				if t.EarlyData {
					name += " with 0-RTT early data"
				}
			}
			tests = append(tests, fmt.Sprintf("%s (%s): GET %s with the profiles %s",
				strings.ReplaceAll(name, "  ", " "), c.Name, dash(t.Path), strings.Join(t.Profiles, ", ")))
		}
	}
	if len(r.Records) == 0 {
		return tests
	}
	n := map[string]int{}
	var names []string
	for _, s := range r.Appendix {
		if s.Source == recordsSource {
			name := testName(s.Engine) + vocab.OverProtocol(s.Protocol)
			if s.SR != "" {
				name = "CPS at " + s.SR + " (SSL TPS with session reuse)"
			}
			if n[name] == 0 {
				names = append(names, name)
			}
			n[name] += len(s.Runs)
		}
	}
	for _, name := range names {
		tests = append(tests, fmt.Sprintf("%s: %d run records", name, n[name]))
	}
	return tests
}

// howList says how the values were obtained: each campaign's method, and the
// rule that chose among run records.
func howList(r *Report) []string {
	var how []string
	for _, c := range r.Campaigns {
		m := c.Method
		if m == nil {
			how = append(how, fmt.Sprintf("Campaign %s: the qualification method (its plan is not in the directory).",
				c.Name))
			continue
		}
		how = append(how, fmt.Sprintf("Campaign %s, the qualification method: runs of %s measured after a %s warm-up; "+
			"an exploratory search of the load level from %d to %d concurrent connections; "+
			"final runs at the chosen level until %d accepted runs lie within %s of the best (at most %d), "+
			"the best of them published. A run is accepted when it is %s.",
			c.Name, time.Duration(m.Duration), time.Duration(m.Warmup),
			m.Explore.Concurrency.Min, m.Explore.Concurrency.Max,
			m.Final.MinAccepted, m.Final.Tolerance, m.Final.MaxRuns, ruleText(m.Accept)))
	}
	if len(r.Records) > 0 {
		how = append(how, "Run records: each value published is the best record of its DUT, test and profile "+
			"that the method's default rule accepts ("+ruleText(plan.DefaultMethod().Accept)+").")
	}
	return append(how, "The Methodology appendix shows every phase and every run.")
}

// toolList describes the tool and the machine of each environment the runs came from.
func toolList(r *Report) []string {
	var tools []string
	for _, e := range r.Environment {
		tools = append(tools, fmt.Sprintf("%s %s (%s) on %s: %d cores, %s, %s/%s; %d runs from %s to %s",
			e.Tool, e.Version, e.GoVersion, dash(e.Hostname), e.CPUs, dash(e.CPUModel), e.OS, e.Arch,
			e.Runs, stamp(e.First), stamp(e.Last)))
	}
	if len(tools) == 0 {
		tools = append(tools, "no run record: nothing to say of the tool")
	}
	return tools
}

// rawDataList says where the raw data is: the campaigns' files, the run records.
func rawDataList(r *Report) []string {
	var raw []string
	for _, c := range r.Campaigns {
		raw = append(raw, fmt.Sprintf("Campaign %s: directory %s; its plan %s, its ledger %s "+
			"(%d run records, one JSON line each, with every phase's verdict), its summary %s",
			c.Name, c.Dir, filepath.Join(c.Dir, "plan.yaml"), filepath.Join(c.Dir, method.LedgerFile),
			c.Records, filepath.Join(c.Dir, method.SummaryFile)))
	}
	if len(r.Records) > 0 {
		raw = append(raw, "Run records: "+strings.Join(r.Records, ", "))
	}
	return raw
}

// testName names a test for the reader.
func testName(e vocab.Engine) string {
	if e == vocab.EngineThroughput {
		return "Throughput"
	}
	return "CPS (SR=0)"
}

// configBlocks show the configurations the campaigns' plans give of their
// DUTs and generator, at most configLines lines each.
func configBlocks(r *Report) []block {
	var out []block
	add := func(who string, d *plan.Description) {
		if d == nil || d.Config == "" {
			return
		}
		if len(out) == 0 {
			out = append(out, heading{2, "Configurations"})
		}
		title := who
		if d.ConfigFile != "" {
			title += ": " + d.ConfigFile
		}
		lines := strings.SplitAfter(strings.TrimRight(d.Config, "\n"), "\n")
		text := strings.Join(lines[:min(len(lines), configLines)], "")
		if len(lines) > configLines {
			text += fmt.Sprintf("\n… %d more lines in the campaign's plan.yaml\n", len(lines)-configLines)
		}
		out = append(out, heading{3, title}, pre(strings.TrimRight(text, "\n")+"\n"))
	}
	for _, c := range r.Campaigns {
		for _, d := range c.DUTs {
			add(d.Name, d.Describe)
		}
		add("Load generator", c.Generator)
	}
	return out
}

// configLines is how many lines of a configuration the report shows.
const configLines = 80

// hasNoise reports whether a run of the report has its machine noise.
func hasNoise(r *Report) bool {
	return slices.ContainsFunc(r.Appendix, func(s section) bool { return slices.ContainsFunc(s.Runs, runHasNoise) })
}

func runHasNoise(r runResult) bool { return r.Noise != nil }

// noiseCell is a run's machine noise, compactly: steal / other / DUT.
func noiseCell(n *metrics.Noise) string {
	if n == nil {
		return "-"
	}
	dut := "-"
	if n.DUTCores != nil && n.CPUs > 0 {
		dut = percent(*n.DUTCores / float64(n.CPUs))
	}
	return percent(n.StealShare) + " / " + percent(n.OtherShare) + " / " + dut
}

// barCharts are the published values as bars: one chart per metric,
// profiles down, DUTs side by side.
func barCharts(r *Report) []block {
	var out []block
	protos := protocols(r.Table, func(row tableRow) string { return row.Protocol })
	var over []string // HTTP/1.1, HTTP/2
	for _, p := range protos {
		over = append(over, vocab.ProtocolTitle(p))
	}
	for _, m := range publishedTests {
		get := func(x result) *float64 {
			v, _, _, _, _ := x.test(m.engine)
			return *v
		}
		vals := make([][]float64, len(r.DUTs))
		var cats []string
		for _, row := range r.Table {
			if !slices.ContainsFunc(row.Results, func(x result) bool { return get(x) != nil }) {
				continue
			}
			if len(protos) > 1 {
				row.Profile += " (" + vocab.ProtocolTitle(row.Protocol) + ")"
			}
			cats = append(cats, row.Profile)
			for d, res := range row.Results {
				v := 0.0
				if p := get(res); p != nil {
					v = *p
				}
				vals[d] = append(vals[d], v)
			}
		}
		if len(cats) > 0 {
			out = append(out, barChart(m.engine.String(), m.chart+" over "+strings.Join(over, " and "), m.unit, cats,
				r.DUTs, vals, m.format))
		}
	}
	return out
}

// campaignBlocks describe a campaign's plan and what differed between its
// DUTs.
func campaignBlocks(c campaignInfo) []block {
	out := []block{heading{3, "Method: " + c.Name}}
	items := []string{"Campaign directory: " + c.Dir}
	for _, t := range c.Tests {
		if t.Name != "" {
			items = append(items, suiteTestText(t))
			continue
		}
		items = append(items, fmt.Sprintf("Test %s%s: GET %s, profiles %s",
			t.Engine, vocab.OverProtocol(t.Protocol()), dash(t.Path), strings.Join(t.Profiles, ", ")))
	}
	if m := c.Method; m != nil {
		items = append(items,
			fmt.Sprintf("Runs: %s measured after a %s warm-up, %s cooldown between runs",
				time.Duration(m.Duration), time.Duration(m.Warmup), time.Duration(m.Cooldown)),
			"Preliminary: one connection per DUT, test and profile: what is negotiated and the body size served",
			fmt.Sprintf("Exploratory: %s probes at %d, %d, %d … up to %d concurrent connections "+
				"until two levels in a row gain less than %s "+
				"over the best or a probe is rejected (a level whose value lies below both neighbours, or above both by "+
				"more than that, is probed again, at most twice), then the geometric midpoints around the best; "+
				"the best accepted level is frozen",
				time.Duration(m.Explore.ProbeDuration),
				m.Explore.Concurrency.Min, 2*m.Explore.Concurrency.Min, 4*m.Explore.Concurrency.Min,
				m.Explore.Concurrency.Max, m.Explore.MinGain),
			"Acceptance of every run: "+ruleText(m.Accept),
			fmt.Sprintf("Final: runs at the frozen level until %d accepted runs lie within %s of the best accepted one, "+
				"at most %d runs; the best of them is published",
				m.Final.MinAccepted, m.Final.Tolerance, m.Final.MaxRuns))
	}
	out = append(out, list(items))
	if len(c.Differences) > 0 {
		out = append(out, para("The DUTs differed in the preliminary phase (the campaign went on with --allow-differences):"))
		out = append(out, differencesTable(c.Differences, "Test", "Profile", "Field"))
	}
	return out
}

// differencesTable is the table of what differed between DUTs: a line per
// difference, a column per DUT after the columns named by cols.
func differencesTable(diffs []method.Difference, cols ...string) *table {
	set := map[string]bool{}
	for _, d := range diffs {
		for k := range d.Values {
			set[k] = true
		}
	}
	duts := slices.Sorted(maps.Keys(set))
	t := newTable(append(cols, duts...)...)
	for _, d := range diffs {
		cells := []string{d.Engine.String(), d.Profile, d.Field}
		for _, k := range duts {
			cells = append(cells, dash(d.Values[k]))
		}
		t.add(cells...)
	}
	return t
}

// sectionBlocks lay out one DUT × test × profile of the appendix.
func sectionBlocks(s *section) []block {
	out := []block{heading{3, fmt.Sprintf("%s · %s · %s", s.DUT, s.name(), s.Profile)}}
	out = append(out, para("Source: "+s.Source+". Runs accepted when "+s.Rule+"."))
	if p := s.Preliminary; p != nil {
		out = append(out, para(fmt.Sprintf("Preliminary: %s; body %d B; %s; %s.",
			negotiated(p.Negotiated), p.BodySize, resumption(p), verdict(p.Accepted, p.Reasons))))
	} else if s.Chosen != nil {
		out = append(out, para("Negotiated: "+negotiated(s.Chosen.Negotiated)+"."))
	}
	if len(s.Exploration) > 0 {
		out = append(out, para(fmt.Sprintf("Exploratory phase (p99 of the %s latency):", s.P99Phase)))
		t := newTable(">Level", ">"+s.Unit, ">p99", ">Errors", ">Generator CPU", "Verdict")
		for _, pr := range s.Exploration {
			t.add(strconv.Itoa(pr.Level), value(s.Unit, pr.Value), Micros(float64(pr.P99US)), strconv.FormatInt(pr.Errors, 10),
				percent(pr.GeneratorCPU), verdict(pr.Accepted, pr.Reasons))
		}
		out = append(out, t)
		if s.Search != nil {
			out = append(out, para(searchText(s)))
		}
		out = append(out, exploreChart(slug(s.DUT, s.name(), s.Profile, "explore"), s))
		if s.Level > 0 {
			out = append(out, para(fmt.Sprintf("Level chosen and frozen: %d concurrent connections.", s.Level)))
		}
	}
	if len(s.Runs) > 0 {
		var cols []string
		if s.Source == recordsSource {
			out = append(out, para("Run records:"))
			cols = []string{">Record", "File", ">" + s.Unit, ">Errors", "Verdict", "Published"}
		} else {
			out = append(out, para(fmt.Sprintf("Final runs at %d concurrent connections:", s.Level)))
			cols = []string{">Run", ">" + s.Unit, ">Errors", "Verdict", "Published"}
		}
		noise := slices.ContainsFunc(s.Runs, runHasNoise)
		if noise {
			cols = append(cols, ">Noise: steal / other / DUT")
		}
		t := newTable(cols...)
		for _, r := range s.Runs {
			cells := []string{strconv.Itoa(r.Seq)}
			if s.Source == recordsSource {
				cells = append(cells, r.File)
			}
			published := ""
			if r.Chosen {
				published = "yes"
			}
			cells = append(cells,
				value(s.Unit, r.Value),
				strconv.FormatInt(r.Errors, 10),
				verdict(r.Accepted, r.Reasons),
				published)
			if noise {
				cells = append(cells, noiseCell(r.Noise))
			}
			t.add(cells...)
		}
		out = append(out, t)
	}
	out = append(out, tcpBlocks(s)...)
	out = append(out, para(outcome(s)))
	if ch := s.Chosen; ch != nil {
		out = append(out, chosenBlocks(s, ch)...)
	}
	return out
}

// searchText says how a section's exploration went: the levels in the
// order probed, those probed again, and why the steps stopped.
func searchText(s *section) string {
	order := make([]string, len(s.Search.Order))
	for i, l := range s.Search.Order {
		order[i] = strconv.Itoa(l)
	}
	text := "Search: levels probed in the order " + strings.Join(order, ", ")
	for _, p := range s.Search.Replaced {
		text += fmt.Sprintf("; %d probed again (its first probe, %s %s, disagreed with both neighbours)",
			p.Level, value(s.Unit, p.Value), s.Unit)
	}
	return text + "; the steps stopped: " + s.Search.Stop + "."
}

// outcome says what the section published, and how sure it is.
func outcome(s *section) string {
	if s.Value == nil {
		return "Nothing published: " + dash(s.Failed) + "."
	}
	best := make([]string, len(s.Best3))
	for i, v := range s.Best3 {
		best[i] = value(s.Unit, v)
	}
	text := "published: " + value(s.Unit, *s.Value) + " " + s.Unit + "."
	switch len(best) {
	case 0, 1: // a single accepted run: no spread
		text = "Best of 1 accepted run; " + text
	case 2:
		text = fmt.Sprintf("Best of 2 accepted runs: %s; spread %s ((best − second best) ÷ best); %s",
			strings.Join(best, ", "), percent(s.Spread), text)
	default:
		text = fmt.Sprintf("Best three: %s; spread %s ((best − third best) ÷ best); %s",
			strings.Join(best, ", "), percent(s.Spread), text)
	}
	if !s.Consistent {
		text += " Inconsistent: fewer than the required accepted runs agreed within the tolerance."
	}
	return text
}

// publishes says what a campaign publishes, with each campaign's
// final.min_accepted N: "the best of N accepted runs".
func publishes(r *Report) string {
	var each []string
	ns := map[int]bool{}
	for _, c := range r.Campaigns {
		if c.Method == nil {
			each = append(each, c.Name+": its plan is not in the directory")
			ns[0] = true
			continue
		}
		n := c.Method.Final.MinAccepted
		each = append(each, fmt.Sprintf("%s: %d", c.Name, n))
		ns[n] = true
	}
	const tail = " of its final phase once that many agree within the tolerance " +
		"(final.min_accepted; inconsistent: fewer agreed)."
	switch {
	case len(each) == 0:
		return ""
	case len(ns) == 1 && !ns[0]: // every plan is known and has the same N
		return "A campaign publishes the best of " + acceptedRuns(r.Campaigns[0].Method.Final.MinAccepted) + tail
	}
	return "A campaign publishes the best of N accepted runs" + strings.TrimSuffix(tail, ".") + ", N per campaign (" +
		strings.Join(each, ", ") + ")."
}

// chosenBlocks describe the published run: conditions, latency, charts.
func chosenBlocks(s *section, ch *chosen) []block {
	load := fmt.Sprintf("%s loop, %d connections", ch.Load.Mode, ch.Load.Concurrency)
	if ch.Load.Mode == "open" {
		load += fmt.Sprintf(", %s/s offered (%d late, %d dropped)", strconv.FormatFloat(ch.Load.Rate, 'f', -1, 64),
			ch.Load.Late, ch.Load.Dropped)
		if ch.Load.LatencyLowerBound {
			load += fmt.Sprintf("; %.1f%% of the starts were dropped, so every latency is a lower bound (≥)",
				ch.Load.DroppedShare*100)
		}
	}
	bound := ""
	if ch.Load.LatencyLowerBound {
		bound = "≥"
	}
	cpu := fmt.Sprintf("generator CPU %s of %d cores", percent(ch.Client.Utilization), ch.Client.Cores)
	if ch.Client.IncludesTarget {
		cpu += " (includes the in-process target)"
	}
	out := []block{para(fmt.Sprintf("Published run %d: %s to %s, target %s; %s; "+
		"%d transactions and %d errors in the %.2f s steady window (after %.2f s of warm-up); %s.",
		ch.Seq, stamp(ch.Started), stamp(ch.Ended), ch.Target, load,
		ch.Transactions, ch.Errors, ch.DurationS, ch.SteadyStartS, cpu))}
	t := newTable("Latency", ">Count", ">p50", ">p90", ">p99", ">p99.9", ">Max")
	for _, phase := range latencyPhases {
		l, ok := ch.Latency[phase.String()]
		if phase == vocab.PhaseConnect && ch.Transport == "quic" {
			t.add(phase.String(), "n/a", "n/a", "n/a", "n/a", "n/a", "n/a") // QUIC: no TCP connect
			continue
		}
		if !ok || l.Count == 0 {
			continue
		}
		cells := []string{phase.String(), strconv.FormatInt(l.Count, 10)}
		for _, v := range []int64{l.P50, l.P90, l.P99, l.P999, l.Max} {
			cells = append(cells, bound+Micros(float64(v)))
		}
		t.add(cells...)
	}
	if len(t.rows) > 0 {
		out = append(out, t)
	}
	if len(ch.Series) > 0 {
		out = append(out, seriesChart(slug(s.DUT, s.name(), s.Profile, "series"),
			fmt.Sprintf("%s %s %s: run %d, per second", s.DUT, s.name(), s.Profile, ch.Seq), s.Unit, ch))
	}
	var curves []curve
	for i, ph := range curvePhases {
		phase := ph.String()
		if q := ch.Curves[phase]; len(q) > 0 {
			curves = append(curves, curve{name: phase, q: q, color: i})
		}
	}
	if len(curves) > 0 {
		out = append(out, latencyChart(slug(s.DUT, s.name(), s.Profile, "latency"),
			fmt.Sprintf("%s %s %s: run %d, latency by percentile", s.DUT, s.name(), s.Profile, ch.Seq), curves))
	}
	return out
}
