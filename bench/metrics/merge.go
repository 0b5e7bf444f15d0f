package metrics

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Merge merges the records of the agents of one distributed run (each ran a
// shard of the load from an agreed start) into one record of the same
// schema, which reports, comparisons and the method read like any other.
// Nothing is averaged that cannot be: latency histograms, per-second
// histograms and counters are summed exactly, and every percentile is
// recomputed from the merged histograms.
//
// The records must agree on Engine, Protocol, Profile, the DUT's identity (Target's
// DUT name, dialled Address and LeafSHA256, when both records have one:
// else an *IdentityError), Negotiated (every field), Load.Mode and the list
// of server names (Names: each name's counts are summed); their
// agents' steady windows must all share at least minWindowOverlapPct
// percent of the shortest (else a *WindowError); and their agents must be
// distinct: all with a shard identity (Agent, --shard) of the same shard
// count and distinct indexes, or all without one (then distinct by host and
// start). A merged record given again contributes its Agents (merges nest);
// giving one of its agents again is a duplicate.
//
// Rates: each agent measured over its own steady window, so the merged CPS,
// RPS, Gbps and WireGbps are the sums of the agents' own rates, and
// DurationS is the mean of their windows; Transactions ÷ DurationS need not
// equal the merged CPS. Started is the earliest start, Ended the latest end,
// SteadyStartS the mean of the agents' absolute steady starts relative to
// Started, Complete that of all. The series is aligned on absolute seconds
// (mergeSeries). Tool, Target, Config, ProfileSpec and WarmupS are those of
// the first agent (the lowest shard, or the first record given); hosts,
// clients and noise merge as mergeHosts, mergeClients and mergeNoise say.
// The result's Agent is nil and its Agents lists every agent, by shard.
func Merge(runs []*Run) (*Run, error) {
	ins, err := mergeInputs(runs)
	if err != nil {
		return nil, err
	}
	if err := checkAgreement(ins); err != nil {
		return nil, err
	}
	if err := checkWindows(ins); err != nil {
		return nil, err
	}
	ref := ins[0].r
	m := &Run{
		Schema: Schema, Engine: ref.Engine, Profile: ref.Profile, ProfileSpec: slices.Clone(ref.ProfileSpec),
		Target: ref.Target, Config: slices.Clone(ref.Config), Tool: ref.Tool, Negotiated: ref.Negotiated,
		HTTP2: ref.HTTP2, Transport: ref.Transport, Protocol: ref.Protocol,
		Started: ref.Started, Ended: ref.Ended, Complete: true, WarmupS: ref.WarmupS,
		Load:   Load{Mode: ref.Load.Mode},
		Errors: Errors{ByClass: map[vocab.Class]int64{}, Examples: map[vocab.Class]string{}},
	}
	for _, in := range ins {
		m.Target.LeafSHA256 = cmp.Or(m.Target.LeafSHA256, in.r.Target.LeafSHA256) // the first agent that saw one
		if in.r.Started.Before(m.Started) {
			m.Started = in.r.Started
		}
		if in.r.Ended.After(m.Ended) {
			m.Ended = in.r.Ended
		}
	}
	var agents []AgentRun
	var weight, duration, steady float64
	for _, in := range ins {
		r := in.r
		agents = append(agents, in.agents...)
		// A merged record stands for its agents' windows: it counts as
		// many times as it has agents in the means.
		k := float64(len(in.agents))
		weight += k
		duration += k * r.DurationS
		steady += k * (r.Started.Sub(m.Started).Seconds() + r.SteadyStartS)
		m.Complete = m.Complete && r.Complete
		m.addCounts(r)
		m.addRates(r)
		m.addResumption(r)
		prefix := in.agents[0].Name + ": "
		if in.merged {
			prefix = "" // its examples already name their agents
		}
		m.addErrors(r.Errors, prefix)
	}
	m.DurationS = duration / weight
	m.SteadyStartS = steady / weight
	if err = m.mergeLatency(ins); err != nil {
		return nil, err
	}
	m.SetLoadMarks()
	if m.Series, err = mergeSeries(ins, m.Started); err != nil {
		return nil, err
	}
	m.Timeline = mergeTimeline(ins)
	sort.SliceStable(agents, func(i, j int) bool { return agents[i].Shard < agents[j].Shard })
	if agents[0].Shards == 0 {
		for i := range agents {
			agents[i].Shard = i // no identity: the order the records were given
		}
	}
	m.Agents = agents
	m.Host = mergeHosts(agents)
	m.Client = mergeClients(agents, m.Whole.Transactions)
	m.Noise = mergeNoise(agents)
	if m.Noise == nil && agents[0].NoiseUnmeasured != "" {
		// No agent measured noise: why the first did not, named.
		m.NoiseUnmeasured = agents[0].Label() + ": " + agents[0].NoiseUnmeasured
	}
	if m.TCP, err = mergeTCP(ins); err != nil {
		return nil, err
	}
	m.QUIC = mergeQUIC(ins)
	return m, nil
}

// mergeInput is one record given to Merge and the agents it stands for.
type mergeInput struct {
	r      *Run
	agents []AgentRun
	merged bool // r is a merged record: agents are its Agents
}

// label names the input's agents in messages.
func (in *mergeInput) label() string {
	if !in.merged {
		return in.agents[0].Label()
	}
	var names []string
	for _, a := range in.agents {
		names = append(names, strings.TrimPrefix(a.Label(), "agent "))
	}
	return "agents " + strings.Join(names, " + ")
}

// Label names the agent in messages: "agent b (shard 1/4)".
func (a *Agent) Label() string {
	if a.Shards == 0 {
		return "agent " + a.Name
	}
	return fmt.Sprintf("agent %s (shard %d/%d)", a.Name, a.Shard, a.Shards)
}

// mergeInputs finds the agents of each record, checks that they are
// distinct shards of one run, and orders the records by shard.
func mergeInputs(runs []*Run) ([]*mergeInput, error) {
	if len(runs) == 0 {
		return nil, errors.New("metrics: no record to merge")
	}
	var ins []*mergeInput
	var all []AgentRun
	for i, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("metrics: record %d is nil", i)
		}
		in := &mergeInput{r: r, merged: len(r.Agents) > 0}
		if in.merged {
			in.agents = slices.Clone(r.Agents)
		} else {
			a := AgentRun{
				Host: r.Host, Client: r.Client, Noise: r.Noise, NoiseUnmeasured: r.NoiseUnmeasured,
				Started: r.Started, Ended: r.Ended, Complete: r.Complete,
				Transactions: r.Transactions, Errors: r.Errors.Total, SteadyStartS: r.SteadyStartS, DurationS: r.DurationS,
			}
			if r.Agent != nil {
				a.Agent = *r.Agent
			} else {
				// No identity (Shards 0): the host and the start name it.
				a.Name = r.Host.Hostname + "@" + r.Started.UTC().Format("2006-01-02T15:04:05.000Z")
			}
			in.agents = []AgentRun{a}
		}
		ins = append(ins, in)
		all = append(all, in.agents...)
	}
	if err := checkAgents(all); err != nil {
		return nil, err
	}
	if all[0].Shards > 0 {
		sort.SliceStable(ins, func(i, j int) bool { return ins[i].agents[0].Shard < ins[j].agents[0].Shard })
	}
	return ins, nil
}

