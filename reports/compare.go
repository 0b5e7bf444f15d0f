package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// ComparisonReport is what `tlsbench compare A B` renders: two run records
// side by side, or two campaigns cell by cell (the published run of each
// cell). B is the baseline: deltas are A − B.
type ComparisonReport struct {
	Schema string `json:"schema"` // CompareSchema

	A     string           `json:"a"`
	B     string           `json:"b"`
	Cells []cellComparison `json:"cells"`
	// Unmatched says which cells of either side have no counterpart with
	// a published run.
	Unmatched []string `json:"unmatched,omitempty"`
	// Confirmation, for two campaigns, says whether B confirms A: every
	// cell of either, its two published values, B − A and its % of A,
	// judged against the plans' tolerance.
	Confirmation *method.Confirmation `json:"confirmation,omitempty"`
}

// cellComparison is the comparison of one cell (DUT × test × profile) or
// of two run records.
type cellComparison struct {
	Cell string `json:"cell"`
	// DUTA and DUTB name the devices of two run records as report does
	// (their --dut names, else what tells them apart); empty for
	// campaigns, whose cells name their DUT.
	DUTA string `json:"dut_a,omitempty"`
	DUTB string `json:"dut_b,omitempty"`
	analysis.RunComparison
	// DeviceA and DeviceB are the runs' device counts beside tlsbench's
	// (reports/device.go); nil when a record has none.
	DeviceA *metrics.DeviceCheck `json:"device_a,omitempty"`
	DeviceB *metrics.DeviceCheck `json:"device_b,omitempty"`
	// The latency curves of A and B, for the charts.
	curvesA, curvesB map[string][]analysis.Quantile
}

// CompareInputs compares two inputs of a kind, cell by cell: two run
// records (of one engine, of one protocol or two; each side's DUT named as
// report names it), or two campaigns, whose cells are matched by DUT,
// engine, protocol and profile — by engine, protocol and profile alone when
// each has a single DUT, so that one DUT can be held against another.
func CompareInputs(a, b Input) (*ComparisonReport, error) {
	rep := &ComparisonReport{Schema: CompareSchema, A: a.Name, B: b.Name}
	switch {
	case a.Run != nil && b.Run != nil:
		ra, rb := a.Run, b.Run
		if ra.Engine != rb.Engine {
			return nil, fmt.Errorf("%s is a %s run and %s a %s run: compare runs of one engine",
				a.Name, ra.Engine, b.Name, rb.Engine)
		}
		cell := ra.Engine.String() + " " + vocab.ProtocolTitle(ra.Protocol)
		if ra.ProtocolName() != rb.ProtocolName() { // HTTP/2 against HTTP/1.1 on one device, say
			cell += " vs " + vocab.ProtocolTitle(rb.Protocol)
		}
		cell += " " + ra.Profile
		if ra.Profile != rb.Profile {
			cell += " vs " + rb.Profile
		}
		cc, err := compareRuns(cell, a.Name, b.Name, ra, rb)
		if err != nil {
			return nil, err
		}
		labels := dutLabels([]Input{a, b})
		cc.DUTA, cc.DUTB = labels[dutKey(ra)], labels[dutKey(rb)]
		rep.Cells = append(rep.Cells, cc)
	case a.Campaign != nil && b.Campaign != nil:
		if a.Campaign.Summary == nil || b.Campaign.Summary == nil {
			return nil, fmt.Errorf("%s or %s has no summary", a.Name, b.Name)
		}
		if err := compareCampaigns(rep, a.Campaign, b.Campaign); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s and %s are not of a kind: compare two run records or two campaign directories",
			a.Name, b.Name)
	}
	return rep, nil
}

func compareRuns(cell, a, b string, ra, rb *metrics.Run) (cellComparison, error) {
	cc := cellComparison{Cell: cell, RunComparison: *analysis.CompareRuns(a, b, ra, rb)}
	cc.DeviceA, cc.DeviceB = ra.DeviceCheck(), rb.DeviceCheck()
	var err error
	if cc.curvesA, err = analysis.Curves(ra, curvePhases...); err != nil {
		return cc, err
	}
	cc.curvesB, err = analysis.Curves(rb, curvePhases...)
	return cc, err
}

// published is a campaign cell and the record of its published run.
type published struct {
	cell *method.Cell
	run  *metrics.Run
}

// cellsOf returns a campaign's cells by key, in order.
func cellsOf(c *Campaign) (keys []string, cells map[string]published, duts int) {
	cells = map[string]published{}
	seen := map[string]bool{}
	for _, cell := range c.Summary.Cells {
		seen[cell.DUT] = true
	}
	duts = len(seen)
	for _, cell := range c.Summary.Cells {
		k := cell.Engine.String() + " " + vocab.ProtocolTitle(cell.Protocol) + " " + cell.Profile
		if cell.SR > 0 {
			k += fmt.Sprintf(" SR=%g", cell.SR)
		}
		if duts > 1 {
			k = cell.DUT + " " + k
		}
		keys = append(keys, k)
		cells[k] = published{cell: cell, run: method.PublishedRun(c.Ledger, cell)}
	}
	return keys, cells, duts
}

