package reports

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// FormatGbps formats a bandwidth as the published tables do: "53 Gbps",
// "9.4 Gbps", "0.82 Gbps".
func FormatGbps(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f Gbps", v)
	case v >= 1:
		return fmt.Sprintf("%.1f Gbps", v)
	}
	return fmt.Sprintf("%.2f Gbps", v)
}

// FormatCPS formats a rate as the published tables do: "105k", "2.9k", "640".
func FormatCPS(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fk", v/1000)
	}
	return fmt.Sprintf("%.0f", v)
}

// QualifyTable is the published table of a campaign: per DUT and
// profile, the cipher, the group or key, Throughput and CPS (SR=0), with
// the accepted/total final runs of each cell.
func QualifyTable(s *method.Summary) Document {
	t := newTable("DUT", "CIPHER (OpenSSL)", "ECDHE GROUP / KEY", ">THROUGHPUT", ">RUNS", ">CPS (SR=0)", ">RUNS", "NOTE")
	d := Document{title: s.Name, blocks: []block{t}}
	inconsistent, unstable := false, false
	studyRows := 0
	for _, r := range s.Rows {
		if r.Test != "" {
			continue // suiteTable
		}
		studyRows++
		gbps, cps := optional(r.Gbps, FormatGbps), optional(r.CPS, FormatCPS)
		var note, repeats string
		var inconsistentIn []string // the metrics whose final runs did not agree
		for _, c := range s.Cells {
			if c.DUT != r.DUT || c.Profile != r.Profile {
				continue
			}
			cell := &cps
			if c.Engine == vocab.EngineThroughput {
				cell = &gbps
			}
			if !c.Consistent && c.Failed == "" {
				inconsistentIn = append(inconsistentIn, unitOf(c.Engine))
			}
			if c.Unstable != "" {
				note = joinNote(note, unitOf(c.Engine)+" unstable: "+c.Unstable)
				unstable = true
			}
			if c.Accepted == 0 && c.Total > 0 {
				note = joinNote(note, unitOf(c.Engine)+": "+method.NoAcceptedRun(finalReasons(c.Runs)))
				*cell = NoAccepted
			}
			note = joinNote(note, basisNote(c))
			repeats = joinNote(repeats, repeatNote(c))
			if r.Unsupported != "" && c.Unsupported != "" {
				*cell = notSupported
			}
		}
		if !r.Consistent && len(inconsistentIn) > 0 {
			// A cell with no accepted run has its own note.
			note = joinNote("inconsistent "+strings.Join(inconsistentIn, " and ")+" (see below)", note)
			inconsistent = true
		}
		note = joinNote(note, repeats)
		if r.Unsupported != "" {
			note = joinNote(note, notSupported+": "+r.Unsupported)
		}
		t.add(r.DUT, dash(r.Cipher), dash(r.Group), gbps, runs(r.GbpsRuns), cps, runs(r.CPSRuns), note)
	}
	if suite := suiteTable(s); suite != nil {
		if studyRows == 0 {
			d.blocks = nil
		}
		d.add(suite)
	}
	if inconsistent {
		d.add(pre("\nInconsistent: the final runs of that metric did not reach final.min_accepted accepted runs " +
			"within final.tolerance of the best;\n" +
			"the value shown is the best accepted run, but it is not reproducible yet. " +
			"To do: rerun on a quieter generator and DUT,\n" +
			"with the full method (no --quick: longer runs), or raise final.max_runs or widen final.tolerance in the plan.\n"))
	}
	if unstable {
		d.add(pre("\nUnstable: the final runs fell short of what the exploration measured at the same level " +
			"by more than final.tolerance,\n" +
			"and so did the final runs after one re-exploration around that level (or it found no accepted level): " +
			"the device or\n" +
			"the machine changed between the phases, and a second campaign would not confirm the figure.\n"))
	}
	return d
}

func runs(c method.RunCount) string {
	if c.Total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", c.Accepted, c.Total)
}

// DifferencesTable is the preliminary phase's table of what differs
// between DUTs.
func DifferencesTable(diffs []method.Difference) Document {
	if len(diffs) == 0 {
		return Document{title: "differences"}
	}
	return Document{title: "differences", blocks: []block{differencesTable(diffs, "TEST", "PROFILE", "FIELD")}}
}

