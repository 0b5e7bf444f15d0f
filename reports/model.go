package reports

import (
	"cmp"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Campaign is the content of a campaign directory (from qualify), read by
// the caller: its plan, its summary and its ledger.
type Campaign struct {
	Dir     string
	Plan    *plan.Plan // nil when the directory has no plan.yaml
	Summary *method.Summary
	Ledger  []*method.Entry // in the order written
	// Backends are the counts of the plan's pool of backends (backends.go).
	Backends *BackendCounts
}

// Input is one input of a report or a comparison: a campaign or a run
// record, and the name it was given by (a directory or a file).
type Input struct {
	Name     string
	Campaign *Campaign
	Run      *metrics.Run
}

// Report is what `tlsbench report` renders: the published table (per
// profile, every DUT side by side) and the methodology appendix behind it.
// It is plain data; its JSON is the json format.
type Report struct {
	// Schema is ReportSchema.
	Schema      string         `json:"schema"`
	Title       string         `json:"title"`
	DUTs        []string       `json:"duts"`
	Table       []tableRow     `json:"table"`
	Campaigns   []campaignInfo `json:"campaigns,omitempty"`
	Environment []environment  `json:"environment"`
	Appendix    []section      `json:"appendix"`
	// Records are the run record files among the inputs.
	Records []string `json:"records,omitempty"`
	// RFC9411 are the campaigns' RFC 9411 tests, judged (rfc9411.go).
	RFC9411 []rfcTest `json:"rfc9411,omitempty"`
	// Suite is the published values of the campaigns' named tests (an RFC
	// 9411 suite's), which the published table (by engine) leaves out.
	Suite []suiteResult `json:"suite,omitempty"`
	// Bed is the DUTs as tested (bed.go), Reuse the SSL TPS with session
	// reuse of CPS records that resumed sessions.
	Bed   []bedDUT      `json:"test_bed"`
	Reuse []reuseResult `json:"session_reuse,omitempty"`
}

// suiteResult is a named test's published value for a DUT and profile.
type suiteResult struct {
	DUT     string          `json:"dut"`
	Test    string          `json:"test"`
	Profile string          `json:"profile"`
	Cipher  string          `json:"cipher"`
	Value   *float64        `json:"value"`
	Unit    string          `json:"unit"`
	Runs    method.RunCount `json:"runs"`
	Note    string          `json:"note,omitempty"`
	// Bound, if set, says that Value is a lower bound (method.Cell.Bound).
	Bound string `json:"bound,omitempty"`
	// Verdict is its RFC 9411 verdict: PASS, PASS (SHOULD not met), FAIL or "-".
	Verdict string `json:"verdict,omitempty"`
	// Protocol carried its runs: http/1.1, http/2.
	Protocol string `json:"protocol"`
}

// tableRow is one line of the published table: a profile and the results
// of every DUT for it.
type tableRow struct {
	Profile string   `json:"profile"`
	Cipher  string   `json:"cipher"` // OpenSSL name
	Group   string   `json:"group"`  // ECDHE group, or the RSA key
	Results []result `json:"results"`
	// Protocol carried its runs: http/1.1, http/2.
	Protocol string `json:"protocol"`
}

// result is one DUT's published values for a profile.
type result struct {
	DUT string `json:"dut"`
	// Gbps and CPS are nil when the DUT has no such test for the profile
	// or no accepted run.
	Gbps *float64 `json:"gbps"`
	CPS  *float64 `json:"cps"`
	// The ratios to the first DUT's values; nil for the first DUT and when
	// either value is missing.
	GbpsRatio *float64        `json:"gbps_ratio,omitempty"`
	CPSRatio  *float64        `json:"cps_ratio,omitempty"`
	GbpsRuns  method.RunCount `json:"gbps_runs"`
	CPSRuns   method.RunCount `json:"cps_runs"`
	// Consistent is false when a campaign's final runs did not agree.
	Consistent bool   `json:"consistent"`
	Note       string `json:"note,omitempty"`
	// GbpsUnsupported and CPSUnsupported, if set, are why the DUT does not
	// serve the profile (its refusal in a campaign's preliminary phase).
	GbpsUnsupported string `json:"gbps_unsupported,omitempty"`
	CPSUnsupported  string `json:"cps_unsupported,omitempty"`
	// GbpsCell and CPSCell are what each cell says beside its value (marks.go).
	GbpsCell cellFacts `json:"gbps_cell"`
	CPSCell  cellFacts `json:"cps_cell"`
	// CPSFootnote says under what the CPS (SR=0) was measured (footnote).
	CPSFootnote string `json:"cps_footnote,omitempty"`
}

// test returns where x keeps the published value, ratio, runs, refusal and
// facts of a test.
func (r *result) test(e vocab.Engine) (v, ratio **float64, runs *method.RunCount, unsupported *string, f *cellFacts) {
	if e == vocab.EngineThroughput {
		return &r.Gbps, &r.GbpsRatio, &r.GbpsRuns, &r.GbpsUnsupported, &r.GbpsCell
	}
	return &r.CPS, &r.CPSRatio, &r.CPSRuns, &r.CPSUnsupported, &r.CPSCell
}

// publishedTests are the published table's tests, in its order: their
// titles in the table and the chart, the chart's unit and the format.
var publishedTests = []struct {
	engine             vocab.Engine
	title, chart, unit string
	format             func(float64) string
}{
	{vocab.EngineThroughput, "Throughput (Gbps, payload)", "Throughput per profile", "Gbps (payload)", FormatGbps},
	{vocab.EngineCPS, "CPS (SR=0)", "CPS (SR=0) per profile", "connections per second", FormatCPS},
}

// campaignInfo is what a campaign was: its plan's tests and method, and
// what differed between its DUTs.
type campaignInfo struct {
	Name        string              `json:"name"`
	Dir         string              `json:"dir"`
	Tests       []plan.Test         `json:"tests,omitempty"`
	Method      *plan.Method        `json:"method,omitempty"`
	Differences []method.Difference `json:"differences,omitempty"`
	// DUTs are the plan's DUTs and what it says of them; Generator what
	// it says of the load generator (plan.Description).
	DUTs      []dutInfo         `json:"duts,omitempty"`
	Generator *plan.Description `json:"generator,omitempty"`
	// Records is the number of run records in the campaign's ledger.
	Records int `json:"records,omitempty"`
	// Backends is the plan's pool of backends (backends.go).
	Backends *backendsInfo `json:"backends,omitempty"`
}

// dutInfo is a DUT of a campaign's plan: its name, its base URL and its
// description, if the plan gives one.
type dutInfo struct {
	Name     string            `json:"name"`
	URL      string            `json:"url"`
	Describe *plan.Description `json:"describe,omitempty"`
}

// environment is a generator the runs were made on, and when.
type environment struct {
	Tool      string    `json:"tool"`
	Version   string    `json:"version"`
	GoVersion string    `json:"go_version"`
	Hostname  string    `json:"hostname"`
	OS        string    `json:"os"`
	Arch      string    `json:"arch"`
	CPUModel  string    `json:"cpu_model"`
	CPUs      int       `json:"cpus"`
	First     time.Time `json:"first"` // the first run's start
	Last      time.Time `json:"last"`  // the last run's end
	Runs      int       `json:"runs"`
}

// section is the appendix of one DUT × test × profile: how its published
// value was found.
type section struct {
	DUT     string       `json:"dut"`
	Engine  vocab.Engine `json:"engine"`
	Profile string       `json:"profile"`
	Test    string       `json:"test,omitempty"` // the plan test's name, if it has one
	Source  string       `json:"source"`         // the campaign, or "run records"
	Unit    string       `json:"unit"`           // of the values: "CPS" or "Gbps"
	// Protocol carried its runs: http/1.1, http/2.
	Protocol string `json:"protocol"`
	// P99Phase is the phase of the exploration's p99: handshake (CPS) or
	// total (throughput).
	P99Phase    vocab.Phase    `json:"p99_phase"`
	Preliminary *method.Prelim `json:"preliminary,omitempty"`
	Exploration []method.Probe `json:"exploration,omitempty"`
	// Search is how the exploration went: the levels in the order probed
	// and why it stopped (campaigns that record it).
	Search     *method.Search `json:"search,omitempty"`
	Level      int            `json:"level,omitempty"` // the level chosen and frozen
	Runs       []runResult    `json:"runs"`
	Best3      []float64      `json:"best3"`
	Value      *float64       `json:"value"`
	Spread     float64        `json:"spread"`
	Consistent bool           `json:"consistent"`
	Failed     string         `json:"failed,omitempty"`
	// SR is the session reuse of an SR row's records ("SR=1 tickets").
	SR string `json:"sr,omitempty"`
	// Rule names the acceptance rule the runs were judged by.
	Rule   string  `json:"rule"`
	Chosen *chosen `json:"chosen,omitempty"`
}

// runResult is one final run (campaign) or one run record.
type runResult struct {
	Seq      int      `json:"seq"`
	File     string   `json:"file,omitempty"` // run records: the file
	Value    float64  `json:"value"`
	Errors   int64    `json:"errors"`
	Accepted bool     `json:"accepted"`
	Reasons  []string `json:"reasons,omitempty"`
	Chosen   bool     `json:"chosen,omitempty"`
	// Device is the run's device counts beside tlsbench's (reports/device.go).
	Device *metrics.DeviceCheck `json:"device,omitempty"`
	// Noise is the machine's noise over the run's steady window, when it
	// was measured.
	Noise *metrics.Noise `json:"noise,omitempty"`
	// TCP is the run's retransmissions and SYN stalls (tcp.go).
	TCP *RunTCP `json:"tcp,omitempty"`
}

// chosen is the run whose value is published: its conditions, latency,
// per-second series and latency curves.
type chosen struct {
	Seq          int                            `json:"seq"`
	Started      time.Time                      `json:"started"`
	Ended        time.Time                      `json:"ended"`
	Target       string                         `json:"target"`
	Negotiated   metrics.Negotiated             `json:"negotiated"`
	Load         metrics.Load                   `json:"load"`
	Transactions int64                          `json:"transactions"`
	Errors       int64                          `json:"errors"`
	WarmupS      float64                        `json:"warmup_s"`
	SteadyStartS float64                        `json:"steady_start_s"`
	DurationS    float64                        `json:"duration_s"`
	Timeline     *metrics.Timeline              `json:"timeline,omitempty"` // its ramps, if any
	Latency      map[string]metrics.Percentiles `json:"latency_us"`
	// Transport is the run's ("quic": no connect phase, shown n/a).
	Transport string `json:"transport,omitempty"`
	// Series is the value (CPS or Gbps) of each whole second of the run,
	// by completion time, warm-up included; the partial last second (the
	// drain's) is left out.
	Series []analysis.Point `json:"series"`
	// Curves are the latency curves (µs at analysis.CurvePercentiles) of
	// the handshake and total phases.
	Curves map[string][]analysis.Quantile `json:"curves"`
	Client metrics.Client                 `json:"client"`
}

func unitOf(engine vocab.Engine) string {
	if engine == vocab.EngineThroughput {
		return "Gbps"
	}
	return "CPS"
}

// curvePhases are the phases whose latency curves are drawn.
var curvePhases = []vocab.Phase{vocab.PhaseHandshake, vocab.PhaseTotal}

// curve is a latency curve of a chart.
type curve struct {
	name   string
	q      []analysis.Quantile
	color  int
	dashed bool
}

// recordsSource is the Section.Source of run records.
const recordsSource = "run records"

// item is a DUT × engine × profile of one input, before DUTs are named.
type item struct {
	source, dut   string // the input's label and the DUT's own name
	engine        vocab.Engine
	protocol      string // http/1.1, http/2
	profile       string
	cipher, group string
	value         *float64
	runs          method.RunCount
	consistent    bool
	note          string
	unsupported   string // why the DUT does not serve the profile
	bound         string // §7.9: value is a lower bound, why (method.Cell.Bound)
	facts         cellFacts
	section       section
	// reuse is the resumption of CPS records at SR>0 (published apart);
	// footnote says under what the value was measured (bed.go).
	reuse    *metrics.Resumption
	footnote string
}

// Build assembles the report of the inputs: every campaign's published
// rows and cells, and the run records grouped by DUT (DUTKey), engine and
// profile, the best record of each group published. Build does not refuse
// records of several devices under one name (CheckDUTs does): their group
// gets a note naming the devices.
func Build(inputs []Input) (*Report, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("reports: no input")
	}
	var items []*item
	var envRuns []*metrics.Run
	r := &Report{Schema: ReportSchema}
	var titles []string
	records := map[string]*recordGroup{}
	var groups []*recordGroup // in order
	for _, in := range inputs {
		switch {
		case in.Campaign != nil:
			c := in.Campaign
			its, err := campaignItems(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in.Name, err)
			}
			items = append(items, its...)
			info := campaignInfo{Name: c.Summary.Name, Dir: c.Dir, Differences: c.Summary.Differences,
				Backends: backendsOf(c)}
			if c.Plan != nil {
				m := c.Plan.Method
				info.Tests, info.Method = c.Plan.Tests, &m
				for _, d := range c.Plan.DUTs {
					info.DUTs = append(info.DUTs, dutInfo{Name: d.Name, URL: d.URL, Describe: d.Describe})
				}
				info.Generator = c.Plan.Generator
			}
			for _, e := range c.Ledger {
				if e.Run != nil {
					info.Records++
					envRuns = append(envRuns, e.Run)
				}
			}
			r.Campaigns = append(r.Campaigns, info)
			titles = append(titles, c.Summary.Name)
		case in.Run != nil:
			run := in.Run
			k := groupKey(run)
			g, ok := records[k]
			if !ok {
				g = &recordGroup{dutKey: dutKey(run)}
				records[k] = g
				groups = append(groups, g)
				// The group takes the place of its first record.
				items = append(items, &item{source: recordsSource, dut: dutOf(run), engine: run.Engine, profile: run.Profile,
					reuse: reuseOf(run), protocol: run.ProtocolName()})
				g.item = items[len(items)-1]
			}
			g.files = append(g.files, in.Name)
			r.Records = append(r.Records, in.Name)
			g.runs = append(g.runs, run)
			envRuns = append(envRuns, run)
		default:
			return nil, fmt.Errorf("reports: input %s is neither a campaign nor a run record", in.Name)
		}
	}
	if len(records) > 0 {
		titles = append(titles, recordsSource)
	}
	labels := dutLabels(inputs)
	for _, g := range groups {
		g.item.dut = labels[g.dutKey]
		g.fill()
	}
	r.Title = strings.Join(titles, ", ")
	r.DUTs = nameDUTs(items)
	r.Bed = testBed(r, inputs, groups)
	r.RFC9411 = rfc9411Tests(inputs)
	var study []*item
	study, r.Reuse = splitReuse(items)
	study, r.Suite = splitSuite(study, r.RFC9411)
	r.Table = publishedRows(study, r.DUTs)
	for _, it := range items {
		r.Appendix = append(r.Appendix, it.section)
	}
	r.Environment = environments(envRuns)
	return r, nil
}