func compareCampaigns(rep *ComparisonReport, a, b *Campaign) error {
	keysA, cellsA, dutsA := cellsOf(a)
	keysB, cellsB, dutsB := cellsOf(b)
	if (dutsA == 1) != (dutsB == 1) {
		return fmt.Errorf("%s has %d DUTs and %s %d: cells are matched by DUT name, "+
			"or by engine and profile when each has one DUT", rep.A, dutsA, rep.B, dutsB)
	}
	label := func(c *Campaign, p published) string {
		return fmt.Sprintf("%s: %s %s %s %s, run %d", c.Summary.Name, p.cell.DUT, p.cell.Engine,
			vocab.ProtocolTitle(p.cell.Protocol), p.cell.Profile, method.PublishedSeq(p.cell.Runs))
	}
	var pairs []method.CellPair
	for _, k := range keysA {
		pa, pb := cellsA[k], cellsB[k]
		pairs = append(pairs, method.CellPair{Key: k, A: pa.cell, B: pb.cell})
		switch {
		case pb.cell == nil:
			rep.Unmatched = append(rep.Unmatched, k+": only in A")
		case pa.run == nil:
			rep.Unmatched = append(rep.Unmatched, k+": no published run in A")
		case pb.run == nil:
			rep.Unmatched = append(rep.Unmatched, k+": no published run in B")
		default:
			cc, err := compareRuns(k, label(a, pa), label(b, pb), pa.run, pb.run)
			if err != nil {
				return err
			}
			rep.Cells = append(rep.Cells, cc)
		}
	}
	for _, k := range keysB {
		if cellsA[k].cell == nil {
			pairs = append(pairs, method.CellPair{Key: k, B: cellsB[k].cell})
			rep.Unmatched = append(rep.Unmatched, k+": only in B")
		}
	}
	tol, note := method.ConfirmTolerance(a.Plan, b.Plan)
	rep.Confirmation = method.Confirm(pairs, tol, note)
	if len(rep.Cells) == 0 {
		return fmt.Errorf("%s and %s have no cell in common with a published run on both sides", rep.A, rep.B)
	}
	return nil
}

// ComparisonJSON writes the comparison as indented JSON.
func ComparisonJSON(w io.Writer, c *ComparisonReport) error { return writeJSON(w, c) }

