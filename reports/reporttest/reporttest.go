// Package reporttest makes deterministic run records and campaigns for the
// tests of reports and of the report and compare commands: the records are
// filled by metrics.Recorder from fixed latencies, and the campaigns are run
// by method.Campaign with a scripted executor, so that their ledger and
// summary are what qualify writes.
package reporttest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// T0 is when the first synthetic run starts.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// The windows of every synthetic run.
const (
	warmup   = time.Second
	duration = 2 * time.Second
	runTime  = warmup + duration + 200*time.Millisecond
)

// The profiles of the synthetic campaigns.
const (
	P384 = "ecdhe-ecdsa-aes128-sha256-p384"
	RSA  = "rsa2048-aes128-gcm-sha256"
)

var negotiated = map[string]metrics.Negotiated{
	P384: {Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", OpenSSL: "ECDHE-ECDSA-AES128-SHA256",
		Group: "P-384", CertKey: "ECDSA P-256", SuitePinned: true},
	RSA: {Version: "TLS1.2", CipherSuite: "TLS_RSA_WITH_AES_128_GCM_SHA256", OpenSSL: "AES128-GCM-SHA256",
		Group: "none", CertKey: "RSA 2048", SuitePinned: true},
}

// RunSpec describes a synthetic run.
type RunSpec struct {
	Engine  vocab.Engine
	Profile string // P384 or RSA
	Host    string // the target's host name
	// Address is the address dialled (default Host:443); DUT and Leaf are
	// the record's DUT name and leaf certificate fingerprint, if any.
	Address, DUT, Leaf string
	Start              time.Time
	Level              int     // concurrent connections
	Value              float64 // CPS, or payload Gbps
	Errors             int64   // failed transactions (class reset)
	CPU                float64 // the generator's utilization, 0..1
	// NoHistograms drops the encoded histograms (keeping the percentiles),
	// as a smaller record.
	NoHistograms bool
}

// Run returns spec's run record: a Warmup, a steady window of Duration in
// which Value × Duration transactions succeed, their latencies spread over
// fixed multiples of the mean Little's law gives (Level ÷ rate).
func Run(s RunSpec) *metrics.Run {
	const mib = 1 << 20
	rate := s.Value
	payload := int64(1024)
	if s.Engine == vocab.EngineThroughput {
		rate = s.Value * 1e9 / 8 / mib
		payload = mib
	}
	n := int(rate*duration.Seconds() + 0.5)
	mean := time.Duration(float64(s.Level) / rate * float64(time.Second))
	samples := specSamples(s, n, mean, payload)
	r := specRun(s)
	if s.NoHistograms {
		fillWithoutHistograms(r, samples)
	} else {
		rec := metrics.NewRecorder(1, s.Start)
		for _, smp := range samples {
			rec.Record(0, smp)
		}
		if err := r.Fill(rec.Snapshot(), duration); err != nil {
			panic(err) // the histograms of one geometry always encode
		}
	}
	// Per second by completion: the warm-up's second, the window's two,
	// the drain (a partial second).
	for i, f := range []float64{0.55, 1.01, 0.99, 0.04} {
		txns := int64(rate*f + 0.5)
		us := float64(mean.Microseconds())
		r.Series = append(r.Series, metrics.Second{
			T:            i + 1,
			Unix:         s.Start.Unix() + int64(i+1),
			Partial:      i == 3,
			Transactions: txns,
			PayloadBytes: txns * payload,
			WireInBytes:  txns * (payload + payload/50 + 100),
			HandshakeP99: us * 2,
			TotalP50:     us,
			TotalP99:     us * 4,
		})
	}
	cpu := s.CPU * runTime.Seconds() * 8
	r.Client = metrics.Client{CPUSeconds: cpu, UserS: cpu * 0.7, SysS: cpu * 0.3, MaxRSSBytes: 48 << 20, Cores: 8,
		Utilization: s.CPU, CPUPerTxnUS: cpu * 1e6 / float64(max(n, 1))}
	return r
}

