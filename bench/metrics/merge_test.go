package metrics_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/metricstest"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// A played run: playSeconds seconds of seeded samples, the first
// playWarmup of them warm-up, recorded by one recorder and, split
// round-robin, by playAgents agents' recorders.
const (
	playSeconds = 12
	playWarmup  = 2
	playAgents  = 4
)

var playNegotiated = metrics.Negotiated{Version: "TLS 1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
	OpenSSL: "ECDHE-ECDSA-AES128-SHA256", Group: "secp256r1", CertKey: "ECDSA P-256", SuitePinned: true}

// playCache holds play's runs, which Merge only reads (tests edit copies).
var playCache = map[[playAgents]int][]*metrics.Run{}

// play records the samples of every second into one recorder and, sample i
// of a second into agent i mod playAgents, into the agents' recorders;
// shift[a] delays agent a by whole seconds (its start, its seconds). Every
// recorder ticks at each absolute second it is running. It returns the one
// recorder's run and the agents'.
func play(t *testing.T, shift [playAgents]int) (*metrics.Run, []*metrics.Run) {
	t.Helper()
	if runs, ok := playCache[shift]; ok {
		return runs[0], slices.Clone(runs[1:])
	}
	rng := rand.New(rand.NewPCG(7, 11))
	maxShift := 0
	for _, s := range shift {
		maxShift = max(maxShift, s)
	}
	type played struct {
		agent int
		s     *metrics.Sample
	}
	schedule := make([][]played, playSeconds+maxShift)
	for sec := range playSeconds {
		for i := range 200 + rng.IntN(200) {
			a := i % playAgents
			schedule[sec+shift[a]] = append(schedule[sec+shift[a]], played{a, metricstest.PlayedSample(rng, sec >= playWarmup)})
		}
	}
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	one := metrics.NewRecorder(3, t0)
	var recs [playAgents]*metrics.Recorder
	var series [playAgents][]metrics.Second
	for a := range recs {
		recs[a] = metrics.NewRecorder(2, at(shift[a]))
	}
	var oneSeries []metrics.Second
	for sec, ps := range schedule {
		for i, p := range ps {
			one.Record(i, p.s)
			recs[p.agent].Record(i, p.s)
		}
		oneSeries = append(oneSeries, one.Tick(at(sec+1)))
		for a := range recs {
			if sec >= shift[a] && sec < playSeconds+shift[a] {
				series[a] = append(series[a], recs[a].Tick(at(sec+1)))
			}
		}
	}
	window := (playSeconds - playWarmup) * time.Second
	newRun := func(start time.Time, snap metrics.Snapshot) *metrics.Run {
		r := &metrics.Run{
			Schema: metrics.Schema, Engine: "cps", Profile: "ecdhe-ecdsa-aes128-sha256-p256",
			ProfileSpec: json.RawMessage(`{"name":"ecdhe-ecdsa-aes128-sha256-p256"}`),
			Target:      metrics.Target{URL: "https://dut/1k", Address: "10.0.0.1:443"},
			Tool:        metrics.Tool{Name: "tlsbench", Version: "test"},
			Started:     start, Ended: start.Add(playSeconds*time.Second + 100*time.Millisecond), Complete: true,
			Negotiated: playNegotiated, Load: metrics.Load{Mode: "closed", Concurrency: 4},
			WarmupS: playWarmup, SteadyStartS: playWarmup,
		}
		if err := r.Fill(snap, window); err != nil {
			t.Fatal(err)
		}
		return r
	}
	single := newRun(t0, one.Snapshot())
	single.Series = oneSeries
	var agents []*metrics.Run
	for a := range recs {
		r := newRun(at(shift[a]), recs[a].Snapshot())
		r.Series = series[a]
		r.Host = metrics.Host{Hostname: fmt.Sprintf("gen-%d", a%2), OS: "linux", Arch: "amd64", CPUs: 8}
		cpu := float64(a + 1)
		r.Client = metrics.Client{CPUSeconds: cpu, UserS: cpu * 0.75, SysS: cpu * 0.25, Cores: 8,
			MaxRSSBytes: int64(a+1) << 20, Utilization: 0.1 * float64(a+1), GeneratorBound: a == 2}
		r.Agent = &metrics.Agent{Name: string(rune('a' + a)), Shard: a, Shards: playAgents, StartAt: t0, StartSkewMS: 0.5 * float64(a)}
		r.Noise = playNoise(a)
		agents = append(agents, r)
	}
	playCache[shift] = append([]*metrics.Run{single}, agents...)
	return single, slices.Clone(agents)
}

