package reports

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// mark is a caveat that changes how a published value may be read: its
// symbol in the cell, its name (JSON, CSV) and what it means (the legend).
type mark struct{ sym, name, means string }

// marks are the caveats a cell may carry, in the legend's order.
var marks = []mark{
	{"i", "inconsistent", "inconsistent: too few final runs agreed within final.tolerance; not reproducible yet"},
	{"u", "unstable",
		"unstable: the final runs fell short of the exploration at their level, even after a re-exploration"},
	{"r", "reexplored", "re-explored: the first final runs fell short of the exploration; the level was searched again"},
	{"d", "discarded_finals", "discarded finals: the value is below first final runs that the re-exploration discarded"},
	{"g", "generator_bound", "generator-bound: the generator's CPU was saturated; it may have set the pace"},
	{"v", "insecure", "not verified: the certificate chain was not verified (insecure_skip_verify)"},
	{"c", "at_ceiling", "at the ceiling: the search stopped at explore.concurrency.max; the device may do more"},
	{"s", "device_not_saturated", "device not saturated: neither the device nor the generator was saturated; " +
		"the value is not the device's capacity"},
}

// cellFacts is what a published cell says beside its value: the spread of
// its best accepted runs, its marks (names) with a sentence each, and why it
// published nothing, if it did not.
type cellFacts struct {
	Spread *float64 `json:"spread,omitempty"`
	Marks  []string `json:"marks,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	Why    string   `json:"why,omitempty"`
}

// add marks f with the mark named name and its sentence.
func (f *cellFacts) add(name, note string, args ...any) {
	for _, m := range marks {
		if m.name == name {
			f.Marks = append(f.Marks, name)
			f.Notes = append(f.Notes, "["+m.sym+"] "+fmt.Sprintf(note, args...))
		}
	}
}

// symbols are f's marks' symbols: "i,r".
func (f cellFacts) symbols() string {
	var s []string
	for _, m := range marks {
		if slices.Contains(f.Marks, m.name) {
			s = append(s, m.sym)
		}
	}
	return strings.Join(s, ",")
}

// runMarks marks a published run generator-bound or not verified.
func (f *cellFacts) runMarks(run *metrics.Run, insecure bool) {
	if run != nil && run.Client.GeneratorBound {
		f.add("generator_bound", "generator-bound: its CPU was %.0f%% of %d cores",
			run.Client.Utilization*100, run.Client.Cores)
	}
	if insecure || run != nil && run.Target.InsecureSkipVerify {
		f.add("insecure", "not verified: chain verification was skipped (insecure_skip_verify)")
	}
}

// factsOf is what a campaign cell's value needs beside it; run is its
// published run (nil: unknown), insecure whether its plan skips verification.
func factsOf(c *method.Cell, run *metrics.Run, insecure bool) cellFacts {
	f := cellFacts{Why: whyEmpty(c)}
	if c.Accepted == 0 {
		return f
	}
	format := formatOf(c.Engine)
	if c.Accepted > 1 {
		f.Spread = &c.Spread
	}
	if !c.Consistent && c.Unstable == "" {
		f.add("inconsistent", "inconsistent: too few of the %d accepted final runs (of %d) "+
			"within final.tolerance of the best", c.Accepted, c.Total)
	}
	if c.Unstable != "" {
		f.add("unstable", "unstable: %s", c.Unstable)
	}
	if r := c.Reexplored; r != nil {
		value, explored := distinct(r.Value, r.Explored, format, unitOf(c.Engine))
		if r.Finals == nil {
			f.add("reexplored", "re-explored: first finals %s at c=%d against the exploration's %s; "+
				"no better level found, kept", value, r.Level, explored)
		} else {
			f.add("reexplored", "re-explored: first finals %s at c=%d against the exploration's %s; "+
				"new finals at c=%d", value, r.Level, explored, c.Level)
		}
		if r.Finals != nil && c.Value < r.Value {
			f.add("discarded_finals", "discarded finals: %s published, below the discarded first finals' %s",
				format(c.Value), format(r.Value))
		}
	}
	f.runMarks(run, insecure)
	if c.AtCeiling {
		f.add("at_ceiling", "at the ceiling: the search stopped at explore.concurrency.max (c=%d)", c.Level)
	}
	if c.DeviceNotSaturated {
		f.add("device_not_saturated", "device not saturated: neither it nor the generator was saturated at c=%d", c.Level)
	}
	return f
}

// whyEmpty says why a cell published nothing ("" when it did): its final
// runs' rejections, or its probes' when the exploration accepted none.
func whyEmpty(c *method.Cell) string {
	switch {
	case c.Accepted > 0:
		return ""
	case c.Unsupported != "":
		return notSupported + ": " + c.Unsupported
	case c.Total > 0:
		return method.NoAcceptedRun(finalReasons(c.Runs))
	}
	var rs [][]string
	for _, p := range c.Exploration {
		rs = append(rs, p.Reasons)
	}
	if why := method.NoAcceptedRun(rs); why != NoAccepted && c.Failed != "" {
		return c.Failed + ": " + strings.TrimPrefix(why, NoAccepted+": ")
	}
	return c.Failed
}

// formatOf formats an engine's values with their unit: "12.6 Gbps", "1.71k CPS".
func formatOf(e vocab.Engine) func(float64) string {
	if e == vocab.EngineThroughput {
		return FormatGbps
	}
	return func(v float64) string { return FormatCPS(v) + " CPS" }
}

// sig3 writes v to three significant digits: 12.6, 361, 0.820.
func sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', max(2-int(math.Floor(math.Log10(math.Abs(v)))), 0), 64)
}

// marked is a published value with the spread of its best runs and its
// marks' symbols: "12.6 Gbps ±1.2% [i,r]".
func marked(v float64, format func(float64) string, f cellFacts) string {
	s := format(v)
	if f.Spread != nil {
		s += fmt.Sprintf(" ±%.1f%%", *f.Spread*100)
	}
	if syms := f.symbols(); syms != "" {
		s += " [" + syms + "]"
	}
	return s
}

// legend explains the marks used (names), the spread and, with runs, the
// RUNS column; one line each.
func legend(used map[string]bool, runs bool) []string {
	var out []string
	if used["±"] {
		out = append(out, "±x%: the spread of the best accepted runs (up to 3): (best − the lowest of them) ÷ best.")
	}
	if runs {
		out = append(out, "RUNS a/t: a of the t final runs made were accepted; the value is the best accepted.")
	}
	for _, m := range marks {
		if used[m.name] {
			out = append(out, "["+m.sym+"] "+m.means+".")
		}
	}
	if used["inconsistent"] {
		out = append(out, "[i] To do: rerun on a quieter generator and DUT with longer final runs (method.duration), "+
			"or raise final.max_runs or widen final.tolerance in the plan.")
	}
	return out
}

// cellText is a table's cell: the marked value, or in a word why there is
// none (its note says more).
func cellText(v *float64, format func(float64) string, f cellFacts) string {
	switch {
	case v != nil:
		return marked(*v, format, f)
	case strings.HasPrefix(f.Why, notSupported):
		return notSupported
	case f.Why != "":
		return NoAccepted
	}
	return "-"
}

// cellNotes are the notes under a table of the cell who names, a sentence
// per mark; used gets its marks, and "±" when it shows a spread.
func cellNotes(who string, f cellFacts, used map[string]bool) []string {
	var out []string
	used["±"] = used["±"] || f.Spread != nil
	for i, n := range f.Notes {
		out = append(out, who+": "+n)
		used[f.Marks[i]] = true
	}
	return out
}

// verdictOf is the RFC 9411 verdict of a named test's judged run for a DUT
// (possibly "name [source]") and profile: PASS, PASS (SHOULD not met) or
// FAIL; "-" when it was not judged.
func verdictOf(tests []rfcTest, test, dut, profile string) string {
	for _, t := range tests {
		for _, res := range t.Results {
			if v := res.Verdict; v != nil && t.Name == test && res.Profile == profile &&
				(res.DUT == dut || strings.HasPrefix(dut, res.DUT+" [")) {
				switch {
				case !v.Pass:
					return "FAIL"
				case slices.ContainsFunc(v.Criteria, func(c analysis.Criterion) bool { return !c.Pass }):
					return "PASS (SHOULD not met)"
				}
				return "PASS"
			}
		}
	}
	return "-"
}