// UnshardedError is Merge's error when some records are shards of a run
// and one, Without, is not (it ran alone); With is a shard.
type UnshardedError struct {
	With, Without string // the records' labels
}

func (e *UnshardedError) Error() string {
	return fmt.Sprintf("metrics: cannot merge: %s has a shard identity, %s none (it ran as no shard of a run)",
		e.With, e.Without)
}

// checkAgents checks that the agents are distinct shards of one run.
func checkAgents(all []AgentRun) error {
	first := &all[0].Agent
	seen := map[string]*Agent{}
	for i := range all {
		a := &all[i].Agent
		switch {
		case (a.Shards > 0) != (first.Shards > 0):
			with, without := a, first
			if a.Shards == 0 {
				with, without = first, a
			}
			return &UnshardedError{With: with.Label(), Without: without.Label()}
		case a.Shards != first.Shards:
			return fmt.Errorf("metrics: cannot merge: %s is one of %d shards, %s one of %d",
				a.Label(), a.Shards, first.Label(), first.Shards)
		case a.Shards > 0 && (a.Shard < 0 || a.Shard >= a.Shards):
			return fmt.Errorf("metrics: cannot merge: %s: no such shard", a.Label())
		}
		key := a.Name
		if a.Shards > 0 {
			key = fmt.Sprint(a.Shard)
		}
		if b, ok := seen[key]; ok {
			if b.Name == a.Name {
				return fmt.Errorf("metrics: cannot merge: %s is given twice", a.Label())
			}
			return fmt.Errorf("metrics: cannot merge: %s and %s are both shard %d/%d", b.Label(), a.Label(), a.Shard, a.Shards)
		}
		seen[key] = a
	}
	return nil
}