// playNoise is agent a's machine noise. Agents 0 and 2 share host gen-0,
// whose other processes use 1 core; agents 1 and 3 share gen-1, with 2
// cores of other processes and a DUT process of 0.6 cores. Agent a's
// generator uses a+1 cores, and each agent counts its sibling's generator
// as other.
func playNoise(a int) *metrics.Noise {
	background := []float64{1, 2}[a%2]
	sibling := float64((a+2)%playAgents + 1)
	n := &metrics.Noise{WindowS: 10 + float64(a)/10, CPUs: 8, StealShare: 0.01 * float64(a+1), GeneratorCores: float64(a + 1),
		OtherCores: background + sibling}
	n.OtherShare = n.OtherCores / 8
	if a%2 == 1 {
		d := 0.5 + 0.2*float64(a/2)
		n.DUTCores, n.DUTProcesses = &d, 1
	}
	return n
}

// TestMergeNoise: the merged record's noise is its most disturbed host's
// (gen-1: 2 cores of other processes once each agent's sibling generator
// is taken out, 0.25 of 8 CPUs; generators 2+4 cores; DUT 0.6 cores, the
// agents' mean), with the highest steal share of any host (gen-1's mean,
// 0.03); merging merged records gives the same.
func TestMergeNoise(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	for name, m := range map[string]*metrics.Run{
		"merged": merge(t, agents...), "merged twice": merge(t, merge(t, agents[0], agents[1]), merge(t, agents[2], agents[3])),
	} {
		n := m.Noise
		if n == nil {
			t.Fatalf("%s: no noise", name)
		}
		if !near(n.OtherCores, 2) || !near(n.OtherShare, 0.25) || !near(n.GeneratorCores, 6) || !near(n.StealShare, 0.03) ||
			n.DUTCores == nil || !near(*n.DUTCores, 0.6) || n.DUTProcesses != 1 || n.CPUs != 8 || !near(n.WindowS, 10.2) {
			t.Errorf("%s: noise %+v", name, *n)
		}
		for i, a := range m.Agents {
			if a.Noise == nil || *a.Noise != *agents[i].Noise {
				t.Errorf("%s: agent %d's noise %+v, want %+v", name, i, a.Noise, agents[i].Noise)
			}
		}
	}
	// Without a noise measurement (not Linux), none is made up.
	var quiet []*metrics.Run
	for _, a := range agents {
		c := *a
		c.Noise = nil
		quiet = append(quiet, &c)
	}
	if n := merge(t, quiet...).Noise; n != nil {
		t.Errorf("noise %+v from agents that measured none", *n)
	}
}