// dutOf names the DUT of a run record, before two devices of one name are
// told apart (Build does that): its --dut name, the in-process reference
// target, or the host (and port, when the URL gives one) of the target's
// URL — its address when it has no URL.
func dutOf(r *metrics.Run) string {
	switch {
	case r.Target.DUT != "":
		return r.Target.DUT
	case r.Target.InProcess:
		return "reference (in-process)"
	}
	if u, err := url.Parse(r.Target.URL); err == nil && u.Hostname() != "" {
		return u.Host
	}
	return r.Target.Address
}

// dutKey is the device a run record measured, as reports group records: its
// name when it was given one (--dut, a plan's DUT); else the address and
// port dialled, the SNI and the leaf certificate's fingerprint. The
// in-process reference target, a new listener and certificate each run, is
// one device.
func dutKey(r *metrics.Run) string {
	t := r.Target
	switch {
	case t.DUT != "":
		return "dut " + t.DUT
	case t.InProcess:
		return "in-process"
	}
	return "at " + t.Address + " sni " + t.ServerName + " leaf " + t.LeafSHA256
}

// dutLabels names the run records' devices (by DUTKey) for the tables:
// DUTOf, and when two devices share it, what tells them apart: the
// address dialled, else the SNI, else the certificate.
func dutLabels(inputs []Input) map[string]string {
	byLabel := map[string][]*metrics.Run{} // label → the first record of each device
	seen := map[string]bool{}
	for _, in := range inputs {
		if r := in.Run; r != nil && !seen[dutKey(r)] {
			seen[dutKey(r)] = true
			byLabel[dutOf(r)] = append(byLabel[dutOf(r)], r)
		}
	}
	labels := map[string]string{}
	for label, runs := range byLabel {
		for _, r := range runs {
			labels[dutKey(r)] = label
		}
		if len(runs) == 1 {
			continue
		}
		// The first of these that differs between the devices, else the last.
		extras := []func(metrics.Target) string{
			func(t metrics.Target) string { return t.Address },
			func(t metrics.Target) string { return "SNI " + t.ServerName },
			func(t metrics.Target) string { return "certificate " + shortHash(t.LeafSHA256) },
		}
		extra := extras[len(extras)-1]
		for _, f := range extras[:len(extras)-1] {
			if slices.ContainsFunc(runs[1:], func(r *metrics.Run) bool { return f(r.Target) != f(runs[0].Target) }) {
				extra = f
				break
			}
		}
		for _, r := range runs {
			labels[dutKey(r)] = label + " (" + extra(r.Target) + ")"
		}
	}
	return labels
}