// notSupported is the published table's cell of a profile a DUT refuses.
const notSupported = "not supported"

// NoAccepted is the published table's cell of runs none of which was
// accepted: nothing is published (the notes say why).
const NoAccepted = "no accepted run"

// PreliminaryTable is what every DUT negotiated for every test and
// profile of a campaign's preliminary phase, or why it refused.
func PreliminaryTable(ps []method.Prelim) Document {
	t := newTable("PRELIMINARY", "DUT", "TEST", "PROFILE", "NEGOTIATED")
	for _, p := range ps {
		got := notSupported + ": " + p.Unsupported
		if p.Unsupported == "" {
			n := p.Negotiated
			body := fmt.Sprintf("body %d bytes", p.BodySize)
			if p.Objects != "" {
				body = "objects " + p.Objects
			}
			got = fmt.Sprintf("%s %s, %s, %s; %s", n.Version, dash(n.OpenSSL), dash(n.Group), dash(n.CertKey), body)
		}
		test := cmp.Or(p.Test, p.Engine.String())
		t.add("", p.DUT, test, p.Profile, got)
	}
	return Document{title: "preliminary", blocks: []block{t}}
}

// suiteTable is the published table's rows of named tests (an RFC 9411
// suite's): per DUT, test and profile, the value in the test's unit, its
// final runs accepted of those made, and why it has no value; nil when the
// summary has none.
func suiteTable(s *method.Summary) *table {
	t := newTable("DUT", "TEST", "PROFILE", "CIPHER (OpenSSL)", ">VALUE", ">RUNS", "NOTE")
	for _, r := range s.Rows {
		if r.Test == "" {
			continue
		}
		value, note, count := "-", "", "-"
		if r.Value != nil {
			value = suiteValue(*r.Value, r.Unit, r.Bound)
		}
		if r.Runs != nil {
			count = runs(*r.Runs)
		}
		for _, c := range s.Cells {
			if c.DUT == r.DUT && c.Profile == r.Profile && c.Test == r.Test {
				note = joinNote(note, c.Failed)
				if c.Failed == "" && !c.Consistent {
					note = joinNote(note, "inconsistent")
				}
				if c.DeviceNotSaturated {
					note = joinNote(note, "device not saturated")
				}
			}
		}
		t.add(r.DUT, r.Test, r.Profile, dash(r.Cipher), value, count, note)
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// suiteValue writes a suite test's value in its unit; a lower bound (§7.9's
// search stopped at bound, not at the device) as "≥ value (bound)".
func suiteValue(v float64, unit, bound string) string {
	var text string
	switch unit {
	case method.UnitGbps:
		text = FormatGbps(v)
	case method.UnitCPS:
		text = FormatCPS(v) + " CPS"
	case method.UnitMS:
		text = fmt.Sprintf("%.3g ms", v)
	default:
		text = fmt.Sprintf("%.0f %s", v, unit)
	}
	if bound != "" {
		return "≥ " + text + " (" + bound + ")"
	}
	return text
}

// suiteTestText describes a named test of a plan (an RFC 9411 suite's):
// its engine, objects, transactions per connection, pause, ramps, and the
// test whose value it takes a share of.
func suiteTestText(t plan.Test) string {
	text := fmt.Sprintf("Test %s (RFC 9411 §%s): %s, objects %s", t.Name, dash(t.RFC9411), t.Engine, dash(t.Objects))
	if t.RequestsPerConn > 0 {
		text += fmt.Sprintf(", %d transactions per connection", t.RequestsPerConn)
	}
	if t.Pause > 0 {
		text += fmt.Sprintf(", %s between them", time.Duration(t.Pause))
	}
	if t.RampUp > 0 || t.RampDown > 0 {
		text += fmt.Sprintf(", ramps %s up and %s down", time.Duration(t.RampUp), time.Duration(t.RampDown))
	}
	if t.Of != "" {
		text += fmt.Sprintf(", at %s of %s's value", t.Share, t.Of)
	}
	return text + ", profiles " + strings.Join(t.Profiles, ", ")
}
