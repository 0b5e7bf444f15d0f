package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// FormatGbps formats a bandwidth as the published tables do, to three
// significant digits: "53.2 Gbps", "9.41 Gbps", "0.820 Gbps".
func FormatGbps(v float64) string { return sig3(v) + " Gbps" }

// FormatCPS formats a rate as the published tables do, to three
// significant digits: "105k", "2.94k", "640".
func FormatCPS(v float64) string {
	if v >= 1000 {
		return sig3(v/1000) + "k"
	}
	return sig3(v)
}

// QualifyTable is the published table of a campaign: per DUT and
// profile, the cipher, the group or key, Throughput and CPS (SR=0), each
// with its spread and marks, and the accepted/total final runs of each
// cell; then a note per mark or empty cell, and the legend.
func QualifyTable(c *Campaign) Document {
	s := c.Summary
	t := newTable("DUT", "PROFILE", "PROTOCOL", "CIPHER (OpenSSL)", "ECDHE GROUP / KEY", ">THROUGHPUT", ">RUNS",
		">CPS (SR=0)", ">RUNS")
	d := Document{title: s.Name, blocks: []block{t}}
	var notes []string
	used := map[string]bool{}
	studyRows := 0
	for _, r := range s.Rows {
		if r.Test != "" || r.SR > 0 {
			continue // suiteTable, reuseBlocks
		}
		studyRows++
		gbps, cps, proto := "-", "-", cmp.Or(r.Protocol, vocab.DefaultProtocol)
		for _, cell := range s.Cells {
			if cell.DUT != r.DUT || cell.Profile != r.Profile || cell.Test != "" || cell.SR > 0 ||
				cmp.Or(cell.Protocol, vocab.DefaultProtocol) != proto {
				continue
			}
			out, format := &cps, FormatCPS
			if cell.Engine == vocab.EngineThroughput {
				out, format = &gbps, FormatGbps
			}
			var v *float64
			if cell.Accepted > 0 {
				v = &cell.Value
			}
			f := factsOf(cell, method.PublishedRun(c.Ledger, cell), insecure(c, cell.DUT))
			*out = cellText(v, format, f)
			who := r.DUT + " " + r.Profile + vocab.OverProtocol(proto) + " " + unitOf(cell.Engine)
			if f.Why != "" {
				notes = append(notes, who+": "+f.Why)
			}
			notes = append(notes, cellNotes(who, f, used)...)
			if n := joinNote(basisNote(cell), repeatNote(cell)); n != "" {
				notes = append(notes, r.DUT+" "+r.Profile+vocab.OverProtocol(proto)+": "+n)
			}
		}
		t.add(r.DUT, r.Profile, vocab.ProtocolTitle(proto), dash(r.Cipher), dash(r.Group), gbps, runs(r.GbpsRuns), cps,
			runs(r.CPSRuns))
	}
	if studyRows == 0 {
		d.blocks = nil
	}
	if suite := suiteTable(c); suite != nil {
		d.add(suite)
	}
	if slices.ContainsFunc(s.Cells, func(c *method.Cell) bool { return c.SR > 0 }) {
		its, _ := campaignItems(c) // the summary's cells, read above
		_, reuse := splitReuse(its)
		d.add(reuseBlocks(&Report{Reuse: reuse})...)
	}
	if len(notes) > 0 {
		notes = append([]string{"\nNotes:"}, notes...)
	}
	if studyRows > 0 {
		d.add(pre(strings.Join(append(append(notes, "\nLegend:"), legend(used, true)...), "\n") + "\n"))
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
			got = fmt.Sprintf("%s %s, %s, %s, %s; %s", n.Version, dash(n.OpenSSL), dash(n.Group), dash(n.CertKey),
				vocab.ProtocolTitle(p.Protocol), body)
		}
		test := cmp.Or(p.Test, p.Engine.String())
		if p.SR > 0 {
			test += fmt.Sprintf(" SR=%g", p.SR)
		}
		t.add("", p.DUT, test, p.Profile, got)
	}
	return Document{title: "preliminary", blocks: []block{t}}
}

// suiteTable is the published table's rows of named tests (an RFC 9411
// suite's): per DUT, test and profile, the value in the test's unit, its
// final runs accepted of those made, its verdict, and why it has no value; nil when the
// summary has none.
func suiteTable(c *Campaign) *table {
	s, tests := c.Summary, rfc9411Tests([]Input{{Campaign: c}})
	t := newTable("DUT", "TEST", "PROFILE", "PROTOCOL", "CIPHER (OpenSSL)", ">VALUE", ">RUNS", "VERDICT", "NOTE")
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
			if c.DUT == r.DUT && c.Profile == r.Profile && c.Test == r.Test && c.Protocol == r.Protocol {
				note = joinNote(note, c.Failed)
				if c.Failed == "" && !c.Consistent {
					note = joinNote(note, "inconsistent")
				}
				if c.DeviceNotSaturated {
					note = joinNote(note, "device not saturated")
				}
			}
		}
		t.add(r.DUT, r.Test, r.Profile, vocab.ProtocolTitle(r.Protocol), dash(r.Cipher), value, count,
			verdictOf(tests, r.Test, r.DUT, r.Profile), note)
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