// shortHash is the first 12 hex digits of a fingerprint, "none" for none.
func shortHash(h string) string {
	if h == "" {
		return "none"
	}
	return h[:min(12, len(h))]
}

// MixedDUTError reports two run records that share a DUT name but not a
// device: for the same profile, they dialled another address, sent another
// SNI or were presented another leaf certificate.
type MixedDUTError struct {
	DUT            string
	FileA, FileB   string
	Field          string // "address", "server_name" or "leaf_sha256"
	ValueA, ValueB string
}

func (e *MixedDUTError) Error() string {
	what := map[string]string{
		"address":     "dialled",
		"server_name": "sent SNI",
		"leaf_sha256": "was presented the certificate SHA-256",
	}[e.Field]
	return fmt.Sprintf("DUT %s: %s %s %s, %s %s: two devices under one name",
		e.DUT, e.FileA, what, orNone(e.ValueA), e.FileB, orNone(e.ValueB))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// CheckDUTs returns a *MixedDUTError for the first two run records of one
// DUT name and profile that differ in the address dialled, the SNI or the
// leaf certificate (when both saw one); nil when every name is one device.
// Records of other profiles may differ: a device may have one address (VIP)
// per profile, and presents one certificate per key type.
func CheckDUTs(inputs []Input) error {
	first := map[string]Input{}
	for _, in := range inputs {
		r := in.Run
		if r == nil || r.Target.DUT == "" {
			continue
		}
		k := r.Target.DUT + "|" + r.Profile
		f, ok := first[k]
		if !ok {
			first[k] = in
			continue
		}
		if field, va, vb := identityDiff(f.Run.Target, r.Target); field != "" {
			return &MixedDUTError{DUT: r.Target.DUT, FileA: f.Name, FileB: in.Name, Field: field, ValueA: va, ValueB: vb}
		}
	}
	return nil
}

// identityDiff returns the first identity field in which a and b differ,
// and their values.
func identityDiff(a, b metrics.Target) (field, va, vb string) {
	switch {
	case a.Address != b.Address:
		return "address", a.Address, b.Address
	case a.ServerName != b.ServerName:
		return "server_name", a.ServerName, b.ServerName
	case a.LeafSHA256 != "" && b.LeafSHA256 != "" && a.LeafSHA256 != b.LeafSHA256:
		return "leaf_sha256", a.LeafSHA256, b.LeafSHA256
	}
	return "", "", ""
}

// campaignItems returns a campaign's published rows, one item per cell,
// with the cells' sections.
func campaignItems(c *Campaign) ([]*item, error) {
	s := c.Summary
	if s == nil {
		return nil, fmt.Errorf("the campaign has no summary")
	}
	source := s.Name
	if c.Dir != "" {
		source = filepath.Base(c.Dir)
	}
	prelim := map[string]method.Prelim{}
	for _, p := range s.Preliminary {
		prelim[p.DUT+"|"+p.Engine.String()+"|"+cmp.Or(p.Protocol, vocab.DefaultProtocol)+"|"+p.Profile+"|"+p.Test+
			fmt.Sprint(p.SR)] = p
	}
	rows := map[string]method.Row{}
	for _, row := range s.Rows {
		rows[row.DUT+"|"+cmp.Or(row.Protocol, vocab.DefaultProtocol)+"|"+row.Profile] = row
	}
	var out []*item
	for _, cell := range s.Cells {
		proto := cmp.Or(cell.Protocol, vocab.DefaultProtocol)
		row, ok := rows[cell.DUT+"|"+proto+"|"+cell.Profile]
		if !ok {
			return nil, fmt.Errorf("summary: cell %s %s %s has no row", cell.DUT, cell.Engine, cell.Profile)
		}
		run := method.PublishedRun(c.Ledger, cell)
		it, failed := cellItem(source, cell, row, factsOf(cell, run, insecure(c, cell.DUT)))
		sec := section{
			Exploration: cell.Exploration,
			Search:      cell.Search,
			Level:       cell.Level,
			Best3:       cell.Best3,
			Value:       it.value,
			Spread:      cell.Spread,
			Consistent:  cell.Consistent && cell.Accepted > 0,
			Failed:      failed,
			Rule:        "the campaign's acceptance rule",
		}
		sec.setKey(cell.DUT, cell.Engine, proto, cell.Profile, source)
		if cell.Test != "" {
			sec.Test = cell.Test
			if cell.Unit != "" { // a summary written before the suite's units keeps the engine's
				sec.Unit = cell.Unit
			}
		}
		if c.Plan != nil {
			sec.Rule = ruleText(c.Plan.Method.Accept)
		}
		if p, ok := prelim[cell.DUT+"|"+cell.Engine.String()+"|"+proto+"|"+cell.Profile+"|"+cell.Test+
			fmt.Sprint(cell.SR)]; ok {
			sec.Preliminary = &p
		}
		chosen := method.PublishedSeq(cell.Runs)
		if cell.Published > 0 {
			chosen = cell.Published
		}
		for _, fr := range cell.Runs {
			rr := runResult{Seq: fr.Seq, Value: fr.Value, Accepted: fr.Accepted, Reasons: fr.Reasons, Chosen: fr.Seq == chosen}
			if e := method.FinalEntry(c.Ledger, cell, fr.Seq); e != nil && e.Run != nil {
				rr.Errors, rr.Noise = e.Run.Errors.Total, e.Run.Noise
				rr.Device = e.Run.DeviceCheck()
				rr.TCP = runTCP(e.Run)
			}
			sec.Runs = append(sec.Runs, rr)
		}
		if run != nil {
			ch, err := chosenOf(run, chosen)
			if err != nil {
				return nil, fmt.Errorf("ledger: %s %s %s run %d: %w", cell.DUT, cell.Engine, cell.Profile, chosen, err)
			}
			sec.Chosen = ch
		}
		it.section = sec
		cellReuse(it, c, cell, run)
		out = append(out, it)
	}
	return out, nil
}

// cellItem is a campaign cell's published row and its note; failed says
// why the cell published nothing, if it did not.
func cellItem(source string, cell *method.Cell, row method.Row, f cellFacts) (it *item, failed string) {
	it = &item{
		source:      source,
		dut:         cell.DUT,
		engine:      cell.Engine,
		protocol:    cmp.Or(cell.Protocol, vocab.DefaultProtocol),
		profile:     cell.Profile,
		cipher:      row.Cipher,
		group:       row.Group,
		runs:        method.RunCount{Accepted: cell.Accepted, Total: cell.Total},
		consistent:  cell.Consistent,
		unsupported: cell.Unsupported,
		bound:       cell.Bound,
		facts:       f,
	}
	if cell.Accepted > 0 {
		v := cell.Value
		it.value = &v
	}
	if failed = f.Why; failed != "" && cell.Unsupported == "" {
		it.consistent = false // nothing published, never consistent: said why
	}
	if failed != "" {
		it.note = unitOf(cell.Engine) + ": " + failed
	}
	it.note = joinNote(joinNote(it.note, basisNote(cell)), repeatNote(cell)) // the marks' notes are the facts'
	return it, failed
}

// basisNote says of a cell published from fewer than three accepted final
// runs (a plan's final.min_accepted below 3) how many: "CPS: best of 1
// accepted run"; "" otherwise.
func basisNote(c *method.Cell) string {
	if c.Accepted == 0 || c.Accepted >= 3 {
		return ""
	}
	return fmt.Sprintf("%s: best of %s", unitOf(c.Engine), acceptedRuns(c.Accepted))
}

// insecure: the campaign's plan skips the chain verification of the DUT.
func insecure(c *Campaign, dut string) bool {
	return c.Plan != nil && slices.ContainsFunc(c.Plan.DUTs, func(d plan.DUT) bool { return d.Name == dut && d.Insecure })
}

// acceptedRuns is "1 accepted run", "2 accepted runs".
func acceptedRuns(n int) string {
	if n == 1 {
		return "1 accepted run"
	}
	return fmt.Sprintf("%d accepted runs", n)
}

// finalReasons are the rejection reasons of each final run.
func finalReasons(runs []method.FinalRun) [][]string {
	out := make([][]string, len(runs))
	for i, r := range runs {
		out[i] = r.Reasons
	}
	return out
}

// setKey says which DUT × test × profile of which source s is, in which
// unit, and of which phase its exploration's p99 is: the handshake (CPS) or
// the whole transaction (throughput).
func (s *section) setKey(dut string, engine vocab.Engine, protocol, profile, source string) {
	s.DUT = dut
	s.Engine, s.Protocol = engine, protocol
	s.Profile = profile
	s.Source = source
	s.Unit = unitOf(engine)
	s.P99Phase = vocab.PhaseHandshake
	if engine == vocab.EngineThroughput {
		s.P99Phase = vocab.PhaseTotal
	}
}

// chosenOf extracts what the appendix shows of a run.
func chosenOf(r *metrics.Run, seq int) (*chosen, error) {
	curves, err := analysis.Curves(r, curvePhases...)
	if err != nil {
		return nil, err
	}
	return &chosen{
		Seq:          seq,
		Started:      r.Started,
		Ended:        r.Ended,
		Target:       r.Target.Address,
		Negotiated:   r.Negotiated,
		Load:         r.Load,
		Transactions: r.Transactions,
		Errors:       r.Errors.Total,
		WarmupS:      r.WarmupS,
		SteadyStartS: r.SteadyStartS,
		DurationS:    r.DurationS,
		Timeline:     r.Timeline,
		Latency:      r.Latency,
		Transport:    r.Transport,
		Client:       r.Client,
		Series:       analysis.Series(r),
		Curves:       curves,
	}, nil
}

// recordGroup is the run records of one DUT × engine × profile.
type recordGroup struct {
	item   *item
	dutKey string
	files  []string
	runs   []*metrics.Run
}

// fill publishes the group's best accepted record (by the method's
// default rule; nothing, and why, when none is accepted) and makes its
// section.
func (g *recordGroup) fill() {
	it := g.item
	v := method.JudgeRecords(g.runs)
	sec := section{Rule: ruleText(v.Rule) + " (the method's default)", Best3: v.Best3, Spread: v.Spread}
	sec.setKey(it.dut, it.engine, it.protocol, it.profile, recordsSource)
	for i, run := range g.runs {
		sec.Runs = append(sec.Runs, runResult{
			Seq:      i + 1,
			File:     g.files[i],
			Value:    v.Values[i],
			Errors:   run.Errors.Total,
			Accepted: len(v.Reasons[i]) == 0,
			Reasons:  v.Reasons[i],
			Chosen:   i == v.Published,
			Device:   run.DeviceCheck(),
			Noise:    run.Noise,
			TCP:      runTCP(run),
		})
	}
	it.runs = method.RunCount{Accepted: v.Accepted, Total: len(g.runs)}
	n := g.runs[max(v.Published, 0)].Negotiated
	it.cipher, it.group = n.OpenSSL, n.GroupOrKey()
	e := echoOf(g.runs[max(v.Published, 0)])
	it.footnote = footnote(g.runs[max(v.Published, 0)], e.Engine.RequestsPerConn, e.Objects)
	if it.reuse != nil {
		sec.SR = fmt.Sprintf("SR=%g %s", it.reuse.Ratio, it.reuse.Mode)
	}
	if v.Published < 0 {
		// Nothing published, never consistent: said why.
		sec.Failed = method.NoAcceptedRun(v.Reasons) + " (the default rule)"
		it.facts.Why = sec.Failed
		it.note = unitOf(it.engine) + ": " + sec.Failed
	} else {
		if v.Accepted > 1 {
			it.facts.Spread = &sec.Spread
		}
		it.facts.runMarks(g.runs[v.Published], false)
		if n := len(g.runs) - v.Accepted; n > 0 {
			it.note = fmt.Sprintf("%d of %d %s records not accepted by the default rule", n, len(g.runs), unitOf(it.engine))
		}
		value := v.Values[v.Published]
		sec.Value, it.value, sec.Consistent, it.consistent = &value, &value, true, true
		if ch, err := chosenOf(g.runs[v.Published], v.Published+1); err == nil {
			sec.Chosen = ch
		} else {
			sec.Failed = err.Error()
		}
	}
	if addrs := g.devices(); len(addrs) > 1 {
		// --allow-mixed-dut: said, never silent.
		mixed := fmt.Sprintf("records of %d devices under one name: %s", len(addrs), strings.Join(addrs, ", "))
		it.note = joinNote(it.note, mixed)
	}
	it.section = sec
}

// devices lists the distinct devices (address, SNI, certificate) of the
// group's records; more than one only under --allow-mixed-dut.
// A record that saw no certificate (no verified connection) adds none.
func (g *recordGroup) devices() []string {
	var out []string
	seen := map[string]bool{} // address and SNI
	for _, pass := range []bool{true, false} {
		for _, r := range g.runs {
			d := r.Target.Address
			if r.Target.ServerName != "" {
				d += " SNI " + r.Target.ServerName
			}
			switch {
			case pass && r.Target.LeafSHA256 != "":
				seen[d] = true
				d += " certificate " + shortHash(r.Target.LeafSHA256)
			case pass || r.Target.LeafSHA256 != "" || seen[d]:
				continue
			}
			seen[d] = true
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// nameDUTs gives every item its DUT's display name, in first-seen order: a
// DUT's own name, or "name [source]" when inputs share a name.
func nameDUTs(items []*item) []string {
	sources := map[string]map[string]bool{}
	for _, it := range items {
		if sources[it.dut] == nil {
			sources[it.dut] = map[string]bool{}
		}
		sources[it.dut][it.source] = true
	}
	var names []string
	seen := map[string]bool{}
	for _, it := range items {
		if len(sources[it.dut]) > 1 {
			it.dut += " [" + it.source + "]"
		}
		it.section.DUT = it.dut
		if !seen[it.dut] {
			seen[it.dut] = true
			names = append(names, it.dut)
		}
	}
	return names
}

// publishedRows builds the published table: one row per profile (first-seen
// order), every DUT's CPS and Gbps, and their ratios to the first DUT's.
func publishedRows(items []*item, duts []string) []tableRow {
	var rows []tableRow
	index := map[string]int{}
	for _, it := range items {
		i, ok := index[it.protocol+"|"+it.profile]
		if !ok {
			i = len(rows)
			index[it.protocol+"|"+it.profile] = i
			row := tableRow{Protocol: it.protocol, Profile: it.profile, Results: make([]result, len(duts))}
			for d, name := range duts {
				row.Results[d] = result{DUT: name, Consistent: true}
			}
			rows = append(rows, row)
		}
		row := &rows[i]
		if row.Cipher == "" {
			row.Cipher, row.Group = it.cipher, it.group
		}
		res := &row.Results[slices.Index(duts, it.dut)]
		v, _, runs, unsupported, f := res.test(it.engine)
		*v, *runs, *unsupported, *f = it.value, it.runs, it.unsupported, it.facts
		if it.engine == vocab.EngineCPS {
			res.CPSFootnote = it.footnote
		}
		res.Consistent = res.Consistent && it.consistent
		if it.note != "" {
			res.Note = joinNote(res.Note, it.note)
		}
	}
	for i := range rows {
		first := rows[i].Results[0]
		for d := 1; d < len(duts); d++ {
			res := &rows[i].Results[d]
			res.GbpsRatio = ratio(res.Gbps, first.Gbps)
			res.CPSRatio = ratio(res.CPS, first.CPS)
		}
	}
	return rows
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func ratio(v, base *float64) *float64 {
	if v == nil || base == nil || *base == 0 {
		return nil
	}
	x := *v / *base
	return &x
}

// environments lists the distinct generators of runs, with the span of
// their runs, in the order first seen.
func environments(runs []*metrics.Run) []environment {
	var out []environment
	index := map[string]int{}
	for _, r := range runs {
		e := environment{Tool: r.Tool.Name, Version: r.Tool.Version, GoVersion: r.Tool.GoVersion, Hostname: r.Host.Hostname,
			OS: r.Host.OS, Arch: r.Host.Arch, CPUModel: r.Host.CPUModel, CPUs: r.Host.CPUs}
		k := fmt.Sprint(e)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			e.First, e.Last = r.Started, r.Ended
			out = append(out, e)
		}
		x := &out[i]
		x.Runs++
		if r.Started.Before(x.First) {
			x.First = r.Started
		}
		if r.Ended.After(x.Last) {
			x.Last = r.Ended
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].First.Before(out[j].First) })
	return out
}

// ruleText says what an acceptance rule accepts.
func ruleText(a plan.Accept) string {
	errs := "no error"
	if a.MaxErrors > 0 || a.MaxErrorRate > 0 {
		errs = fmt.Sprintf("at most %d errors or %s of transactions", a.MaxErrors, a.MaxErrorRate)
	}
	resumption := "no resumption"
	if a.SessionReuse {
		resumption = "sessions resumed as asked"
	}
	rule := fmt.Sprintf("complete, a successful transaction, no mismatch, %s, %s, generator CPU at most %s",
		resumption, errs, a.MaxGeneratorCPU)
	rule += fmt.Sprintf(", TCP retransmits at most %s and resets at most %s of transactions (Linux)"+
		", reconnections at most %s of a throughput run's requests", a.RetransmitLimit(), a.ResetLimit(),
		*cmp.Or(a.MaxReconnectShare, new(plan.DefaultMaxReconnectShare)))
	if a.MaxOtherCPU > 0 {
		rule += fmt.Sprintf(", other processes at most %s of the machine", a.MaxOtherCPU)
	}
	if a.MaxSteal > 0 {
		rule += fmt.Sprintf(", CPU steal at most %s", a.MaxSteal)
	}
	return rule + deviceRule(a)
}

// The schema versions of the JSON outputs of report and compare (their
// JSON Schemas are in package schemas).
const (
	ReportSchema  = "tlsbench/report/v1"
	CompareSchema = "tlsbench/compare/v1"
)

// name is what the section's headings call its test: the plan test's name,
// else the engine.
func (s *section) name() string {
	if s.Test != "" {
		return s.Test
	}
	name := s.Engine.String() + vocab.OverProtocol(s.Protocol)
	if s.SR != "" {
		return name + " " + s.SR
	}
	return name
}

// splitSuite parts the items of the study's tests from those of named
// tests (an RFC 9411 suite's), which are published apart with their verdicts.
func splitSuite(items []*item, tests []rfcTest) (study []*item, suite []suiteResult) {
	for _, it := range items {
		if it.section.Test == "" {
			study = append(study, it)
			continue
		}
		suite = append(suite, suiteResult{DUT: it.dut, Protocol: it.protocol, Test: it.section.Test, Profile: it.profile,
			Cipher: it.cipher, Value: it.value, Unit: it.section.Unit, Runs: it.runs, Note: it.note, Bound: it.bound,
			Verdict: verdictOf(tests, it.section.Test, it.dut, it.profile)})
	}
	return study, suite
}