// specSamples are spec's n successful transactions of payload bytes around
// the mean, then its failed ones.
func specSamples(s RunSpec, n int, mean time.Duration, payload int64) []*metrics.Sample {
	var samples []*metrics.Sample
	for i := range n {
		// 0.5 to 1.475 × the mean, and one transaction in a hundred 4×.
		total := mean * time.Duration(20+i%40) / 40
		if i%100 == 99 {
			total = 4 * mean
		}
		smp := &metrics.Sample{Steady: true, Payload: payload, BytesIn: payload + 150, BytesOut: 60,
			WireIn: payload + payload/50 + 100, WireOut: 200}
		smp.Dur[vocab.PhaseTotal], smp.Dur[vocab.PhaseUncorrected] = total, total
		smp.Dur[vocab.PhaseTTFB], smp.Dur[vocab.PhaseTransfer] = total*3/10, total/10
		// CPS opens a connection per transaction; throughput once per
		// connection.
		if s.Engine == vocab.EngineCPS || i < s.Level {
			smp.Opened, smp.Handshake = true, true
			smp.Dur[vocab.PhaseConnect], smp.Dur[vocab.PhaseHandshake] = total/20, total*11/20
			smp.WireIn += 2800
			smp.WireOut += 500
		}
		samples = append(samples, smp)
	}
	for range s.Errors {
		samples = append(samples, &metrics.Sample{
			Steady: true,
			Class:  vocab.ClassReset,
			Err:    errors.New("read: connection reset by peer"),
		})
	}
	return samples
}

// specRun is spec's record before its figures: target, tool, host, load.
func specRun(s RunSpec) *metrics.Run {
	if s.Address == "" {
		s.Address = s.Host + ":443"
	}
	return &metrics.Run{
		Schema:  metrics.Schema,
		Engine:  s.Engine,
		Profile: s.Profile,
		Target: metrics.Target{
			DUT:        s.DUT,
			URL:        "https://" + s.Host + s.Engine.DefaultPath(),
			Address:    s.Address,
			ServerName: s.Host,
			LeafSHA256: s.Leaf,
		},
		Tool: metrics.Tool{Name: "tlsbench", Version: "v0.5.0", GoVersion: "go1.26.0"},
		Host: metrics.Host{
			Hostname: "gen-1",
			OS:       "linux",
			Arch:     "amd64",
			CPUs:     8,
			CPUModel: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
		},
		Started:  s.Start,
		Ended:    s.Start.Add(runTime),
		Complete: true, Negotiated: negotiated[s.Profile],
		Load:    metrics.Load{Mode: "closed", Concurrency: s.Level},
		WarmupS: warmup.Seconds(), SteadyStartS: warmup.Seconds(),
	}
}

// fillWithoutHistograms fills what Fill would from the samples, but the
// histograms: the percentiles are taken from the sorted values. It is
// much cheaper than a Recorder (whose histograms are large), for the many
// runs a campaign makes whose histograms no report shows.
func fillWithoutHistograms(r *metrics.Run, samples []*metrics.Sample) {
	var phases [vocab.NumTimed][]int64
	r.Errors = metrics.Errors{ByClass: map[vocab.Class]int64{}, Examples: map[vocab.Class]string{}}
	for _, smp := range samples {
		if smp.Opened {
			r.ConnectionsOpened++
		}
		if smp.Handshake {
			r.Handshakes++
		}
		if smp.Class != "" {
			r.Errors.Total++
			r.Errors.ByClass[smp.Class]++
			r.Errors.Examples[smp.Class] = smp.Err.Error()
			continue
		}
		r.Transactions++
		r.Bytes.In += smp.BytesIn
		r.Bytes.Out += smp.BytesOut
		r.Bytes.Payload += smp.Payload
		r.Bytes.WireIn += smp.WireIn
		r.Bytes.WireOut += smp.WireOut
		for p, d := range smp.Dur {
			if d > 0 {
				phases[p] = append(phases[p], d.Microseconds())
			}
		}
	}
	w := duration.Seconds()
	if r.Engine == vocab.EngineCPS {
		r.CPS = new(float64(r.Transactions) / w)
	} else {
		r.Requests, r.RPS = new(r.Transactions), new(float64(r.Transactions)/w)
		r.Gbps, r.WireGbps = new(float64(r.Bytes.Payload)*8/w/1e9), new(float64(r.Bytes.WireIn)*8/w/1e9)
	}
	r.DurationS = w
	r.Whole = metrics.Whole{Transactions: r.Transactions, Errors: r.Errors.Total, ConnectionsOpened: r.ConnectionsOpened}
	r.Latency = map[string]metrics.Percentiles{}
	for p, vs := range phases {
		if len(vs) == 0 {
			r.Latency[vocab.Phase(p).String()] = metrics.Percentiles{}
			continue
		}
		slices.Sort(vs)
		at := func(q float64) int64 { return vs[max(int(math.Ceil(q/100*float64(len(vs))))-1, 0)] }
		sum := int64(0)
		for _, v := range vs {
			sum += v
		}
		r.Latency[vocab.Phase(p).String()] = metrics.Percentiles{
			Count: int64(len(vs)),
			Min:   vs[0],
			Mean:  float64(sum) / float64(len(vs)),
			P50:   at(50),
			P90:   at(90),
			P99:   at(99),
			P999:  at(99.9),
			Max:   vs[len(vs)-1],
		}
	}
}