// ComparisonCSV writes one line per cell and metric, unformatted. Two
// campaigns' CSV has six more columns, filled on one more line per cell
// (metric "published", first): B − A and its % of A (Δ and Δ% are A − B
// and its % of B, as on the other lines, and stay empty there), the
// tolerance in percent, the verdict, and each side's state.
func ComparisonCSV(w io.Writer, c *ComparisonReport) error {
	cw := csv.NewWriter(w)
	head := []string{"cell", "metric", "unit", "a", "b", "delta", "delta_pct"}
	conf := c.Confirmation
	if conf != nil {
		head = append(head, "b_minus_a", "pct_of_a", "tolerance_pct", "verdict", "state_a", "state_b")
	}
	cw.Write(head)
	if conf != nil {
		tol := conf.Tolerance * 100
		for _, cc := range conf.Cells {
			cw.Write([]string{cc.Cell, "published", cc.Unit, csvFloat(cc.A), csvFloat(cc.B), "", "",
				csvFloat(cc.Delta), csvFloat(cc.DeltaPct), csvFloat(&tol), cc.Verdict, cc.StateA, cc.StateB})
		}
	}
	for _, cc := range c.Cells {
		for _, d := range cc.Rows {
			row := []string{cc.Cell, d.Metric, d.Unit, csvFloat(&d.A), csvFloat(&d.B), csvFloat(&d.Delta), csvFloat(d.DeltaPct)}
			if conf != nil {
				row = append(row, "", "", "", "", "", "")
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// ComparisonDoc lays a comparison out as the WAF study did: metric, A, B,
// and the impact, absolute and relative.
func ComparisonDoc(c *ComparisonReport) Document {
	d := Document{title: "tlsbench compare: " + c.A + " vs " + c.B}
	d.add(heading{1, d.title})
	// Under the confirmation, the cells' sections are one level down.
	level := 2
	if conf := c.Confirmation; conf != nil {
		level = 3
		d.add(heading{2, "Does B confirm A?"})
		d.add(para(conf.Summary + "."))
		tolText := "no tolerance (neither plan is known)"
		if conf.Tolerance > 0 {
			tolText = "±" + strconv.FormatFloat(math.Round(conf.Tolerance*100*1e6)/1e6, 'g', -1, 64) + "%"
		}
		intro := "Each cell's published value in A and in B, Δ = B − A and Δ% = (B − A) ÷ A, " +
			"judged against the final phase's consistency tolerance, " + tolText
		if conf.ToleranceNote != "" {
			intro += "; " + conf.ToleranceNote
		}
		d.add(para(intro + "."))
		t := newTable("Cell", ">A", ">B", ">Δ (B − A)", ">Δ% of A", "Verdict")
		for _, cc := range conf.Cells {
			t.add(cc.Cell, publishedText(cc.A, cc.StateA, cc.Unit), publishedText(cc.B, cc.StateB, cc.Unit),
				publishedDelta(cc.Delta, cc.Unit), publishedPct(cc.DeltaPct), verdictText(cc, tolText))
		}
		d.add(t)
		d.add(heading{2, "Every metric of the published runs"})
	}
	d.add(para("A: " + c.A + ". B: " + c.B + " (the baseline). Δ = A − B; Δ% = (A − B) ÷ B."))
	for i, cc := range c.Cells {
		d.add(heading{level, cc.Cell})
		if cc.DUTA != "" || cc.DUTB != "" {
			d.add(para("A: " + cc.A + ", DUT " + cc.DUTA + ". B: " + cc.B + ", DUT " + cc.DUTB + "."))
		} else {
			d.add(para("A: " + cc.A + ". B: " + cc.B + "."))
		}
		t := newTable("Metric", ">A", ">B", ">Δ (A − B)", ">Δ%")
		var notes []string
		for _, r := range cc.Rows {
			name := r.Metric
			if r.Unit != "" {
				name += " (" + r.Unit + ")"
			}
			if r.Note != "" {
				notes = append(notes, r.Metric+": "+r.Note)
			}
			t.add(name, number(r.A, r.Unit), number(r.B, r.Unit), plus(r.Delta, number(r.Delta, r.Unit)), deltaPct(r))
		}
		d.add(t)
		if len(notes) > 0 {
			d.add(list(notes))
		}
		d.add(compareDeviceBlocks(&cc)...)
		var curves []curve
		for j, ph := range curvePhases {
			phase := ph.String()
			if q := cc.curvesA[phase]; len(q) > 0 {
				curves = append(curves, curve{name: phase + " A", q: q, color: j})
			}
			if q := cc.curvesB[phase]; len(q) > 0 {
				curves = append(curves, curve{name: phase + " B", q: q, color: j, dashed: true})
			}
		}
		if len(curves) > 0 {
			title := cc.Cell + ": latency by percentile, A solid, B dashed"
			d.add(latencyChart(slug(fmt.Sprint(i+1), cc.Cell, "latency"), title, curves))
		}
	}
	if len(c.Unmatched) > 0 {
		d.add(heading{level, "Not compared"}, list(c.Unmatched))
	}
	return d
}

// publishedText is a cell's published value with its unit (no decimals
// for CPS, two for Gbps), or why it has none.
func publishedText(v *float64, state, unit string) string {
	switch {
	case v != nil:
		return publishedNumber(*v, unit) + " " + unit
	case state == method.StateAbsent:
		return "—"
	case strings.HasPrefix(state, "not supported"):
		return "not supported"
	}
	return "none"
}

func publishedNumber(v float64, unit string) string {
	if unit == "Gbps" {
		return group(strconv.FormatFloat(v, 'f', 2, 64))
	}
	return group(strconv.FormatFloat(v, 'f', 0, 64))
}

func publishedDelta(v *float64, unit string) string {
	if v == nil {
		return ""
	}
	return plus(*v, publishedNumber(*v, unit))
}

func publishedPct(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

// verdictText is a cell's verdict, with why it was not compared.
func verdictText(cc method.Confirmed, tol string) string {
	switch cc.Verdict {
	case method.VerdictDiffers:
		return "DIFFERS (beyond " + tol + ")"
	case method.VerdictNoValue:
	default:
		return cc.Verdict
	}
	var why []string
	if cc.StateA != method.StatePublished {
		why = append(why, "A: "+cc.StateA)
	}
	if cc.StateB != method.StatePublished {
		why = append(why, "B: "+cc.StateB)
	}
	return cc.Verdict + " (" + strings.Join(why, "; ") + ")"
}

// number formats a value with thousands separators: counts (no unit) as
// integers, other values to two decimals.
func number(v float64, unit string) string {
	if unit == "" && v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return group(strconv.FormatInt(int64(v), 10))
	}
	return group(strconv.FormatFloat(v, 'f', 2, 64))
}

// plus is s, the formatted v, with a "+" when v is positive.
func plus(v float64, s string) string {
	if v > 0 {
		return "+" + s
	}
	return s
}

func deltaPct(d analysis.Delta) string {
	switch {
	case d.DeltaPct == nil && d.A == d.B:
		return "unchanged"
	case d.DeltaPct == nil:
		return "n/a"
	case *d.DeltaPct == 0:
		return "unchanged"
	case *d.DeltaPct > 0:
		return fmt.Sprintf("+%.2f%%", *d.DeltaPct)
	}
	return fmt.Sprintf("%.2f%%", *d.DeltaPct)
}

// group puts thousands separators in a formatted number.
func group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}
