package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// deviceRule is the acceptance rule's clause on the device's counters.
func deviceRule(a plan.Accept) string {
	if a.MaxDeviceDisagreement == nil {
		return ""
	}
	if *a.MaxDeviceDisagreement == 0 {
		return ", the device's counts over the run exactly as tlsbench's"
	}
	return fmt.Sprintf(", the device's counts over the run within %s of tlsbench's", *a.MaxDeviceDisagreement)
}

// The device's own counters beside tlsbench's (metrics.Run.DeviceRows):
// in a run's summary, in the report (every run of every section that has
// them) and in a comparison.

// deviceSummary is RunSummary's lines: the source, then each count,
// "device counted N, tlsbench counted M", or the read's error.
func deviceSummary(r *metrics.Run) string {
	c := r.DeviceCheck()
	if c == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  device       %s\n", c.Source)
	if c.Error != "" {
		fmt.Fprintf(&b, "  ERROR        the device's counters could not be read: %s\n", c.Error)
	}
	for _, row := range c.Rows {
		mark := ""
		if !row.Agrees {
			mark = "  DISAGREES"
		}
		fmt.Fprintf(&b, "  %-12s %s%s\n", "", row.Explain(), mark)
	}
	return b.String()
}

// deviceNote explains the correspondence once, under a table of counts.
const deviceNote = "Run: from just before the preflight to after the drain, where nothing is in flight: " +
	"the device's count must equal tlsbench's plus its preflight " +
	"(and the counters' own reads when the device counts them). " +
	"Window: between the reads at the steady window's ends, within the transactions in flight at each read " +
	"and those made while the reads took their counts. " +
	"Bytes are the device's own accounting, shown a transaction each, not judged: " +
	"its application bytes against tlsbench's, its TLS bytes (tls_bytes_*) against tlsbench's wire bytes."

// deviceTable is one run's counts (its callers skip runs without any).
func deviceTable(label string, c *metrics.DeviceCheck) *table {
	t := newTable("Run", "Scope", "Counter", ">Device", ">tlsbench", ">Expected", ">Δ", "Verdict")
	if c.Error != "" {
		t.add(label, "-", "-", "-", "-", "-", "-", "unreadable: "+c.Error)
	}
	for _, row := range c.Rows {
		verdict := "exact"
		switch {
		case row.Informative:
			verdict = "not judged"
			if row.Transactions > 0 {
				txns := float64(row.Transactions)
				verdict = fmt.Sprintf("%.1f vs %.1f a transaction", float64(row.Device)/txns, float64(row.Engine)/txns)
			}
		case row.Diff != 0 && row.Agrees:
			verdict = fmt.Sprintf("within ±%d", row.Slack)
		case !row.Agrees:
			verdict = fmt.Sprintf("DISAGREES (±%d explained)", row.Slack)
		}
		expected := strconv.FormatInt(row.Expected, 10)
		if row.Offsets != "" {
			expected += " (" + row.Offsets + ")"
		}
		t.add(label, row.Scope, row.Counter, strconv.FormatInt(row.Device, 10), strconv.FormatInt(row.Engine, 10), expected,
			fmt.Sprintf("%+d", row.Diff), verdict)
	}
	return t
}

// deviceBlocks is the report's "Device counters" section: per appendix
// section, every run's counts beside tlsbench's, and how many disagreed.
func deviceBlocks(r *Report) []block {
	var out []block
	runs, bad, unreadable := 0, 0, 0
	for _, s := range r.Appendix {
		var tables []block
		for _, rr := range s.Runs {
			if rr.Device == nil {
				continue
			}
			runs++
			if rr.Device.Error != "" {
				unreadable++
			} else if rr.Device.Disagreements() > 0 {
				bad++
			}
			tables = append(tables, deviceTable(strconv.Itoa(rr.Seq), rr.Device))
		}
		if len(tables) > 0 {
			out = append(out, heading{4, fmt.Sprintf("%s · %s · %s", s.DUT, s.name(), s.Profile)})
			out = append(out, tables...)
		}
	}
	if runs == 0 {
		return nil
	}
	head := []block{heading{3, "Device counters"},
		para(fmt.Sprintf("The device's own counters beside tlsbench's, %d runs: "+
			"%d disagreed beyond what is explained, %d could not be read. %s",
			runs, bad, unreadable, deviceNote))}
	return append(head, out...)
}

// compareDeviceBlocks is a comparison cell's device counts, A then B.
func compareDeviceBlocks(cc *cellComparison) []block {
	var out []block
	for _, side := range []struct {
		name string
		c    *metrics.DeviceCheck
	}{{"A", cc.DeviceA}, {"B", cc.DeviceB}} {
		if side.c == nil {
			continue
		}
		out = append(out,
			para(fmt.Sprintf("Device counters of %s (%s):", side.name, side.c.Source)),
			deviceTable(side.name, side.c))
	}
	if len(out) > 0 {
		out = append(out, para(deviceNote))
	}
	return out
}
