package reports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// bedDUT is a DUT as "What was tested" names it: what the plan says of it,
// what the device said of itself, where it was reached, and whether its
// certificate chains were verified.
type bedDUT struct {
	DUT      string           `json:"dut"`
	Describe plan.Description `json:"describe"`
	// Server is the Server header of the preflights' responses (e.g.
	// "nginx/1.22.1"): read from the device, not given.
	Server string `json:"server,omitempty"`
	// StatsVersion is the device's software as its stats page names it
	// (the record's device.version: HAProxy's, which sends no Server header).
	StatsVersion string `json:"stats_version,omitempty"`
	URL          string `json:"url"`
	// Endpoints are the URLs reached and the profiles reached at each (a
	// plan's endpoints: a VIP per profile).
	Endpoints []endpoint `json:"endpoints"`
	// Resolve is the address dialled in place of the URL's host, if set;
	// Addresses the addresses the runs dialled.
	Resolve   string   `json:"resolve,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	// Verified is false when any run (or the plan) skipped the
	// certificate chains' verification (insecure_skip_verify).
	Verified bool   `json:"verified"`
	CAFile   string `json:"ca_file,omitempty"`
}

// endpoint is a URL and the profiles reached at it.
type endpoint struct {
	URL      string   `json:"url"`
	Profiles []string `json:"profiles"`
}

// reach adds that profile was reached at u.
func (b *bedDUT) reach(u, profile string) {
	i := slices.IndexFunc(b.Endpoints, func(e endpoint) bool { return e.URL == u })
	if i < 0 {
		i, b.Endpoints = len(b.Endpoints), append(b.Endpoints, endpoint{URL: u})
	}
	if e := &b.Endpoints[i]; !slices.Contains(e.Profiles, profile) {
		e.Profiles = append(e.Profiles, profile)
	}
}

// seeRun adds what a run of the DUT says: its preflight's Server header,
// the address dialled, its verification and endpoint.
func (b *bedDUT) seeRun(r *metrics.Run) {
	if pf := r.Preflight; pf != nil {
		b.Server = cmp.Or(b.Server, pf.Server)
	}
	if d := r.Device; d != nil {
		b.StatsVersion = cmp.Or(b.StatsVersion, d.Version)
	}
	if a := r.Target.Address; a != "" && !slices.Contains(b.Addresses, a) {
		b.Addresses = append(b.Addresses, a)
	}
	b.Verified = b.Verified && !r.Target.InsecureSkipVerify
	b.CAFile = cmp.Or(b.CAFile, r.Target.CAFile)
}

// testBed names the DUTs of the report: the campaigns' plans' (a DUT of a
// campaign the report does not name is marked with its directory), then
// the run records'.
func testBed(r *Report, inputs []Input, groups []*recordGroup) []bedDUT {
	var bed []bedDUT
	at := map[string]int{}
	for _, in := range inputs {
		c := in.Campaign
		if c == nil || c.Plan == nil {
			continue
		}
		source := c.Summary.Name // as campaignItems names it
		if c.Dir != "" {
			source = filepath.Base(c.Dir)
		}
		for _, d := range c.Plan.DUTs {
			name := d.Name
			if !slices.Contains(r.DUTs, name) {
				name += " [" + source + "]"
			}
			if _, ok := at[name]; ok {
				continue
			}
			b := bedDUT{DUT: name, URL: d.URL, Resolve: d.Resolve, Verified: !d.Insecure, CAFile: d.CACert}
			if d.Describe != nil {
				b.Describe = *d.Describe
			}
			for _, t := range c.Plan.Tests {
				for _, p := range t.Profiles {
					b.reach(cmp.Or(d.Endpoints[p], d.URL), p)
				}
			}
			for _, e := range c.Ledger {
				if e.Run != nil && e.DUT == d.Name {
					b.seeRun(e.Run)
				}
			}
			at[name] = len(bed)
			bed = append(bed, b)
		}
	}
	for _, g := range groups {
		i, ok := at[g.item.dut]
		if !ok {
			i, at[g.item.dut] = len(bed), len(bed)
			bed = append(bed, bedDUT{DUT: g.item.dut, URL: g.runs[0].Target.URL, Verified: true})
		}
		b := &bed[i]
		for _, run := range g.runs {
			b.seeRun(run)
			b.reach(run.Target.URL, run.Profile)
			if e := echoOf(run); len(e.Resolve) > 0 {
				b.Resolve = strings.Join(e.Resolve, ", ")
			}
		}
	}
	return bed
}

// echo is what the report reads of a record's config (the command line's
// echo): --resolve, --objects and --requests-per-conn.
type echo struct {
	Resolve []string `json:"resolve"`
	Objects string   `json:"objects"`
	Engine  struct {
		RequestsPerConn int `json:"requests_per_conn"`
	} `json:"engine"`
}

func echoOf(r *metrics.Run) echo {
	var e echo
	_ = json.Unmarshal(r.Config, &e) // a record without it: none of them
	return e
}

// bedBlocks are "What was tested": the DUTs (model, version and topology
// as the plans give them, else the software the device names in its
// Server header, marked as read), every endpoint, and whether the
// certificate chains were verified, in capitals when they were not.
func bedBlocks(r *Report) []block {
	duts := newTable("DUT", "Model", "Version", "Topology", "Certificates")
	eps := newTable("DUT", "Profile", "Endpoint")
	var where, unverified []string
	for _, b := range r.Bed {
		version := b.Describe.Version
		switch {
		case version != "":
		case b.StatsVersion != "":
			version = b.StatsVersion + " (read: stats page)"
		case b.Server != "":
			version = b.Server + " (read: Server header)"
		}
		duts.add(b.DUT, dash(b.Describe.Model), dash(version), dash(b.Describe.Topology), verifiedText(b))
		for _, e := range b.Endpoints {
			for _, p := range e.Profiles {
				eps.add(b.DUT, p, e.URL)
			}
		}
		var line []string
		if b.Resolve != "" {
			line = append(line, "resolved to "+b.Resolve)
		}
		if len(b.Addresses) > 0 {
			line = append(line, "dialled "+strings.Join(b.Addresses, ", "))
		}
		if len(line) > 0 {
			where = append(where, b.DUT+": "+strings.Join(line, "; "))
		}
		if !b.Verified {
			unverified = append(unverified, b.DUT)
		}
	}
	out := []block{duts, eps, list(where)}
	if len(unverified) > 0 {
		out = append(out, para("CERTIFICATE CHAINS NOT VERIFIED ("+strings.Join(unverified, ", ")+
			"): the runs skipped verification (insecure); the device's certificate was not checked."))
	}
	return out
}

// verifiedText says whether a DUT's certificate chains were verified.
func verifiedText(b bedDUT) string {
	switch {
	case !b.Verified:
		return "NOT verified (insecure)"
	case b.CAFile != "":
		return "verified (" + b.CAFile + ")"
	}
	return "verified"
}

// reuseResult is a row of SSL TPS with session reuse: a CPS test whose
// connections resumed sessions at the ratio asked, and its footnote.
type reuseResult struct {
	DUT      string          `json:"dut"`
	Profile  string          `json:"profile"`
	Ratio    float64         `json:"ratio"`
	Mode     string          `json:"mode"`
	Value    *float64        `json:"value"` // transactions (connections) per second
	Runs     method.RunCount `json:"runs"`
	Footnote string          `json:"footnote"`
	Note     string          `json:"note,omitempty"`
	// Engine is the test's: cps (SSL TPS), or throughput (Gbps) with M
	// requests per connection; Cell what the value says beside it (marks.go).
	Engine   vocab.Engine `json:"engine,omitempty"`
	Protocol string       `json:"protocol"` // http/1.1, http/2
	Cell     cellFacts    `json:"cell"`
}

// splitReuse parts the items of tests that resumed sessions by design,
// published as SSL TPS with session reuse, from the others; the CPS
// (SR=0) of the same DUT and profile, if any, is listed first beside them
// (a row of ratio 0), each row with its footnote.
func splitReuse(items []*item) (rest []*item, reuse []reuseResult) {
	row := func(it *item, ratio float64, mode string) reuseResult {
		return reuseResult{DUT: it.dut, Profile: it.profile, Ratio: ratio, Mode: mode, Value: it.value, Runs: it.runs,
			Footnote: it.footnote, Note: it.note, Engine: it.engine, Protocol: it.protocol, Cell: it.facts}
	}
	for _, it := range items {
		if it.reuse == nil {
			rest = append(rest, it)
			continue
		}
		i := slices.IndexFunc(items, func(o *item) bool {
			return o.reuse == nil && o.engine == it.engine && o.protocol == it.protocol && o.dut == it.dut &&
				o.profile == it.profile && o.section.Test == ""
		})
		if i >= 0 && !slices.ContainsFunc(reuse, func(x reuseResult) bool {
			return x.Ratio == 0 && x.Engine == it.engine && x.Protocol == it.protocol && x.DUT == it.dut &&
				x.Profile == it.profile
		}) {
			reuse = append(reuse, row(items[i], 0, ""))
		}
		reuse = append(reuse, row(it, it.reuse.Ratio, it.reuse.Mode))
	}
	return rest, reuse
}

// footnote says under what a published CPS value was measured, as the
// datasheets' footnotes do: resumption ratio, requests per connection,
// object size, TLS version and cipher, key, group, HTTP version. perConn and
// objects are the test's (a record's own: its echo's).
func footnote(r *metrics.Run, perConn int, objects string) string {
	n := r.Negotiated
	sr := "SR=0 (every handshake full)"
	if x := r.Resumption; x != nil {
		sr = fmt.Sprintf("SR=%g (%s)", x.Ratio, x.Mode)
	}
	if q := r.QUIC; q != nil && q.EarlyDataAccepted+q.EarlyDataRejected > 0 {
		sr += fmt.Sprintf(", 0-RTT early data (%d accepted, %d rejected)", q.EarlyDataAccepted, q.EarlyDataRejected)
	}
	if pf := r.Preflight; objects == "" && pf != nil {
		objects = fmt.Sprintf("%d B", pf.BodySize)
	}
	return fmt.Sprintf("%s, %d request(s) per connection, object %s, %s %s, key %s, group %s, %s",
		sr, max(perConn, 1), dash(objects), dash(n.Version), dash(n.OpenSSL), dash(n.CertKey), dash(n.Group),
		vocab.ProtocolTitle(r.Protocol))
}

// cellReuse gives a campaign cell's item its footnote, from its plan test
// and its published run, and its session reuse when its test asked for one
// (published apart).
func cellReuse(it *item, c *Campaign, cell *method.Cell, run *metrics.Run) {
	if cell.SR > 0 {
		mode := cell.Resumption
		if run != nil && run.Resumption != nil {
			mode = run.Resumption.Mode
		}
		it.reuse = &metrics.Resumption{Ratio: cell.SR, Mode: mode}
		it.section.SR = strings.TrimSpace(fmt.Sprintf("SR=%g %s", cell.SR, mode))
	}
	if run == nil {
		return
	}
	var t plan.Test
	if c.Plan != nil {
		if i := slices.IndexFunc(c.Plan.Tests, func(t plan.Test) bool {
			return t.Engine == cell.Engine && t.Name == cell.Test && t.Resume == cell.SR && t.EarlyData == cell.EarlyData &&
				t.Protocol() == cmp.Or(cell.Protocol, vocab.DefaultProtocol) && slices.Contains(t.Profiles, cell.Profile)
		}); i >= 0 {
			t = c.Plan.Tests[i]
		}
	}
	it.footnote = footnote(run, t.RequestsPerConn, t.Objects)
}

// reuseBlocks is the SSL TPS with session reuse table and its footnotes.
func reuseBlocks(r *Report) []block {
	if len(r.Reuse) == 0 {
		return nil
	}
	t := newTable("DUT", "Profile", "SR", ">SSL TPS", ">Runs", "Footnote")
	var notes []string
	for i, x := range r.Reuse {
		sr := fmt.Sprintf("%g", x.Ratio)
		if x.Mode != "" {
			sr += " (" + x.Mode + ")"
		}
		format := FormatCPS
		if x.Engine == vocab.EngineThroughput {
			format = FormatGbps
		}
		t.add(x.DUT, x.Profile, sr, cellText(x.Value, format, x.Cell), runs(x.Runs), fmt.Sprintf("[%d]", i+1))
		note := joinNote(x.Footnote, x.Note)
		for _, n := range x.Cell.Notes {
			note = joinNote(note, n)
		}
		notes = append(notes, fmt.Sprintf("[%d] %s", i+1, note))
	}
	return []block{heading{3, "SSL TPS with session reuse"}, t, list(notes)}
}

// reuseOf is the resumption a record was made with, nil for SR=0: a
// throughput record's too (--requests-per-conn M), never the SR=0 value's.
func reuseOf(r *metrics.Run) *metrics.Resumption { return r.Resumption }

// groupKey is the group of run records a record is of: its DUT, engine and
// profile, and its session reuse (an SR row of its own).
func groupKey(run *metrics.Run) string {
	k := dutKey(run) + "|" + run.Engine.String() + "|" + run.ProtocolName() + "|" + run.Profile
	if x := reuseOf(run); x != nil {
		k += fmt.Sprintf("|SR=%g %s", x.Ratio, x.Mode)
	}
	return k
}
