package reports

import (
	"fmt"
	"strings"
	"time"
)

// coverDates says when the report's runs were made (under its title).
func coverDates(r *Report) para {
	var first, last time.Time
	for _, e := range r.Environment {
		if first.IsZero() || e.First.Before(first) {
			first = e.First
		}
		if e.Last.After(last) {
			last = e.Last
		}
	}
	if first.IsZero() {
		return para(r.Title + ": no run record.")
	}
	return para(fmt.Sprintf("%s: runs from %s to %s.", r.Title, stamp(first), stamp(last)))
}

// coverBlocks end the report's first page: the verdict (how many values are
// published, how many tests have none, whether the certificate chains were
// verified) and the signature block.
func coverBlocks(r *Report) []block {
	var published, missing, disagree int
	count := func(v *float64, tested bool) {
		switch {
		case v != nil:
			published++
		case tested:
			missing++
		}
	}
	for _, row := range r.Table {
		for _, res := range row.Results {
			count(res.Gbps, res.GbpsRuns.Total > 0)
			count(res.CPS, res.CPSRuns.Total > 0)
			if !res.Consistent && (res.Gbps != nil || res.CPS != nil) {
				disagree++
			}
		}
	}
	for _, s := range r.Suite {
		count(s.Value, true)
	}
	for _, x := range r.Reuse {
		if x.Ratio > 0 { // SR=0 is the published table's
			count(x.Value, true)
		}
	}
	verdict := fmt.Sprintf("Verdict: %d values published, each the best of its accepted runs", published)
	if missing > 0 {
		verdict += fmt.Sprintf("; %d tests without a value (the notes say why)", missing)
	}
	if disagree > 0 {
		verdict += fmt.Sprintf("; %d DUT × profile results whose final runs did not agree", disagree)
	}
	var unverified []string
	for _, b := range r.Bed {
		if !b.Verified {
			unverified = append(unverified, b.DUT)
		}
	}
	if len(unverified) > 0 {
		verdict += "; certificate chains NOT verified (" + strings.Join(unverified, ", ") + ")"
	} else {
		verdict += "; certificate chains verified"
	}
	var tools []string
	for _, e := range r.Environment {
		if t := e.Tool + " " + e.Version; !strings.Contains(strings.Join(tools, ","), t) {
			tools = append(tools, t)
		}
	}
	sign := newTable("", "Name", "Date", "Signature")
	blank := strings.Repeat("_", 24)
	sign.add("Tested by", blank, blank[:12], blank)
	sign.add("Reviewed by", blank, blank[:12], blank)
	return []block{para(verdict + "."), heading{3, "Signatures"}, sign,
		para("Tool: " + dash(strings.Join(tools, ", ")) + ".")}
}