// peak is the value of each engine and profile at the best load level (16
// connections) of a DUT of scale 1: a hundredth of the reference study's
// CPS, a tenth of its Gbps.
var peak = map[string]float64{"cps|" + P384: 640, "cps|" + RSA: 1600, "throughput|" + P384: 5.3}

// curve is the value at a load level, relative to the peak: rising to 16
// connections, falling slowly after.
func curve(level int) float64 {
	if level <= 16 {
		return float64(level) / 16
	}
	return 1 - float64(level-16)/160
}

// Exec is a scripted method.Executor. A run's value is Peak × Curve(level)
// × the DUT's Scale; final run n is further multiplied by Final[n-1] (or the
// cell's own list in FinalFor). Every run starts after the previous one.
type Exec struct {
	Scale    map[string]float64   // DUT → factor (default 1)
	Final    []float64            // default factors of the final runs
	FinalFor map[string][]float64 // "dut|engine|profile" → the cell's factors
	// Errors makes runs fail transactions: "dut|engine|profile|final|seq"
	// or "dut|engine|profile|exploratory|level" → errors.
	Errors map[string]int64
	// CPU is the generator's utilization of such keys (default 40%).
	CPU map[string]float64
	// Noise gives every run a machine noise (metrics.Noise) that varies
	// with the run: steal 0.2%, other processes 1% to 4.5% of the machine,
	// the DUT's processes 1.5 to 3 cores of 8.
	Noise bool

	clock  time.Time
	finals map[string]int
	runs   int
}

var _ method.Executor = (*Exec)(nil)

// Run implements method.Executor.
func (e *Exec) Run(_ context.Context, req method.Request) (*metrics.Run, error) {
	if e.clock.IsZero() {
		e.clock, e.finals = T0, map[string]int{}
	}
	cell := req.DUT.Name + "|" + req.Test.Engine.String() + "|" + req.Profile.Name
	v := peak[req.Test.Engine.String()+"|"+req.Profile.Name] * curve(req.Concurrency)
	if f, ok := e.Scale[req.DUT.Name]; ok {
		v *= f
	}
	key := fmt.Sprintf("%s|%s|%d", cell, req.Phase, req.Concurrency)
	if req.Phase == vocab.Final {
		e.finals[cell]++
		seq := e.finals[cell]
		factors := e.Final
		if f, ok := e.FinalFor[cell]; ok {
			factors = f
		}
		if seq <= len(factors) {
			v *= factors[seq-1]
		}
		key = fmt.Sprintf("%s|%s|%d", cell, req.Phase, seq)
	}
	cpu, ok := e.CPU[key]
	if !ok {
		cpu = 0.4
	}
	r := Run(RunSpec{Engine: req.Test.Engine, Profile: req.Profile.Name, Host: req.DUT.Name + ".lab.test", Start: e.clock,
		Level: req.Concurrency, Value: v, Errors: e.Errors[key], CPU: cpu, NoHistograms: req.Phase != vocab.Final})
	e.runs++
	if e.Noise {
		dut := 1.5 + float64(e.runs%4)/2
		r.Noise = &metrics.Noise{
			WindowS:        duration.Seconds(),
			CPUs:           8,
			StealShare:     0.002,
			OtherCores:     0.08 * float64(1+e.runs%8),
			OtherShare:     0.01 * float64(1+e.runs%8),
			GeneratorCores: cpu * 8,
			DUTCores:       &dut,
			DUTProcesses:   2,
		}
	}
	e.clock = e.clock.Add(runTime + time.Second)
	return r, nil
}

// Resumption implements method.Executor: no DUT resumes sessions.
func (e *Exec) Resumption(context.Context, method.Request) (*metrics.Preflight, error) {
	return &metrics.Preflight{Transactions: 2, Handshakes: 2, Requests: 1, Class: vocab.ClassNotResumed}, nil
}

// Plan is the synthetic campaigns' plan: CPS of P384 and RSA, Throughput
// of P384, on the DUTs, with a short method (levels 4 to 64, three runs
// within 5%, at most five).
func Plan(name string, duts ...string) *plan.Plan {
	p := &plan.Plan{Name: name, Method: plan.DefaultMethod()}
	for _, d := range duts {
		p.DUTs = append(p.DUTs, plan.DUT{Name: d, URL: "https://" + d + ".lab.test/"})
	}
	p.Tests = []plan.Test{
		{Engine: "cps", Path: "/1k", Profiles: []string{P384, RSA}},
		{Engine: "throughput", Path: "/1m", Profiles: []string{P384}},
	}
	m := &p.Method
	m.Duration, m.Warmup, m.Cooldown = plan.Duration(duration), plan.Duration(warmup), 0
	m.Explore.Concurrency = plan.Range{Min: 4, Max: 64}
	m.Explore.ProbeDuration = plan.Duration(duration)
	m.Explore.MinGain = 0.05
	m.Final = plan.Final{MinAccepted: 3, MaxRuns: 5, Tolerance: 0.05}
	return p
}

