package metrics

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// loadModes are the load modes a run record may name.
var loadModes = []string{"closed", "open"}

// errorClassPattern is what an error class looks like: "reset",
// "tls_alert:handshake_failure".
var errorClassPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(:[a-z0-9_]+)?$`)

// Checker collects the first problem found in a record. Its methods check
// one field each; the zero Checker is ready.
type Checker struct{ Err *vocab.FieldError }

// Failf records a problem with the field at path, if none was found yet.
func (c *Checker) Failf(path, format string, args ...any) {
	if c.Err == nil {
		c.Err = &vocab.FieldError{Field: path, Msg: fmt.Sprintf(format, args...)}
	}
}

// Count checks that a count is not negative.
func (c *Checker) Count(path string, v int64) {
	if v < 0 {
		c.Failf(path, "%d is negative", v)
	}
}

// Rate checks that a rate (or any measured quantity) is finite and not
// negative.
func (c *Checker) Rate(path string, v float64) {
	c.finite(path, v)
	if v < 0 {
		c.Failf(path, "%v is negative", v)
	}
}

// finite checks that a value is a finite number.
func (c *Checker) finite(path string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		c.Failf(path, "%v is not a finite number", v)
	}
}

// OneOf checks that v is one of the allowed values.
func (c *Checker) OneOf(path, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		c.Failf(path, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

// Engine checks that e is one of vocab.Engines.
func (c *Checker) Engine(path string, e vocab.Engine) {
	names := make([]string, len(vocab.Engines))
	for i, v := range vocab.Engines {
		names[i] = v.String()
	}
	c.OneOf(path, e.String(), names)
}

// num is a named number for Checker.nums: an int or int64 is a count, a
// float64 a rate.
type num struct {
	name string
	v    any
}

// nums checks the numbers in order, each at prefix+name: counts with Count,
// rates with Rate.
func (c *Checker) nums(prefix string, fs []num) {
	for _, f := range fs {
		switch v := f.v.(type) {
		case int:
			c.Count(prefix+f.name, int64(v))
		case int64:
			c.Count(prefix+f.name, v)
		case float64:
			c.Rate(prefix+f.name, v)
		default:
			panic(fmt.Sprintf("metrics: %s: %T is no count or rate", prefix+f.name, v))
		}
	}
}

// Validate checks a run record: its schema, engine, counts (none
// negative), rates (finite, not negative, agreeing with the counts they
// come from), percentiles (in order, their counts those of the histograms),
// window (a complete run measured a window; it ended after it started and
// the window lies inside the run) and series (seconds in order, histograms
// decodable). The error is a *vocab.FieldError naming the field.
func (r *Run) Validate() error {
	var c Checker
	r.check(&c)
	if c.Err != nil {
		return c.Err
	}
	return nil
}

func (r *Run) check(c *Checker) {
	if r.Schema != Schema {
		c.Failf("schema", "%q, want %q", r.Schema, Schema)
		return
	}
	c.Engine("engine", r.Engine)

	// The window.
	c.nums("", []num{{"warmup_s", r.WarmupS}, {"steady_start_s", r.SteadyStartS}, {"duration_s", r.DurationS}})
	if r.Complete && r.DurationS <= 0 {
		c.Failf("duration_s", "%v in a complete run (a complete run measured a window)", r.DurationS)
	}
	if !r.Started.IsZero() && !r.Ended.IsZero() {
		if r.Ended.Before(r.Started) {
			c.Failf("ended", "%s is before started (%s)", r.Ended.Format(stampLayout), r.Started.Format(stampLayout))
		} else if run := r.Ended.Sub(r.Started).Seconds(); r.SteadyStartS+r.DurationS > run+1 {
			c.Failf("duration_s", "the window (%gs from %gs) ends after the run (%.3fs)", r.DurationS, r.SteadyStartS, run)
		}
	}

	// Counts.
	c.nums("", []num{{"transactions", r.Transactions}, {"connections_opened", r.ConnectionsOpened},
		{"resumed", r.Resumed}, {"handshakes", r.Handshakes}, {"latency_out_of_range", r.OutOfRange},
		{"whole_run.transactions", r.Whole.Transactions}, {"whole_run.errors", r.Whole.Errors},
		{"whole_run.connections_opened", r.Whole.ConnectionsOpened}})
	c.nums("bytes.", []num{{"in", r.Bytes.In}, {"out", r.Bytes.Out}, {"payload", r.Bytes.Payload},
		{"payload_partial", r.Bytes.PayloadPartial}, {"wire_in", r.Bytes.WireIn}, {"wire_out", r.Bytes.WireOut}})
	// A merged first byte is a successful transaction's: at most one per
	// connection that read a complete response, or per transaction when
	// connections are kept alive for several.
	if cl := r.Closes; cl != nil && cl.FirstByteMerged > max(cl.ServerFirst+cl.ClientFirst, r.Whole.Transactions) {
		c.Failf("closes.first_byte_merged", "%d, more than the successful transactions (%d) and the connections "+
			"that read a complete response (%d)", cl.FirstByteMerged, r.Whole.Transactions, cl.ServerFirst+cl.ClientFirst)
	}
	r.checkErrors(c)
	r.checkResumption(c)
	r.checkObjects(c)
	r.checkRates(c)
	r.checkLoad(c)
	c.Count("host.cpus", int64(r.Host.CPUs))
	checkClient(c, "client", r.Client)
	checkNoise(c, "noise", r.Noise)
	checkTCP(c, r.TCP)
	r.checkQUIC(c)
	checkNames(c, r.Names)
	r.checkLatency(c)
	r.checkSeries(c)
	r.checkTimeline(c) // timeline.go
	if r.Agent != nil {
		checkAgent(c, "agent", *r.Agent)
	}
	for i, a := range r.Agents {
		p := fmt.Sprintf("agents[%d]", i)
		checkAgent(c, p, a.Agent)
		c.Count(p+".host.cpus", int64(a.Host.CPUs))
		checkClient(c, p+".client", a.Client)
		checkNoise(c, p+".noise", a.Noise)
		c.nums(p+".", []num{{"transactions", a.Transactions}, {"errors", a.Errors}, {"duration_s", a.DurationS}})
		if !a.Started.IsZero() && a.Ended.Before(a.Started) {
			c.Failf(p+".ended", "%s is before started (%s)", a.Ended.Format(stampLayout), a.Started.Format(stampLayout))
		}
	}
	if len(r.Agents) > 0 && c.Err == nil {
		r.checkMergedRates(c)
	}
}

func (r *Run) checkErrors(c *Checker) {
	c.Count("errors.total", r.Errors.Total)
	var sum int64
	for _, k := range slices.Sorted(maps.Keys(r.Errors.ByClass)) {
		v := r.Errors.ByClass[k]
		if !errorClassPattern.MatchString(string(k)) {
			c.Failf("errors.by_class", "%q is not an error class (%s)", k, errorClassPattern)
		}
		c.Count("errors.by_class."+string(k), v)
		sum += v
	}
	if c.Err == nil && sum != r.Errors.Total {
		c.Failf("errors.total", "%d, but the classes sum to %d", r.Errors.Total, sum)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Errors.Examples)) {
		if !errorClassPattern.MatchString(string(k)) {
			c.Failf("errors.examples", "%q is not an error class (%s)", k, errorClassPattern)
		}
	}
}

// checkRates checks the engine's rates. A record of one process has the
// rates of its counts over its window; a merged record's are the sums of
// its agents' own, each over its own window (checkMergedRates).
func (r *Run) checkRates(c *Checker) {
	if pf := r.Preflight; pf != nil && !pf.OK && r.CPS == nil && !r.HasThroughput() {
		return // the preflight failed: no load was sent, there is no rate
	}
	per := func(v float64) float64 { return divide(v, r.DurationS) }
	agree := func(path string, got, want float64) {
		if len(r.Agents) == 0 && c.Err == nil && far(got, want) {
			c.Failf(path, "%v, but the counts over duration_s give %v", got, want)
		}
	}
	switch r.Engine {
	case vocab.EngineCPS:
		if r.CPS == nil {
			c.Failf("cps", "missing in a cps record")
			return
		}
		if r.HasThroughput() {
			c.Failf("requests_per_s", "a throughput rate in a cps record")
		}
		c.Rate("cps", *r.CPS)
		agree("cps", *r.CPS, per(float64(r.Transactions)))
	case vocab.EngineThroughput:
		if !r.HasThroughput() {
			c.Failf("requests_per_s", "missing in a throughput record")
			return
		}
		if r.CPS != nil {
			c.Failf("cps", "a CPS rate in a throughput record")
		}
		requests, rps, gbps := Value(r.Requests), Value(r.RPS), Value(r.Gbps)
		c.nums("", []num{{"requests", requests}, {"requests_per_s", rps}, {"gbps", gbps}, {"wire_gbps", Value(r.WireGbps)}})
		agree("requests_per_s", rps, per(float64(requests)))
		agree("gbps", gbps, per(float64(r.Bytes.Payload)*8)/1e9)
		agree("wire_gbps", Value(r.WireGbps), per(float64(r.Bytes.WireIn)*8)/1e9)
	}
}

// checkMergedRates checks a merged record's rates against its agents'
// counts: each agent measured its transactions (its requests, in a
// throughput run) over its own steady window, and the merged CPS or RPS is
// the sum of those rates, Σ transactions ÷ duration_s over agents[]. The
// bytes of each agent are not kept, only their sum: Gbps and wire Gbps lie
// between the bytes over the longest agent window and over the shortest.
func (r *Run) checkMergedRates(c *Checker) {
	if r.CPS == nil && !r.HasThroughput() {
		return // no load was sent (checkRates)
	}
	var txns int64
	var rate float64
	shortest, longest := math.Inf(1), 0.0
	measured := true // every agent measured a window: none has a rate of 0
	for _, a := range r.Agents {
		txns += a.Transactions
		if a.DurationS > 0 {
			rate += float64(a.Transactions) / a.DurationS
			shortest = min(shortest, a.DurationS)
		}
		longest = max(longest, a.DurationS)
		measured = measured && a.DurationS > 0
	}
	if txns != r.Transactions {
		c.Failf("transactions", "%d, but the agents' transactions sum to %d", r.Transactions, txns)
		return
	}
	agree := func(path string, got float64) {
		if far(got, rate) {
			c.Failf(path, "%v, but the agents' transactions over their windows (agents[].duration_s) give %v", got, rate)
		}
	}
	if r.Engine == vocab.EngineCPS {
		agree("cps", Value(r.CPS))
		return
	}
	if requests := Value(r.Requests); requests != txns {
		c.Failf("requests", "%d, but the agents' transactions sum to %d", requests, txns)
		return
	}
	agree("requests_per_s", Value(r.RPS))
	for _, f := range []struct {
		path  string
		gbps  float64
		bytes int64
	}{{"gbps", Value(r.Gbps), r.Bytes.Payload}, {"wire_gbps", Value(r.WireGbps), r.Bytes.WireIn}} {
		bits := float64(f.bytes) * 8 / 1e9
		hi, lo := 0.0, 0.0
		if !math.IsInf(shortest, 1) {
			hi = bits / shortest
		}
		if measured {
			lo = bits / longest
		}
		if f.gbps > hi*(1+1e-9) || f.gbps < lo*(1-1e-9) {
			c.Failf(f.path, "%v, but the agents' bytes over their windows (%g s to %g s) give %v to %v",
				f.gbps, shortest, longest, lo, hi)
			return
		}
	}
}

// far says whether a rate is not the one its counts give, to 1e-9 of it.
func far(got, want float64) bool {
	return math.Abs(got-want) > 1e-9*math.Max(math.Abs(want), 1e-9)
}

func (r *Run) checkLoad(c *Checker) {
	l := r.Load
	c.OneOf("load.mode", l.Mode, loadModes)
	c.nums("load.", []num{{"concurrency", l.Concurrency}, {"rate", l.Rate}, {"late", l.Late}, {"dropped", l.Dropped},
		{"abandoned", l.Abandoned}})
	if n := r.Errors.ByClass[vocab.ClassAbandoned]; n > l.Abandoned || l.Abandoned > r.Whole.Errors {
		c.Failf("load.abandoned", "%d, but the window has %d abandoned errors and the whole run %d errors",
			l.Abandoned, n, r.Whole.Errors)
	}
	c.nums("load.", []num{{"source_addresses", l.Sources}, {"pre_opened", l.PreOpened},
		{"pre_open_failed", l.PreOpenFailed}})
	for _, f := range []struct {
		name string
		v    int64
	}{{"connections_held", l.ConnectionsHeld}, {"connections_held_peak", l.ConnectionsHeldPeak}} {
		if f.v < -1 {
			c.Failf("load."+f.name, "%d is below -1 (not counted)", f.v)
		}
	}
}

func checkClient(c *Checker, path string, cl Client) {
	c.nums(path+".", []num{{"cpu_s", cl.CPUSeconds}, {"user_s", cl.UserS}, {"sys_s", cl.SysS},
		{"max_rss_bytes", cl.MaxRSSBytes}, {"cores", cl.Cores}, {"utilization", cl.Utilization},
		{"cpu_per_transaction_us", cl.CPUPerTxnUS}})
}

// checkNoise checks the machine's noise: nothing negative, the shares of
// the machine within 0..1, the DUT's processes counted when its CPU is.
func checkNoise(c *Checker, path string, n *Noise) {
	if n == nil {
		return
	}
	c.nums(path+".", []num{{"window_s", n.WindowS}, {"cpus", n.CPUs}, {"other_cores", n.OtherCores},
		{"generator_cores", n.GeneratorCores}, {"dut_processes", n.DUTProcesses}, {"dut_cpus", n.DUTCPUs}})
	for _, f := range []struct {
		name string
		v    float64
	}{{"steal_share", n.StealShare}, {"other_share", n.OtherShare}} {
		c.Rate(path+"."+f.name, f.v)
		if f.v > 1 {
			c.Failf(path+"."+f.name, "%g is above 1 (a share of the machine)", f.v)
		}
	}
	if n.DUTCores != nil {
		c.Rate(path+".dut_cores", *n.DUTCores)
		if n.DUTProcesses < 1 {
			c.Failf(path+".dut_processes", "%d, but dut_cores is set", n.DUTProcesses)
		}
	}
}

func checkAgent(c *Checker, path string, a Agent) {
	c.nums(path+".", []num{{"shard", a.Shard}, {"shards", a.Shards}})
	if a.Shards > 0 && a.Shard >= a.Shards {
		c.Failf(path+".shard", "%d is not below shards (%d)", a.Shard, a.Shards)
	}
	c.finite(path+".start_skew_ms", a.StartSkewMS)
}

// checkPercentiles checks one phase's percentiles: counts not negative,
// min ≤ p50 ≤ p90 ≤ p99 ≤ p999 ≤ max, the mean between min and max, and all
// zero when nothing was counted.
func checkPercentiles(c *Checker, path string, p Percentiles) {
	c.Count(path+".count", p.Count)
	c.Rate(path+".mean", p.Mean)
	if c.Err != nil {
		return
	}
	if p.Count == 0 {
		if p != (Percentiles{}) {
			c.Failf(path+".count", "0, but the percentiles are not")
		}
		return
	}
	c.Count(path+".min", p.Min)
	order := []struct {
		name string
		v    int64
	}{{"min", p.Min}, {"p50", p.P50}, {"p90", p.P90}, {"p99", p.P99}, {"p999", p.P999}, {"max", p.Max}}
	for i := 1; i < len(order); i++ {
		if order[i].v < order[i-1].v {
			c.Failf(path+"."+order[i].name, "(%d) < %s (%d)", order[i].v, order[i-1].name, order[i-1].v)
		}
	}
	if c.Err == nil && (p.Mean < float64(p.Min)*(1-1e-9) || p.Mean > float64(p.Max)*(1+1e-9)) {
		c.Failf(path+".mean", "%v is outside min..max (%d..%d)", p.Mean, p.Min, p.Max)
	}
}

func (r *Run) checkLatency(c *Checker) {
	for _, phase := range slices.Sorted(maps.Keys(r.Latency)) {
		if !knownPhase(phase) {
			c.Failf("latency_us", "%q is not a phase (%s)", phase, strings.Join(vocab.TimedNames(), ", "))
			return
		}
		checkPercentiles(c, "latency_us."+phase, r.Latency[phase])
	}
	// Every successful transaction of the window has a total latency.
	if p, ok := r.Latency[vocab.PhaseTotal.String()]; ok && p.Count != r.Transactions && c.Err == nil {
		c.Failf("latency_us.total.count", "%d, but transactions is %d", p.Count, r.Transactions)
	}
	for _, phase := range slices.Sorted(maps.Keys(r.Histograms)) {
		path := "histograms." + phase
		if !knownPhase(phase) {
			c.Failf("histograms", "%q is not a phase (%s)", phase, strings.Join(vocab.TimedNames(), ", "))
			return
		}
		h, err := r.Histogram(phase)
		if err != nil {
			c.Failf(path, "not an HdrHistogram: %v", strings.TrimPrefix(err.Error(), "metrics: "))
			return
		}
		p, ok := r.Latency[phase]
		if !ok {
			c.Failf(path, "has no percentiles in latency_us")
			return
		}
		if h.TotalCount() != p.Count {
			c.Failf(path, "counts %d values, latency_us.%s.count says %d", h.TotalCount(), phase, p.Count)
			return
		}
	}
}

func knownPhase(name string) bool {
	_, ok := vocab.ParsePhase(name)
	return ok
}

func (r *Run) checkSeries(c *Checker) {
	for i, s := range r.Series {
		p := fmt.Sprintf("series[%d]", i)
		c.Count(p+".t", int64(s.T))
		if i > 0 {
			prev := r.Series[i-1]
			if s.T < prev.T {
				c.Failf(p+".t", "%d comes after %d: the seconds are out of order", s.T, prev.T)
			}
			if s.Unix < prev.Unix {
				c.Failf(p+".unix", "%d comes after %d: the seconds are out of order", s.Unix, prev.Unix)
			}
		}
		c.nums(p+".", []num{{"transactions", s.Transactions}, {"errors", s.Errors}, {"payload_bytes", s.PayloadBytes},
			{"wire_in_bytes", s.WireInBytes}, {"tcp_retransmits", s.TCPRetransmits},
			{"tcp_syn_retransmits", s.TCPSynRetransmits}, {"tcp_resets_received", s.TCPResets},
			{"quic_packets_lost", s.QUICPacketsLost}, {"quic_ptos", s.QUICPTOs}})
		if s.TCPSynRetransmits > s.TCPRetransmits {
			c.Failf(p+".tcp_syn_retransmits", "%d, more than tcp_retransmits (%d)", s.TCPSynRetransmits, s.TCPRetransmits)
		}
		c.nums(p+".", []num{{"handshake_p99_us", s.HandshakeP99}, {"total_p50_us", s.TotalP50},
			{"total_p99_us", s.TotalP99}, {"total_mean_us", s.TotalMean}})
		if s.TotalP99 < s.TotalP50 {
			c.Failf(p+".total_p99_us", "(%v) < total_p50_us (%v)", s.TotalP99, s.TotalP50)
		}
		if c.Err != nil {
			return
		}
		for _, h := range []struct{ name, enc string }{{"handshake_hist", s.HandshakeHist}, {"total_hist", s.TotalHist}} {
			if h.enc == "" {
				continue
			}
			hist, err := DecodeSecondHistogram(h.enc)
			if err != nil {
				c.Failf(p+"."+h.name, "not a per-second histogram: %v", err)
				return
			}
			if h.name == "total_hist" && hist.TotalCount() != s.Transactions {
				c.Failf(p+".total_hist", "counts %d values, transactions says %d", hist.TotalCount(), s.Transactions)
				return
			}
		}
	}
}

// CheckFields reports the first member of the JSON data that the Go value
// v (a pointer to the type data is decoded into) has no field for: a
// misspelled or unknown field, which encoding/json would pass over (or
// match case-insensitively). Members decoded into json.RawMessage, any, or
// a type with its own UnmarshalJSON are not looked into.
func CheckFields(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return err
	}
	if err := checkFields(doc, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	return nil
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

func checkFields(doc any, t reflect.Type, path string) *vocab.FieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem() // *T implements it when T or *T does: checked below
	}
	if reflect.PointerTo(t).Implements(unmarshaler) || t.Implements(unmarshaler) {
		return nil
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil // a type error: encoding/json says so
		}
		var fields map[string]reflect.Type // a struct's; nil for a map, which takes any key
		if t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ft, ok := fields[k]
			if fields == nil {
				ft, ok = t.Elem(), true
			}
			if !ok {
				return &vocab.FieldError{Field: join(k), Msg: "unknown field"}
			}
			if err := checkFields(obj[k], ft, join(k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := doc.([]any)
		if !ok {
			return nil
		}
		for i, e := range arr {
			if err := checkFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of a struct's fields, those of embedded
// structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	var embedded []reflect.Type // a shallower field wins over theirs
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name = cmp.Or(name, f.Name)
		m[name] = ft
	}
	for _, et := range embedded {
		for k, v := range jsonFields(et) {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
	return m
}

// stampLayout shows a time in a validation message: RFC 3339 to the
// millisecond.
const stampLayout = "2006-01-02T15:04:05.999Z07:00"