// checkAgreement checks that the records measured the same thing the same
// way; the error names the first record that differs and the first record.
func checkAgreement(ins []*mergeInput) error {
	ref := ins[0]
	for _, in := range ins[1:] {
		a, b := in.r, ref.r
		field, ida, idb := identityDiff(a.Target, b.Target)
		var what, va, vb string
		switch {
		case a.Engine != b.Engine:
			what, va, vb = "ran engine", a.Engine.String(), b.Engine.String()
		case a.ProtocolName() != b.ProtocolName():
			what, va, vb = "spoke", a.ProtocolName(), b.ProtocolName()
		case a.Profile != b.Profile:
			what, va, vb = "ran profile", a.Profile, b.Profile
		case field != "":
			return &IdentityError{A: in.label(), B: ref.label(), Field: field, ValueA: ida, ValueB: idb}
		case a.Negotiated != b.Negotiated:
			what = "negotiated"
			va, vb = negotiatedDiff(a.Negotiated, b.Negotiated)
		case a.Load.Mode != b.Load.Mode:
			what, va, vb = "applied load in", a.Load.Mode+" loop", b.Load.Mode+" loop"
		case !sameNames(a.Names, b.Names):
			what, va, vb = "spread its connections over", nameList(a.Names), nameList(b.Names)
		case !sameTimeline(a.Timeline, b.Timeline):
			what, va, vb = "ran the timeline", a.Timeline.String(), b.Timeline.String()
		default:
			continue
		}
		return fmt.Errorf("metrics: cannot merge: %s %s %s, %s %s",
			in.label(), what, orNothing(va), ref.label(), orNothing(vb))
	}
	return nil
}

// IdentityError is Merge's refusal of records that measured different
// devices: their Target differs in Field ("dut", "address" or
// "leaf_sha256").
type IdentityError struct {
	A, B           string // the agents, as "agent b (shard 1/4)"
	Field          string
	ValueA, ValueB string
}

func (e *IdentityError) Error() string {
	what := map[string]string{
		"dut":         "DUT",
		"address":     "dialled address",
		"leaf_sha256": "leaf certificate (SHA-256)",
	}[e.Field]
	return fmt.Sprintf("metrics: cannot merge: %s measured %s %s, %s %s: not one device",
		e.A, what, orNothing(e.ValueA), e.B, orNothing(e.ValueB))
}

// identityDiff returns the first field of the device's identity in which
// a and b differ, and their values: the DUT name, the address dialled, the
// leaf certificate (when both have one: an agent with no verified
// connection saw none); "" when they agree.
func identityDiff(a, b Target) (field, va, vb string) {
	switch {
	case a.DUT != b.DUT:
		return "dut", a.DUT, b.DUT
	case a.Address != b.Address:
		return "address", a.Address, b.Address
	case a.LeafSHA256 != "" && b.LeafSHA256 != "" && a.LeafSHA256 != b.LeafSHA256:
		return "leaf_sha256", a.LeafSHA256, b.LeafSHA256
	}
	return "", "", ""
}