func merge(t *testing.T, runs ...*metrics.Run) *metrics.Run {
	t.Helper()
	m, err := metrics.Merge(runs)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// checkSameRecording asserts that got holds exactly what want recorded:
// every histogram, the percentiles and the counters.
func checkSameRecording(t *testing.T, got, want *metrics.Run) {
	t.Helper()
	for p := range vocab.NumTimed {
		name := p.String()
		g, err := got.Histogram(name)
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.Histogram(name)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Equals(w) {
			t.Errorf("%s: merged histogram (%d values) differs from the recorded one (%d)", name, g.TotalCount(), w.TotalCount())
		}
		if got.Latency[name] != want.Latency[name] {
			t.Errorf("%s: latency %+v, want %+v", name, got.Latency[name], want.Latency[name])
		}
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"Transactions", got.Transactions, want.Transactions},
		{"ConnectionsOpened", got.ConnectionsOpened, want.ConnectionsOpened},
		{"Resumed", got.Resumed, want.Resumed},
		{"Handshakes", got.Handshakes, want.Handshakes},
		{"Errors.Total", got.Errors.Total, want.Errors.Total},
		{"Errors.ByClass", got.Errors.ByClass, want.Errors.ByClass},
		{"Bytes", got.Bytes, want.Bytes},
		{"Whole", got.Whole, want.Whole},
		{"OutOfRange", got.OutOfRange, want.OutOfRange},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if want.OutOfRange == 0 || want.Errors.Total == 0 || want.Transactions == 0 {
		t.Fatalf("the played run lacks out-of-range values, errors or successes: %d, %d, %d", want.OutOfRange, want.Errors.Total, want.Transactions)
	}
}

// checkSeries asserts that got is want second by second: the counts, the
// percentiles and the histograms exactly, the mean to rounding.
func checkSeries(t *testing.T, got, want []metrics.Second) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d seconds, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !near(g.TotalMean, w.TotalMean) {
			t.Errorf("second %d: mean %v, want %v", w.Unix, g.TotalMean, w.TotalMean)
		}
		for _, h := range [][2]string{{g.HandshakeHist, w.HandshakeHist}, {g.TotalHist, w.TotalHist}} {
			if (h[0] == "") != (h[1] == "") {
				t.Errorf("second %d: histogram %q, want %q", w.Unix, h[0], h[1])
				continue
			}
			if h[1] != "" && !decodeSecond(t, h[0]).Equals(decodeSecond(t, h[1])) {
				t.Errorf("second %d: histograms differ", w.Unix)
			}
		}
		g.TotalMean, g.HandshakeHist, g.TotalHist = 0, "", ""
		w.TotalMean, w.HandshakeHist, w.TotalHist = 0, "", ""
		if g != w {
			t.Errorf("second %d: %+v, want %+v", w.Unix, g, w)
		}
	}
}