// Campaign runs the scenario into dir, as qualify does (plan.yaml,
// ledger.jsonl, summary.json), and returns its summary and ledger.
func Campaign(dir string, sc Scenario) (*method.Summary, []*method.Entry, error) {
	plan, exec := sc.Plan, sc.Exec
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	data, err := plan.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), data, 0o644); err != nil {
		return nil, nil, err
	}
	l, err := method.OpenLedger(dir)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	c := &method.Campaign{Plan: plan, Profiles: profiles.Builtin(), Exec: exec, Ledger: l,
		Sleep: func(context.Context, time.Duration) {}}
	s, err := c.Run(context.Background())
	if err != nil {
		return nil, nil, err
	}
	if err := method.WriteSummary(dir, s); err != nil {
		return nil, nil, err
	}
	return s, l.Entries(), nil
}

// Scenario is a plan and the executor that makes its runs.
type Scenario struct {
	Plan *plan.Plan
	Exec *Exec
}

// Lab is the two-DUT campaign: adc-b is 25% faster than adc-a; adc-a's
// second CPS P-384 final run has errors (rejected, a fourth is made);
// adc-b's probe at 32 connections of the throughput test is generator-bound
// (rejected); adc-b's CPS RSA final runs disagree (inconsistent after five).
func Lab() Scenario {
	p := Plan("lab", "adc-a", "adc-b")
	p.DUTs[0].Describe = &plan.Description{
		Model:      "ADC-A 5000",
		Version:    "firmware 4.2.1",
		Topology:   "client TLS, server plaintext",
		Config:     "virtual vs-lab {\n\tssl-profile client tls12-ecdhe\n\tpool web-plain\n}\n",
		ConfigFile: "adc-a.conf",
	}
	p.DUTs[1].Describe = &plan.Description{Model: "ADC-B 7", Version: "7.1.0", Topology: "client TLS, server plaintext"}
	p.Generator = &plan.Description{
		Model:    "8-core Xeon server",
		Version:  "Debian 12, Linux 6.1",
		Topology: "one 25 GbE link to each DUT",
	}
	return Scenario{p, &Exec{
		Scale:    map[string]float64{"adc-b": 1.25},
		Final:    []float64{0.97, 1.0, 0.99, 0.98, 0.96},
		FinalFor: map[string][]float64{"adc-b|cps|" + RSA: {1.0, 0.8, 0.9, 0.7, 0.85}},
		Errors:   map[string]int64{"adc-a|cps|" + P384 + "|final|2": 3},
		CPU:      map[string]float64{"adc-b|throughput|" + P384 + "|exploratory|32": 0.95},
		Noise:    true,
	}}
}

// Firmware is a one-DUT campaign of the DUT dut at scale, CPS and
// Throughput of P384: two of them are a before-and-after comparison.
func Firmware(name, dut string, scale float64) Scenario {
	p := Plan(name, dut)
	p.Tests[0].Profiles = []string{P384}
	return Scenario{p, &Exec{Scale: map[string]float64{dut: scale}, Final: []float64{0.99, 1.0, 0.98}}}
}

// Repeat is one plan run twice, as a user checking that a second campaign
// confirms the first: two DUTs, CPS of P384 and RSA, and in the first the
// throughput of P384 too (those cells are only in the first); the second
// adds a DUT, adc-c (its cells are only in the second), and its plan's
// tolerance is 10% where the first's is 5%. In the second, adc-a's cells
// come out 2% higher (confirmed), adc-b's CPS P-384 21% higher (it differs),
// and every final run of adc-b's CPS RSA has errors (nothing published).
func Repeat() (first, second Scenario) {
	first = Scenario{Plan("repeat1", "adc-a", "adc-b"), &Exec{Final: []float64{0.99, 1.0, 0.98}}}
	p := Plan("repeat2", "adc-a", "adc-b", "adc-c")
	p.Tests = p.Tests[:1]
	p.Method.Final.Tolerance = 0.10
	errs := map[string]int64{}
	for seq := 1; seq <= p.Method.Final.MaxRuns; seq++ {
		errs[fmt.Sprintf("adc-b|cps|%s|final|%d", RSA, seq)] = 5
	}
	second = Scenario{p, &Exec{Final: []float64{1.02, 1.0, 1.01},
		FinalFor: map[string][]float64{"adc-b|cps|" + P384: {1.2, 1.21, 1.19}}, Errors: errs}}
	return first, second
}