// minWindowOverlapPct is how much of the shortest steady window, in
// percent, the agents' windows must all share for Merge: agents that
// measured at different times did not load the device together, and their
// rates do not add up.
const minWindowOverlapPct = 90

// agentWindow is an agent's steady window, in absolute time.
type agentWindow struct {
	Agent      string // as "agent b (shard 1/4)"
	Start, End time.Time
}

func (w agentWindow) String() string {
	const f = "2006-01-02T15:04:05.000Z07:00"
	return fmt.Sprintf("%s (%s–%s)", w.Agent, w.Start.UTC().Format(f), w.End.UTC().Format(f))
}

// WindowError is Merge's refusal of agents whose steady windows do not
// overlap by MinWindowOverlapPct percent of the shortest: Late is the window that
// starts last, Early the one that ends first.
type WindowError struct {
	Late, Early agentWindow
	// Overlap is what all the windows share (negative: a gap), Shortest
	// the shortest window's length.
	Overlap, Shortest time.Duration
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("metrics: cannot merge: steady windows of %s and %s overlap by %.3f s, "+
		"less than %d%% of the shortest window (%.3f s): the agents did not measure at the same time",
		e.Early, e.Late, e.Overlap.Seconds(), minWindowOverlapPct, e.Shortest.Seconds())
}

// checkWindows checks that the agents' steady windows share at least
// MinWindowOverlapPct percent of the shortest of them.
func checkWindows(ins []*mergeInput) error {
	var late, early agentWindow
	var shortest time.Duration = -1
	for _, in := range ins {
		for i := range in.agents {
			a := &in.agents[i]
			start := a.Started.Add(time.Duration(a.SteadyStartS * float64(time.Second)))
			w := agentWindow{Agent: a.Label(), Start: start, End: start.Add(time.Duration(a.DurationS * float64(time.Second)))}
			if late.Agent == "" || w.Start.After(late.Start) {
				late = w
			}
			if early.Agent == "" || w.End.Before(early.End) {
				early = w
			}
			if d := w.End.Sub(w.Start); shortest < 0 || d < shortest {
				shortest = d
			}
		}
	}
	overlap := early.End.Sub(late.Start)
	if overlap*100 >= shortest*minWindowOverlapPct {
		return nil
	}
	return &WindowError{Late: late, Early: early, Overlap: overlap, Shortest: shortest}
}