func decodeSecond(t *testing.T, enc string) *hdr.Histogram {
	t.Helper()
	h, err := metrics.DecodeSecondHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMergeExact: four agents' shares of a run merge into exactly what one
// recorder recorded of all of it.
func TestMergeExact(t *testing.T) {
	single, agents := play(t, [playAgents]int{})
	var before []string
	for _, r := range agents {
		before = append(before, marshal(t, r))
	}
	m := merge(t, agents...)
	for i, r := range agents {
		if marshal(t, r) != before[i] {
			t.Errorf("Merge changed its input %d", i)
		}
	}
	checkSameRecording(t, m, single)
	checkSeries(t, m.Series, single.Series)
	if len(single.Series) != playSeconds || single.Series[3].HandshakeHist == "" || single.Series[3].TotalP99 == 0 {
		t.Fatalf("the single recorder's series lacks per-second histograms: %+v", single.Series)
	}

	var cps, cpu, capacity float64
	for _, r := range agents {
		cps += *r.CPS
		cpu += r.Client.CPUSeconds
		capacity += r.Client.CPUSeconds / r.Client.Utilization
	}
	// The sum of the agents' own rates; here their windows are one, so it
	// is also the one recorder's.
	if !near(*m.CPS, cps) || !near(*m.CPS, *single.CPS) {
		t.Errorf("CPS %v, want Σ %v (one recorder %v)", *m.CPS, cps, *single.CPS)
	}
	want := metrics.Client{CPUSeconds: 10, UserS: 7.5, SysS: 2.5, Cores: 32, MaxRSSBytes: 4 << 20,
		Utilization: cpu / capacity, CPUPerTxnUS: 10e6 / float64(single.Whole.Transactions), GeneratorBound: true}
	if got := m.Client; !near(got.Utilization, want.Utilization) || !near(got.CPUPerTxnUS, want.CPUPerTxnUS) {
		t.Errorf("Client %+v, want %+v", got, want)
	} else if got.Utilization, got.CPUPerTxnUS = want.Utilization, want.CPUPerTxnUS; got != want {
		t.Errorf("Client %+v, want %+v", got, want)
	}
	// Four agents on two hosts of 8 CPUs.
	if want := (metrics.Host{Hostname: "gen-0,gen-1", OS: "linux", Arch: "amd64", CPUs: 16}); m.Host != want {
		t.Errorf("Host %+v, want %+v", m.Host, want)
	}
	if m.Load != (metrics.Load{Mode: "closed", Concurrency: 16}) {
		t.Errorf("Load %+v", m.Load)
	}
	if !m.Started.Equal(t0) || !m.Ended.Equal(agents[0].Ended) || m.DurationS != single.DurationS || m.SteadyStartS != playWarmup || !m.Complete {
		t.Errorf("Started %v Ended %v DurationS %v SteadyStartS %v Complete %v", m.Started, m.Ended, m.DurationS, m.SteadyStartS, m.Complete)
	}
	for c, ex := range m.Errors.Examples {
		if name, _, ok := strings.Cut(ex, ": "); !ok || len(name) != 1 {
			t.Errorf("example of %s does not name its agent: %q", c, ex)
		}
	}
	if len(m.Errors.Examples) != 2 {
		t.Errorf("examples %v, want one per class", m.Errors.Examples)
	}
	if m.Agent != nil || len(m.Agents) != playAgents {
		t.Fatalf("Agent %v, %d agents", m.Agent, len(m.Agents))
	}
	for i, a := range m.Agents {
		r := agents[i]
		want := metrics.AgentRun{Agent: *r.Agent, Host: r.Host, Client: r.Client, Noise: r.Noise, Started: r.Started, Ended: r.Ended,
			Complete: true, Transactions: r.Transactions, Errors: r.Errors.Total, SteadyStartS: r.SteadyStartS, DurationS: r.DurationS}
		if !reflect.DeepEqual(a, want) {
			t.Errorf("agent %d: %+v, want %+v", i, a, want)
		}
	}

	// The order the records are given in does not matter.
	again := merge(t, agents[2], agents[0], agents[3], agents[1])
	if a, b := marshal(t, again), marshal(t, m); a != b {
		t.Error("merging in another order gives another record")
	}
}

func marshal(t *testing.T, r *metrics.Run) string {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMergeShiftedSeries: an agent whose seconds are one later than the
// others' is aligned on absolute seconds.
func TestMergeShiftedSeries(t *testing.T) {
	single, agents := play(t, [playAgents]int{0, 0, 0, 1})
	if agents[3].Series[0].Unix != agents[0].Series[0].Unix+1 {
		t.Fatalf("agent d is not shifted: %d, %d", agents[3].Series[0].Unix, agents[0].Series[0].Unix)
	}
	m := merge(t, agents...)
	checkSameRecording(t, m, single)
	checkSeries(t, m.Series, single.Series) // one recorder that saw it all as it happened
	if len(m.Series) != playSeconds+1 || m.Series[0].T != 1 || m.Series[playSeconds].T != playSeconds+1 {
		t.Errorf("%d seconds, T from %d", len(m.Series), m.Series[0].T)
	}
	// The mean of the absolute steady starts: three at 2 s, one at 3 s.
	if !m.Started.Equal(t0) || !near(m.SteadyStartS, 2.25) {
		t.Errorf("Started %v, SteadyStartS %v, want %v and 2.25", m.Started, m.SteadyStartS, t0)
	}
}

// TestMergeOldSeries: a record without per-second histograms leaves the
// percentiles of its seconds unknown (0), never invented; counts still sum.
func TestMergeOldSeries(t *testing.T) {
	single, agents := play(t, [playAgents]int{})
	old := *agents[1]
	old.Series = append([]metrics.Second(nil), old.Series...)
	for i := range old.Series {
		old.Series[i].HandshakeHist, old.Series[i].TotalHist = "", ""
	}
	old.Series[0].Transactions, old.Series[0].TotalMean = 0, 0 // a second of errors only stays known
	m := merge(t, agents[0], &old, agents[2], agents[3])
	for i, s := range m.Series {
		w := single.Series[i]
		if i == 0 {
			if s.TotalP99 == 0 || s.TotalHist == "" {
				t.Errorf("second %d: percentiles lost though every agent with successes had histograms", s.T)
			}
			continue
		}
		if s.Transactions != w.Transactions || s.Errors != w.Errors {
			t.Errorf("second %d: %d transactions, %d errors; want %d, %d", s.T, s.Transactions, s.Errors, w.Transactions, w.Errors)
		}
		if s.TotalP50 != 0 || s.TotalP99 != 0 || s.HandshakeP99 != 0 || s.TotalHist != "" || s.HandshakeHist != "" {
			t.Errorf("second %d: percentiles %v/%v/%v from incomplete histograms", s.T, s.TotalP50, s.TotalP99, s.HandshakeP99)
		}
		if !near(s.TotalMean, w.TotalMean) {
			t.Errorf("second %d: mean %v, want %v", s.T, s.TotalMean, w.TotalMean)
		}
	}
}

// TestMergeOne: one record merges into its own numbers.
func TestMergeOne(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	r := agents[2]
	m := merge(t, r)
	checkSameRecording(t, m, r)
	checkSeries(t, m.Series, r.Series)
	if metrics.Value(m.CPS) != metrics.Value(r.CPS) || m.DurationS != r.DurationS || m.SteadyStartS != r.SteadyStartS || !m.Started.Equal(r.Started) || !m.Ended.Equal(r.Ended) {
		t.Errorf("CPS %v, window %v from %v, %v–%v; want %v, %v from %v, %v–%v", metrics.Value(m.CPS), m.DurationS, m.SteadyStartS, m.Started, m.Ended,
			metrics.Value(r.CPS), r.DurationS, r.SteadyStartS, r.Started, r.Ended)
	}
	if m.Host != r.Host || m.Load != r.Load || m.Negotiated != r.Negotiated || m.Target != r.Target || m.Tool != r.Tool {
		t.Errorf("host, load, negotiated, target or tool changed: %+v", m)
	}
	c := m.Client
	if !near(c.Utilization, r.Client.Utilization) {
		t.Errorf("Utilization %v, want %v", c.Utilization, r.Client.Utilization)
	}
	c.Utilization, c.CPUPerTxnUS = r.Client.Utilization, r.Client.CPUPerTxnUS
	if c != r.Client {
		t.Errorf("Client %+v, want %+v", c, r.Client)
	}
	for c, ex := range m.Errors.Examples {
		if want := "c: " + r.Errors.Examples[c]; ex != want {
			t.Errorf("example %q, want %q", ex, want)
		}
	}
}

// TestMergeRoundTrip: a merged record is a record: it is written and read
// back unchanged, and merged again (alone or nested) to the same numbers.
func TestMergeRoundTrip(t *testing.T) {
	single, agents := play(t, [playAgents]int{})
	m := merge(t, agents...)
	file := filepath.Join(t.TempDir(), "merged.json")
	if err := m.WriteJSON(context.Background(), file, nil, nil); err != nil {
		t.Fatal(err)
	}
	back, err := metrics.ReadRun(file)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := marshal(t, back), marshal(t, m); a != b {
		t.Errorf("read back:\n%s\nwritten:\n%s", a, b)
	}
	again := merge(t, back)
	checkSameRecording(t, again, single)
	if !reflect.DeepEqual(again.Agents, back.Agents) || *again.CPS != *m.CPS || again.Errors.Examples["timeout"] != m.Errors.Examples["timeout"] {
		t.Errorf("merged alone: agents %+v, CPS %v, examples %v", again.Agents, *again.CPS, again.Errors.Examples)
	}

	// Nested: (a+b) + (c+d) is a+b+c+d.
	nested := merge(t, merge(t, agents[0], agents[1]), merge(t, agents[3], agents[2]))
	checkSameRecording(t, nested, single)
	checkSeries(t, nested.Series, m.Series)
	if !reflect.DeepEqual(nested.Agents, m.Agents) || nested.Host != m.Host {
		t.Errorf("nested agents %+v, host %+v", nested.Agents, nested.Host)
	}
	if !near(*nested.CPS, *m.CPS) || !near(nested.DurationS, m.DurationS) || !near(nested.SteadyStartS, m.SteadyStartS) ||
		!near(nested.Client.Utilization, m.Client.Utilization) {
		t.Errorf("nested CPS %v window %v from %v utilization %v; flat %v, %v, %v, %v", *nested.CPS, nested.DurationS, nested.SteadyStartS,
			nested.Client.Utilization, *m.CPS, m.DurationS, m.SteadyStartS, m.Client.Utilization)
	}
	if !reflect.DeepEqual(nested.Errors.Examples, m.Errors.Examples) {
		t.Errorf("nested examples %v, flat %v", nested.Errors.Examples, m.Errors.Examples)
	}
}

// TestMergeRefuses: records of different measurements, or the same agent
// twice, are not merged, and the error names the agents.
func TestMergeRefuses(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	a, b := agents[0], agents[1]
	edit := func(r *metrics.Run, f func(*metrics.Run)) *metrics.Run {
		c := *r
		id := *r.Agent
		c.Agent = &id
		f(&c)
		return &c
	}
	noHist := edit(b, func(r *metrics.Run) { r.Histograms = nil })
	for _, tc := range []struct {
		name string
		runs []*metrics.Run
		want string
	}{
		{"nothing", nil, "no record"},
		{"profile", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Profile = "rsa2048-aes128-gcm-sha256" })},
			"agent b (shard 1/4) ran profile rsa2048-aes128-gcm-sha256, agent a (shard 0/4) ecdhe-ecdsa-aes128-sha256-p256"},
		{"negotiated", []*metrics.Run{edit(b, func(r *metrics.Run) { r.Negotiated.Group = "secp384r1" }), a},
			"agent b (shard 1/4) negotiated secp384r1, agent a (shard 0/4) secp256r1"},
		{"nothing negotiated", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Negotiated = metrics.Negotiated{} })},
			"agent b (shard 1/4) negotiated nothing, agent a (shard 0/4) TLS 1.2"},
		{"protocol", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Protocol = "http/2" })},
			"agent b (shard 1/4) spoke http/2, agent a (shard 0/4) http/1.1"},
		{"engine", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Engine = "throughput" })},
			"agent b (shard 1/4) ran engine throughput, agent a (shard 0/4) cps"},
		{"load mode", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Load.Mode = "open" })},
			"agent b (shard 1/4) applied load in open loop, agent a (shard 0/4) closed loop"},
		{"duplicate shard", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Agent.Shard = 0 })},
			"agent a (shard 0/4) and agent b (shard 0/4) are both shard 0/4"},
		{"same record twice", []*metrics.Run{a, b, a}, "agent a (shard 0/4) is given twice"},
		{"an agent of a merged record again", []*metrics.Run{merge(t, a, b), b}, "agent b (shard 1/4) is given twice"},
		{"shard counts", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Agent.Shards = 2 })},
			"agent b (shard 1/2) is one of 2 shards, agent a (shard 0/4) one of 4"},
		{"no such shard", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Agent.Shard = 4 })}, "agent b (shard 4/4): no such shard"},
		{"identity and none", []*metrics.Run{a, edit(b, func(r *metrics.Run) { r.Agent = nil })},
			"agent a (shard 0/4) has a shard identity, agent gen-1@2026-03-01T12:00:00.000Z none"},
		{"no histograms", []*metrics.Run{a, noHist}, "agent b (shard 1/4): the record has connect percentiles but no histogram"},
		{"damaged histogram", []*metrics.Run{a, edit(b, func(r *metrics.Run) {
			r.Histograms = maps.Clone(r.Histograms)
			r.Histograms["total"] = "AAAA"
		})},
			"agent b (shard 1/4): total histogram"},
	} {
		_, err := metrics.Merge(tc.runs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeProtocol: a record without a protocol (made before it) is
// HTTP/1.1's, and merges with one that names http/1.1; the merged record
// keeps the first agent's.
func TestMergeProtocol(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	if agents[0].Protocol != "" || agents[0].ProtocolName() != "http/1.1" {
		t.Fatalf("a record without protocol: %q, ProtocolName %q; want \"\", http/1.1", agents[0].Protocol,
			agents[0].ProtocolName())
	}
	for _, proto := range []string{"", "http/2"} { // a record made before protocols, one of HTTP/2
		r := *agents[0]
		r.Protocol = proto
		data, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := metrics.DecodeRun(data); err != nil || got.ProtocolName() != cmp.Or(proto, "http/1.1") ||
			strings.Contains(string(data), `"protocol"`) != (proto != "") {
			t.Errorf("protocol %q: read as %v (%v)", proto, got, err)
		}
	}
	named := *agents[1]
	named.Protocol = "http/1.1"
	m := merge(t, agents[0], &named, agents[2], agents[3])
	if m.ProtocolName() != "http/1.1" {
		t.Errorf("merged protocol %q, want http/1.1", m.ProtocolName())
	}
}

// TestMergeWithoutIdentity: records of no --shard are told apart by host
// and start, numbered in the order given.
func TestMergeWithoutIdentity(t *testing.T) {
	single, agents := play(t, [playAgents]int{})
	var runs []*metrics.Run
	for i, r := range agents {
		c := *r
		c.Agent = nil
		c.Started = c.Started.Add(time.Duration(i) * time.Millisecond)
		runs = append(runs, &c)
	}
	m := merge(t, runs[3], runs[1], runs[0], runs[2])
	checkSameRecording(t, m, single)
	for i, a := range m.Agents {
		if a.Shard != i || a.Shards != 0 || !strings.HasPrefix(a.Name, "gen-") {
			t.Errorf("agent %d: %+v", i, a.Agent)
		}
	}
	if m.Agents[0].Name != "gen-1@2026-03-01T12:00:00.003Z" {
		t.Errorf("first agent %q, want the first record given", m.Agents[0].Name)
	}
}

// TestSeriesHistogramSize measures what the per-second histograms add to the
// record of a 60 s run (go test -v shows it).
func TestSeriesHistogramSize(t *testing.T) {
	for _, rate := range []int{100, 1000} {
		rng := rand.New(rand.NewPCG(3, 5))
		rec := metrics.NewRecorder(4, t0)
		var series []metrics.Second
		for sec := range 60 {
			for i := range rate {
				rec.Record(i, metricstest.PlayedSample(rng, true))
			}
			series = append(series, rec.Tick(t0.Add(time.Duration(sec+1)*time.Second)))
		}
		r := &metrics.Run{Schema: metrics.Schema, Engine: "cps"}
		if err := r.Fill(rec.Snapshot(), time.Minute); err != nil {
			t.Fatal(err)
		}
		r.Series = series
		with := len(marshalIndent(t, r))
		r.Series = slices.Clone(series)
		for i := range r.Series {
			r.Series[i].HandshakeHist, r.Series[i].TotalHist = "", ""
		}
		without := len(marshalIndent(t, r))
		per := float64(with-without) / 60
		t.Logf("60 s at %d/s: %d bytes without per-second histograms, %d with (+%d, %.0f bytes a second)",
			rate, without, with, with-without, per)
		if per <= 0 || per > 1500 {
			t.Errorf("%d/s: per-second histograms take %.0f bytes a second", rate, per)
		}
	}
}

func marshalIndent(t *testing.T, r *metrics.Run) []byte {
	t.Helper()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// BenchmarkTick is the engine's once-a-second bookkeeping, per-second
// histograms encoded, after a second of 2,000 transactions.
func BenchmarkTick(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	samples := make([]*metrics.Sample, 2000)
	for i := range samples {
		samples[i] = metricstest.PlayedSample(rng, true)
	}
	rec := metrics.NewRecorder(8, t0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for j, s := range samples {
			rec.Record(j, s)
		}
		b.StartTimer()
		rec.Tick(t0.Add(time.Duration(i) * time.Second))
	}
}

// BenchmarkEncodeSecond encodes one per-second histogram of 2,000
// transactions: EncodeV2 against hdrhistogram-go's Encode (the same bytes
// before compression).
func BenchmarkEncodeSecond(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	h := hdr.New(metrics.Lowest, metrics.Highest, 2)
	for range 2000 {
		if s := metricstest.PlayedSample(rng, true); s.Class == "" {
			h.RecordValue(min(s.Dur[vocab.PhaseTotal].Microseconds(), metrics.Highest))
		}
	}
	b.Run("EncodeV2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			metrics.EncodeV2(h)
		}
	})
	b.Run("hdrhistogram-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMergePreflight: the agents' preflights and attempts add up, their
// failed attempts in turn; one failed preflight makes the merged one
// failed, with its reason and its tries.
func TestMergePreflight(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	var runs []*metrics.Run
	for i, a := range agents {
		c := *a
		c.Preflight = &metrics.Preflight{OK: true, DurationUS: int64(1000 * (i + 1)), Transactions: 1, Handshakes: 1, BodySize: 1024}
		c.Load.Attempts, c.Load.Backoffs = int64(100+i), int64(i)
		runs = append(runs, &c)
	}
	m := merge(t, runs...)
	n := int64(len(runs))
	if pf := m.Preflight; pf == nil || !pf.OK || pf.Transactions != n || pf.Handshakes != n || pf.DurationUS != 1000*n || pf.BodySize != 1024 {
		t.Errorf("merged preflight %+v", m.Preflight)
	}
	var attempts, backoffs int64
	for _, r := range runs {
		attempts += r.Load.Attempts
		backoffs += r.Load.Backoffs
	}
	if m.Load.Attempts != attempts || m.Load.Backoffs != backoffs || m.Failed() != "" {
		t.Errorf("merged attempts %d, backoffs %d, failed %q; want %d, %d, none", m.Load.Attempts, m.Load.Backoffs, m.Failed(), attempts, backoffs)
	}
	reset := metrics.PreflightAttempt{Class: vocab.ClassReset, Error: "connection reset by peer"}
	stall := metrics.PreflightAttempt{Class: vocab.ClassHandshakeTimeout, Error: "i/o timeout"}
	runs[0].Preflight = &metrics.Preflight{OK: true, Transactions: 2, FailedAttempts: []metrics.PreflightAttempt{reset}}
	runs[1].Preflight = &metrics.Preflight{Transactions: 1, Class: "status", Error: "status 404",
		FailedAttempts: []metrics.PreflightAttempt{{Class: "status", Error: "status 404"}}}
	m = merge(t, runs...)
	if pf := m.Preflight; pf.OK || pf.Class != "status" || pf.Transactions != n+1 || len(pf.FailedAttempts) != 2 ||
		pf.Tries() != "2 attempts failed: reset, status" || m.Failed() != "preflight failed (2 attempts failed: reset, status): status 404" {
		t.Errorf("merged preflight %+v, failed %q", pf, m.Failed())
	}
	runs[1].Preflight = &metrics.Preflight{Transactions: 3, Class: stall.Class, Error: stall.Error,
		FailedAttempts: []metrics.PreflightAttempt{reset, stall, stall}}
	want := "preflight failed (3 attempts failed: reset, handshake_timeout ×2): handshake_timeout (i/o timeout)"
	if f := runs[1].Failed(); f != want {
		t.Errorf("Failed() = %q, want %q", f, want)
	}
	if pf := (metrics.Preflight{FailedAttempts: []metrics.PreflightAttempt{stall}}); pf.Tries() != "1 attempt failed: handshake_timeout" {
		t.Errorf("Tries() = %q", pf.Tries())
	}
}

// TestMergeQUIC: agents' QUIC accounts are summed, PTOs too where counted
// (an agent without them adds none; none counted: none merged); a record
// whose PTO counts contradict each other is invalid.
func TestMergeQUIC(t *testing.T) {
	_, agents := play(t, [playAgents]int{})
	for i, r := range agents {
		q := &metrics.QUIC{Connections: 10, PacketsSent: 100, PacketsLost: int64(i), Sockets: "per_connection"}
		if i > 0 {
			q.PTOs = &metrics.QUICPTOs{Count: int64(2 * i), Handshake: int64(i), Connections: 1}
		}
		r.SetQUIC(q)
	}
	m := merge(t, agents...)
	want := metrics.QUICPTOs{Count: 12, Handshake: 6, Connections: 3}
	if q := m.QUIC; q == nil || q.Connections != 40 || q.PacketsLost != 6 || q.PTOs == nil || *q.PTOs != want {
		t.Fatalf("merged quic %+v, want 40 connections, 6 lost, PTOs %+v", q, want)
	}
	for _, r := range agents {
		r.QUIC.PTOs = nil
	}
	if m := merge(t, agents...); m.QUIC.PTOs != nil {
		t.Errorf("merged PTOs %+v from agents that counted none", m.QUIC.PTOs)
	}
	for _, bad := range []metrics.QUICPTOs{{Count: 1, Handshake: 2}, {Count: 1, Connections: 2}, {Count: -1}} {
		m.QUIC.PTOs = &bad
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "quic.ptos.") {
			t.Errorf("PTOs %+v: %v", bad, err)
		}
	}
}