// negotiatedDiff returns the first field in which a and b differ.
func negotiatedDiff(a, b Negotiated) (string, string) {
	for _, f := range [][2]string{
		{a.Version, b.Version}, {a.CipherSuite, b.CipherSuite}, {a.OpenSSL, b.OpenSSL},
		{a.Group, b.Group}, {a.CertKey, b.CertKey},
	} {
		if f[0] != f[1] {
			return f[0], f[1]
		}
	}
	pinned := map[bool]string{true: "a pinned suite", false: "an observed suite"}
	return pinned[a.SuitePinned], pinned[b.SuitePinned]
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// addCounts adds r's counters to m's.
func (m *Run) addCounts(r *Run) {
	m.Transactions += r.Transactions
	m.ConnectionsOpened += r.ConnectionsOpened
	m.Resumed += r.Resumed
	m.Handshakes += r.Handshakes
	m.OutOfRange += r.OutOfRange
	m.Bytes.merge(r.Bytes)
	m.Names = m.Names.add(r.Names)
	m.Whole.Transactions += r.Whole.Transactions
	m.Whole.Errors += r.Whole.Errors
	m.Whole.ConnectionsOpened += r.Whole.ConnectionsOpened
	m.Whole.Resumed += r.Whole.Resumed
	l := &m.Load
	l.Concurrency += r.Load.Concurrency
	l.Rate += r.Load.Rate
	l.Late += r.Load.Late
	l.Dropped += r.Load.Dropped
	l.Scheduled += r.Load.Scheduled
	if r.Closes != nil {
		if m.Closes == nil {
			m.Closes = &Closes{}
		}
		m.Closes.ServerFirst += r.Closes.ServerFirst
		m.Closes.ClientFirst += r.Closes.ClientFirst
		m.Closes.NoCloseNotify += r.Closes.NoCloseNotify
		m.Closes.FirstByteMerged += r.Closes.FirstByteMerged
	}
	l.Sources += r.Load.Sources
	l.PreOpened += r.Load.PreOpened
	l.PreOpenFailed += r.Load.PreOpenFailed
	l.ConnectionsHeld = addCount(l.ConnectionsHeld, r.Load.ConnectionsHeld)
	l.ConnectionsHeldPeak = addCount(l.ConnectionsHeldPeak, r.Load.ConnectionsHeldPeak)
	l.Attempts += r.Load.Attempts
	l.Backoffs += r.Load.Backoffs
	l.Abandoned += r.Load.Abandoned
	l.Aborted = cmp.Or(l.Aborted, r.Load.Aborted)
	if p := r.Preflight; p != nil {
		if m.Preflight == nil {
			m.Preflight = &Preflight{OK: true}
		}
		q := m.Preflight
		if !p.OK && q.OK {
			q.OK, q.Class, q.Error = false, p.Class, p.Error
		}
		q.DurationUS = max(q.DurationUS, p.DurationUS)
		q.Transactions += p.Transactions
		q.Handshakes += p.Handshakes
		q.Resumed += p.Resumed
		q.FailedAttempts = append(q.FailedAttempts, p.FailedAttempts...)
		q.Requests += p.Requests
		q.BodySize = cmp.Or(q.BodySize, p.BodySize)
		q.Server = cmp.Or(q.Server, p.Server)
	}
}

// addCount adds counts where -1 means "not counted": unknown if either is.
func addCount(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// addRates adds r's own rates to m's.
func (m *Run) addRates(r *Run) {
	if r.CPS != nil {
		m.CPS = new(Value(m.CPS) + *r.CPS)
	}
	if r.HasThroughput() {
		m.Requests = new(Value(m.Requests) + Value(r.Requests))
		m.RPS = new(Value(m.RPS) + Value(r.RPS))
		m.Gbps = new(Value(m.Gbps) + Value(r.Gbps))
		m.WireGbps = new(Value(m.WireGbps) + Value(r.WireGbps))
	}
	if r.Reconnects != nil {
		m.Reconnects = new(Value(m.Reconnects) + *r.Reconnects)
	}
}

// addErrors adds e's counts to m's and keeps the first example of each
// class, prefixed.
func (m *Run) addErrors(e Errors, prefix string) {
	m.Errors.Total += e.Total
	addClasses(m.Errors.ByClass, e.ByClass, m.Errors.Examples, e.Examples, prefix)
}

// addClasses adds the counts by class to counts and keeps the first example
// of each class in examples, prefixed.
func addClasses(counts, add map[vocab.Class]int64, examples, first map[vocab.Class]string, prefix string) {
	for c, n := range add {
		counts[c] += n
	}
	for c, ex := range first {
		if _, ok := examples[c]; !ok {
			examples[c] = prefix + ex
		}
	}
}

// mergeHistograms merges each phase's histograms and recomputes its
// percentiles.
func mergeHistograms(ins []*mergeInput) (map[string]Percentiles, map[string]string, error) {
	var names []string
	for _, in := range ins {
		names = slices.AppendSeq(slices.AppendSeq(names, maps.Keys(in.r.Histograms)), maps.Keys(in.r.Latency))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	lat := make(map[string]Percentiles, len(names))
	hists := make(map[string]string, len(names))
	for _, name := range names {
		h := NewHistogram()
		for _, in := range ins {
			enc, ok := in.r.Histograms[name]
			if !ok && in.r.Latency[name].Count > 0 {
				return nil, nil, fmt.Errorf("metrics: %s: the record has %s percentiles but no histogram to merge them from",
					in.label(), name)
			}
			if err := mergeEncoded(h, enc); err != nil {
				return nil, nil, fmt.Errorf("metrics: %s: %s histogram: %w", in.label(), name, err)
			}
		}
		var err error
		if lat[name], hists[name], err = summarizeEncoded(name, h); err != nil {
			return nil, nil, err
		}
	}
	return lat, hists, nil
}

// mergeEncoded adds the encoded histogram enc ("" is empty) to dst, whose
// geometry (the shared one, or the per-second one) it must have: only then
// is the merge exact.
func mergeEncoded(dst *hdr.Histogram, enc string) error {
	if enc == "" {
		return nil
	}
	h, err := hdr.Decode([]byte(enc))
	if err != nil {
		return err
	}
	figs := dst.SignificantFigures()
	kind := "shared"
	if figs == secondSigFigs {
		kind = "per-second"
	}
	if h.LowestTrackableValue() != Lowest || h.HighestTrackableValue() != Highest || h.SignificantFigures() != figs {
		return fmt.Errorf("geometry %d–%d µs, %d significant figures, not the %s %d–%d µs, %d",
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), kind, Lowest, Highest, figs)
	}
	if dropped := dst.Merge(h); dropped > 0 {
		return fmt.Errorf("%d values out of range", dropped)
	}
	return nil
}

// mergeSeries sums the records' seconds of the same absolute second and
// recomputes their percentiles from the seconds' histograms. Every count of
// the agents' seconds is in exactly one merged second, so the merged
// seconds' steady counts sum to the merged transactions and errors as each
// agent's did; a merged second is partial when one of its parts is. T
// counts from started; the percentiles are left 0 when an agent's record
// predates the per-second histograms.
func mergeSeries(ins []*mergeInput, started time.Time) ([]Second, error) {
	type part struct {
		in *mergeInput
		s  *Second
	}
	bySecond := map[int64][]part{}
	for _, in := range ins {
		for i := range in.r.Series {
			s := &in.r.Series[i]
			bySecond[s.Unix] = append(bySecond[s.Unix], part{in, s})
		}
	}
	if len(bySecond) == 0 {
		return nil, nil
	}
	seconds := slices.Sorted(maps.Keys(bySecond))
	out := make([]Second, 0, len(seconds))
	hs, total := newSecondHistogram(), newSecondHistogram()
	for _, u := range seconds {
		hs.Reset()
		total.Reset()
		m := Second{T: int(u - started.Unix()), Unix: u}
		var sum float64 // of the successes' total latency, µs
		known := true   // every part has its histograms
		for _, p := range bySecond[u] {
			s := p.s
			m.addCounts(s)
			m.Partial = m.Partial || s.Partial // some agent's second ended early
			m.OpenConns += s.OpenConns
			m.OpenConnsMean += s.OpenConnsMean
			m.Phase = cmp.Or(m.Phase, s.Phase) // the agents share the timeline
			sum += s.TotalMean * float64(s.Transactions)
			if s.Transactions > 0 && s.TotalHist == "" {
				known = false // a record older than the per-second histograms
			}
			for _, h := range []struct {
				name, enc string
				dst       *hdr.Histogram
			}{{vocab.PhaseHandshake.String(), s.HandshakeHist, hs}, {vocab.PhaseTotal.String(), s.TotalHist, total}} {
				if err := mergeSecond(h.dst, h.enc); err != nil {
					return nil, fmt.Errorf("metrics: %s: second %d: %s histogram: %w", p.in.label(), u, h.name, err)
				}
			}
		}
		m.TotalMean = divide(sum, float64(m.Transactions))
		if known {
			m.setPercentiles(hs, total)
		}
		out = append(out, m)
	}
	return out, nil
}

// mergeHosts describes the agents' hosts as one: the first's OS and
// architecture, the CPUs of the distinct hosts summed (agents that shared a
// machine shared its CPUs), the host names and CPU models listed.
func mergeHosts(agents []AgentRun) Host {
	h := Host{OS: agents[0].Host.OS, Arch: agents[0].Host.Arch}
	var names, models []string
	for _, a := range agents {
		if a.Host.Hostname == "" || !slices.Contains(names, a.Host.Hostname) {
			h.CPUs += a.Host.CPUs
		}
		names = appendDistinct(names, a.Host.Hostname)
		models = appendDistinct(models, a.Host.CPUModel)
	}
	h.Hostname = clip(strings.Join(names, ","), 200)
	h.CPUModel = clip(strings.Join(models, "; "), 200)
	return h
}

func appendDistinct(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// mergeClients sums the agents' resource use. Utilization is the CPU used
// over the CPU the agents had (Σ cpu ÷ Σ cpu/utilization, over the agents
// that report one); the cost per transaction is over wholeTxns, the whole
// runs' transactions.
func mergeClients(agents []AgentRun, wholeTxns int64) Client {
	var c Client
	var busy, capacity float64
	for _, a := range agents {
		x := a.Client
		c.CPUSeconds += x.CPUSeconds
		c.UserS += x.UserS
		c.SysS += x.SysS
		c.Cores += x.Cores
		c.MaxRSSBytes = max(c.MaxRSSBytes, x.MaxRSSBytes)
		c.IncludesTarget = c.IncludesTarget || x.IncludesTarget
		c.GeneratorBound = c.GeneratorBound || x.GeneratorBound
		if x.Utilization > 0 {
			busy += x.CPUSeconds
			capacity += x.CPUSeconds / x.Utilization
		}
	}
	c.Utilization = divide(busy, capacity)
	c.CPUPerTxnUS = divide(c.CPUSeconds*1e6, float64(wholeTxns))
	return c
}

// mergeNoise is the machine noise of a distributed run: per host first,
// then the most disturbed host. Agents on one host (same host name; an
// unnamed host is its own) measured the same machine over the same agreed
// window, and each counted its sibling agents' generator CPU as other: a
// host's other cores are, per agent, its other cores less its siblings'
// generator cores (at least 0), averaged over the host's agents; its steal
// share, DUT cores and window are the agents' means, its generator cores
// their sum. Hosts are not summed (a share is of one machine): the result
// is the host with the highest other share, with the highest steal share
// of any host. Nil when no agent measured noise.
func mergeNoise(agents []AgentRun) *Noise {
	var order []string
	hosts := map[string][]*Noise{}
	for i, a := range agents {
		if a.Noise == nil {
			continue
		}
		key := a.Host.Hostname
		if key == "" {
			key = fmt.Sprintf("\x00%d", i)
		}
		if hosts[key] == nil {
			order = append(order, key)
		}
		hosts[key] = append(hosts[key], a.Noise)
	}
	var worst *Noise
	steal := 0.0
	for _, key := range order {
		ns := hosts[key]
		k := float64(len(ns))
		h := &Noise{CPUs: ns[0].CPUs}
		var generators, dut float64
		duts := 0
		for _, n := range ns {
			generators += n.GeneratorCores
		}
		for _, n := range ns {
			h.WindowS += n.WindowS / k
			h.StealShare += n.StealShare / k
			h.OtherCores += max(n.OtherCores-(generators-n.GeneratorCores), 0) / k
			if n.DUTCores != nil {
				dut += *n.DUTCores
				duts++
				h.DUTProcesses, h.DUTCPUs = max(h.DUTProcesses, n.DUTProcesses), max(h.DUTCPUs, n.DUTCPUs)
			}
		}
		h.GeneratorCores = generators
		if duts > 0 {
			d := dut / float64(duts)
			h.DUTCores = &d
		}
		if h.CPUs > 0 {
			h.OtherShare = min(h.OtherCores/float64(h.CPUs), 1)
		}
		steal = max(steal, h.StealShare)
		if worst == nil || h.OtherShare > worst.OtherShare {
			worst = h
		}
	}
	if worst != nil {
		worst.StealShare = steal
	}
	return worst
}
