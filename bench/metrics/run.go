// Package metrics records transactions into sharded HDR histograms and
// counters, and defines the persisted run record. Of tlsbench it imports only
// the vocabulary (bench/vocab) and the file writer (bench/outfile).
//
// All latencies are microseconds, in one histogram geometry (Lowest, Highest,
// SigFigs), so that histograms from any run or agent merge exactly.
package metrics

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// The one histogram geometry. Values above Highest are recorded as Highest
// and counted in Snapshot.OutOfRange.
const (
	Lowest  = 1           // 1 µs
	Highest = 100_000_000 // 100 s
	SigFigs = 3
)

// NewHistogram returns an empty histogram of the shared geometry.
func NewHistogram() *hdr.Histogram { return hdr.New(Lowest, Highest, SigFigs) }

// mergeLazy merges src into *dst, made on first use; a nil src adds nothing.
func mergeLazy(dst **hdr.Histogram, src *hdr.Histogram) {
	if src != nil {
		if *dst == nil {
			*dst = NewHistogram()
		}
		(*dst).Merge(src)
	}
}

// Sample is one transaction's outcome, filled by an operation and recorded
// by the engine. A zero duration for a phase means the phase was not reached.
type Sample struct {
	Intended time.Time // when the scheduler wanted it to start
	Start    time.Time // when it started
	Dur      [vocab.NumTimed]time.Duration
	Class    vocab.Class // "" for success, else an error class
	Err      error       // the error, for the record's examples; may be nil
	// Handshake is true when the TLS handshake completed (whatever came
	// next); Resumed when it resumed a session.
	Handshake, Resumed bool
	// Opened is true when this transaction opened a connection (always in
	// CPS; on the first request of each connection in throughput).
	Opened   bool
	BytesIn  int64 // application bytes received (headers + body)
	BytesOut int64 // application bytes sent
	Payload  int64 // response body bytes received (partial ones on errors)
	WireIn   int64 // TLS bytes read from the socket
	WireOut  int64 // TLS bytes written to the socket
	Steady   bool  // started inside the steady-state window
	// TCP is the kernel's account of the connections the transaction
	// closed (Linux; none elsewhere).
	TCP tcpClosed
	// QUICLost and QUICPTOs are, over QUIC, the packets its connection
	// declared lost and the probe timeouts it had since its previous
	// sample (quic-go's account, HTTP/3; PTOs: cps only).
	QUICLost, QUICPTOs int32
	// Object is 1 + the index of the object the request drew
	// (httpreq.Request.Objects); 0 when the run has no objects.
	Object uint16
	// RFCTTFB and RFCTTLB are RFC 9411 §6.3's time to first and to last
	// byte: from the transaction's first packet (the SYN when it opened its
	// connection, else its request) to the first and to the last byte of
	// the response body's application data; 0 when not reached.
	RFCTTFB, RFCTTLB time.Duration
}

// add counts the sample's bytes (a shard's, in the window).
func (b *Bytes) add(s *Sample) {
	b.In += s.BytesIn
	b.Out += s.BytesOut
	b.WireIn += s.WireIn
	b.WireOut += s.WireOut
	if s.Class == "" {
		b.Payload += s.Payload
	} else {
		b.PayloadPartial += s.Payload
	}
}

// merge adds o's counts to b's.
func (b *Bytes) merge(o Bytes) {
	b.In += o.In
	b.Out += o.Out
	b.Payload += o.Payload
	b.PayloadPartial += o.PayloadPartial
	b.WireIn += o.WireIn
	b.WireOut += o.WireOut
}

// Recorder accumulates samples. Record may be called concurrently with a
// distinct or equal shard index; Tick and Snapshot may be called concurrently
// with Record.
type Recorder struct {
	shards []shard
	start  time.Time
}

type shard struct {
	mu       sync.Mutex
	Snapshot // the shard's own, Snapshot's fields say of what
	// Since the last Tick, whole run (and the connections closed, tcp.go).
	iv ivStats
}

type ivStats struct {
	Second          // the counts only
	totalUS   int64 // sum of the successes' total latency
	hs, total *hdr.Histogram
}

// NewRecorder returns a Recorder with n shards (at least 1); start is the
// time series offsets are measured from.
func NewRecorder(n int, start time.Time) *Recorder {
	if n < 1 {
		n = 1
	}
	r := &Recorder{shards: make([]shard, n), start: start}
	for i := range r.shards {
		s := &r.shards[i]
		s.Snapshot = newSnapshot()
		s.iv.hs = newSecondHistogram()
		s.iv.total = newSecondHistogram()
	}
	return r
}

// Shards returns the number of shards.
func (r *Recorder) Shards() int { return len(r.shards) }

func us(d time.Duration) int64 { return int64(d / time.Microsecond) }

// Record adds one sample to shard i (taken modulo the shard count).
func (r *Recorder) Record(i int, s *Sample) {
	sh := &r.shards[uint(i)%uint(len(r.shards))]
	sh.mu.Lock()
	if s.Handshake {
		sh.Handshakes++
		if s.Resumed {
			sh.AllResumed++
		}
	}
	if s.Opened {
		sh.AllOpened++
	}
	sh.iv.WireInBytes += s.WireIn
	if s.Class == "" {
		sh.AllOK++
		sh.iv.Transactions++
		sh.iv.PayloadBytes += s.Payload
		sh.iv.totalUS += us(s.Dur[vocab.PhaseTotal])
		if s.Dur[vocab.PhaseHandshake] > 0 {
			recordIv(sh.iv.hs, s.Dur[vocab.PhaseHandshake])
		}
		recordIv(sh.iv.total, s.Dur[vocab.PhaseTotal])
	} else {
		sh.AllErrors++
		sh.iv.Errors++
	}
	for k := range s.TCP.N {
		sh.TCP.add(&s.TCP.Conns[k], s.Steady, &sh.iv.Second)
	}
	sh.iv.QUICPacketsLost += int64(s.QUICLost)
	sh.iv.QUICPTOs += int64(s.QUICPTOs)
	if s.Steady {
		sh.recordRFC(s)
		sh.Bytes.add(s)
		if s.Opened {
			sh.Opened++
		}
		if s.Class == "" {
			sh.OK++
			sh.iv.SteadyTransactions++
			// A phase that did not happen in this transaction (connect
			// and handshake on a reused connection) is not recorded.
			for p, d := range s.Dur {
				if d > 0 || vocab.Phase(p) == vocab.PhaseTotal || vocab.Phase(p) == vocab.PhaseUncorrected {
					sh.record(sh.Hist[p], d)
				}
			}
			if s.Resumed {
				sh.recordResumed(s.Dur[vocab.PhaseHandshake])
			}
		} else {
			sh.iv.SteadyErrors++
			sh.Errors[s.Class]++
			if _, ok := sh.Examples[s.Class]; !ok && s.Err != nil {
				sh.Examples[s.Class] = clip(s.Err.Error(), 300)
			}
		}
	}
	sh.mu.Unlock()
}

func (sh *shard) record(h *hdr.Histogram, d time.Duration) {
	v := us(d)
	if v > Highest {
		v = Highest
		sh.OutOfRange++
	}
	if v < 0 {
		v = 0
	}
	if h.RecordValue(v) != nil {
		sh.OutOfRange++
	}
}

// recordResumed counts a resumed handshake of the window and its time; the
// histogram is made on the first, so that a run without resumption pays
// nothing for it.
func (sh *shard) recordResumed(d time.Duration) {
	if sh.ResumedHS == nil {
		sh.ResumedHS = NewHistogram()
	}
	sh.Resumed++
	if d > 0 {
		sh.record(sh.ResumedHS, d)
	}
}

// recordIv records d in an interval histogram, clamped to its range.
func recordIv(h *hdr.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(us(d), 0), Highest)) // in range by construction
}

// Second is one entry of a run's per-second series: second T covers the
// run's offsets from T−1 to T seconds, and each second appears once. Counts
// are of transactions that ended in that second (warm-up and drain
// included; the record's steady_start_s says where the window begins).
//
// The record's window counts transactions by their start instead: those of
// a second that started in the steady window are SteadyTransactions and
// SteadyErrors, so that the series' steady counts sum exactly to the
// record's transactions and errors.total.
//
// The last second is Partial when the run ended (its drain done) before the
// second did: its counts cover less than a second, and are no rate.
type Second struct {
	T            int   `json:"t"`    // seconds since the run started, at the second's end
	Unix         int64 `json:"unix"` // absolute second (for merging agents)
	Partial      bool  `json:"partial,omitempty"`
	Transactions int64 `json:"transactions"`
	Errors       int64 `json:"errors"`
	// Of Transactions and Errors, those that started in the steady window.
	SteadyTransactions int64   `json:"steady_transactions"`
	SteadyErrors       int64   `json:"steady_errors"`
	PayloadBytes       int64   `json:"payload_bytes"`
	WireInBytes        int64   `json:"wire_in_bytes"`
	HandshakeP99       float64 `json:"handshake_p99_us"`
	TotalP50           float64 `json:"total_p50_us"`
	TotalP99           float64 `json:"total_p99_us"`
	TotalMean          float64 `json:"total_mean_us"` // exact, from the sum
	// The second's histograms (2 significant figures, µs; HdrHistogram V2
	// compressed, base64), from which Merge recomputes the percentiles of
	// agents' seconds exactly. Empty when the second had no value (and in
	// records older than them).
	HandshakeHist string `json:"handshake_hist,omitempty"`
	TotalHist     string `json:"total_hist,omitempty"`
	// The kernel's account of the connections closed in the second
	// (tcp.go): segments retransmitted, SYNs among them, resets received.
	TCPRetransmits    int64 `json:"tcp_retransmits,omitempty"`
	TCPSynRetransmits int64 `json:"tcp_syn_retransmits,omitempty"`
	TCPResets         int64 `json:"tcp_resets_received,omitempty"`
	// Over QUIC, quic-go's account of the packets the connections
	// declared lost and of their probe timeouts (PTOs, cps only) in the
	// second, given with each transaction's sample (a kept connection's
	// since its previous one).
	QUICPacketsLost int64 `json:"quic_packets_lost,omitempty"`
	QUICPTOs        int64 `json:"quic_ptos,omitempty"`
	// Phase is the part of the run's timeline the second ended in
	// (vocab.TimelinePhase: ramp_up, warmup, sustain, ramp_down, drain);
	// "" in a run without ramps. OpenConns is how many connections were
	// open at its end (the concurrent connections of RFC 9411 §7.9).
	Phase     string `json:"phase,omitempty"`
	OpenConns int64  `json:"open_conns,omitempty"`
	// OpenConnsMean is the mean of the open connections sampled every
	// 10 ms in the second: the second's concurrent connections, which a
	// run of short connections holds only on average.
	OpenConnsMean float64 `json:"open_conns_mean,omitempty"`
}

// addCounts adds o's counts (not its time, percentiles or histograms) to s's.
func (s *Second) addCounts(o *Second) {
	s.Transactions += o.Transactions
	s.Errors += o.Errors
	s.SteadyTransactions += o.SteadyTransactions
	s.SteadyErrors += o.SteadyErrors
	s.PayloadBytes += o.PayloadBytes
	s.WireInBytes += o.WireInBytes
	s.TCPRetransmits += o.TCPRetransmits
	s.TCPSynRetransmits += o.TCPSynRetransmits
	s.TCPResets += o.TCPResets
	s.QUICPacketsLost += o.QUICPacketsLost
	s.QUICPTOs += o.QUICPTOs
}

// Tick closes the current interval: it returns the counts since the last
// Tick and resets them. now names the second. The interval's histograms are
// encoded after the shards are released, so recording never waits for it.
func (r *Recorder) Tick(now time.Time) Second {
	hs, total := newSecondHistogram(), newSecondHistogram()
	sec := Second{T: int(now.Sub(r.start).Round(time.Second) / time.Second), Unix: now.Unix()}
	var sum int64
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		sec.addCounts(&sh.iv.Second)
		sum += sh.iv.totalUS
		hs.Merge(sh.iv.hs)
		total.Merge(sh.iv.total)
		sh.iv.Second, sh.iv.totalUS = Second{}, 0
		sh.iv.hs.Reset()
		sh.iv.total.Reset()
		sh.mu.Unlock()
	}
	sec.TotalMean = divide(float64(sum), float64(sec.Transactions))
	sec.setPercentiles(hs, total)
	return sec
}

// Snapshot is the merged state of a Recorder.
type Snapshot struct {
	Hist       [vocab.NumTimed]*hdr.Histogram // steady window, successful transactions
	OK         int64                          // steady window
	Errors     map[vocab.Class]int64          // steady window, by class
	Examples   map[vocab.Class]string         // first error message per class
	Bytes      Bytes                          // steady window
	Opened     int64                          // steady window: connections opened
	OutOfRange int64
	AllOK      int64       // whole run
	AllErrors  int64       // whole run
	Handshakes int64       // whole run: TLS handshakes completed by the client
	AllOpened  int64       // whole run: connections opened
	TCP        tcpSnapshot // steady window: connections measured at their close
	// Resumed counts the window's successes whose handshake resumed a
	// session, ResumedHS their handshake times (nil before the first).
	Resumed   int64
	ResumedHS *hdr.Histogram
	// AllResumed: whole run, handshakes that resumed (errors' included).
	AllResumed int64
	// rfc: the window's RFC 9411 TTFB and TTLB (nil before the first);
	// objects: each object's share of the window (objects.go).
	rfc     [2]*hdr.Histogram
	objects []objectSnap
}

// newSnapshot returns an empty Snapshot, its histograms of the shared
// geometry.
func newSnapshot() Snapshot {
	s := Snapshot{Errors: map[vocab.Class]int64{}, Examples: map[vocab.Class]string{}}
	for p := range s.Hist {
		s.Hist[p] = NewHistogram()
	}
	return s
}

// Snapshot merges the shards. It may be called while recording goes on.
func (r *Recorder) Snapshot() Snapshot {
	s := newSnapshot()
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		s.merge(&sh.Snapshot)
		sh.mu.Unlock()
	}
	return s
}

// merge adds a shard's o to s.
func (s *Snapshot) merge(o *Snapshot) {
	for p := range s.Hist {
		s.Hist[p].Merge(o.Hist[p])
	}
	s.OK += o.OK
	addClasses(s.Errors, o.Errors, s.Examples, o.Examples, "")
	s.Bytes.merge(o.Bytes)
	s.Opened += o.Opened
	s.AllOpened += o.AllOpened
	s.OutOfRange += o.OutOfRange
	s.AllOK += o.AllOK
	s.AllErrors += o.AllErrors
	s.Handshakes += o.Handshakes
	s.TCP.merge(&o.TCP)
	s.Resumed += o.Resumed
	s.AllResumed += o.AllResumed
	mergeLazy(&s.ResumedHS, o.ResumedHS)
	s.mergeObjects(o)
}

// clip shortens s to at most n bytes (an error may quote what a server sent).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Schema identifies the run record format. A reader rejects records whose
// schema it does not know.
const Schema = "tlsbench/run/v1"

// Run is the persisted record of one run: self-contained, so that reports can
// be rendered and runs merged long after the fact.
type Run struct {
	Schema      string          `json:"schema"`
	Engine      vocab.Engine    `json:"engine"`
	Protocol    string          `json:"protocol,omitempty"` // http/1.1, http/2; "" before it: HTTP/1.1 (ProtocolName)
	Profile     string          `json:"profile"`
	ProfileSpec json.RawMessage `json:"profile_spec,omitempty"`
	Target      Target          `json:"target"`
	Config      json.RawMessage `json:"config,omitempty"`
	Tool        Tool            `json:"tool"`
	Host        Host            `json:"host"`
	Started     time.Time       `json:"started"`
	Ended       time.Time       `json:"ended"`
	// Complete is false when the run was interrupted before its duration.
	Complete   bool       `json:"complete"`
	Negotiated Negotiated `json:"negotiated"`
	// Preflight is the one transaction made before any load; nil in
	// records made before it existed.
	Preflight *Preflight `json:"preflight,omitempty"`
	Load      Load       `json:"load"`

	WarmupS      float64 `json:"warmup_s"`
	SteadyStartS float64 `json:"steady_start_s"`
	DurationS    float64 `json:"duration_s"` // the steady-state window measured
	Transactions int64   `json:"transactions"`
	// The engine's rates, at the top level of the JSON. Fill sets those of
	// the record's Engine; the others stay nil (absent from the JSON).
	//
	// CPS: successful transactions per second.
	CPS *float64 `json:"cps,omitempty"`
	// Throughput: a request and its response are its transaction;
	// Requests counts them, RPS is their rate, Gbps counts response
	// bodies, WireGbps the TLS bytes read from the sockets.
	// Reconnects (throughput; nil in CPS records and older ones) counts the
	// window's connections opened after the device closed a kept-alive
	// one: handshakes inside a bulk measurement.
	Requests          *int64   `json:"requests,omitempty"`
	RPS               *float64 `json:"requests_per_s,omitempty"`
	Gbps              *float64 `json:"gbps,omitempty"`
	WireGbps          *float64 `json:"wire_gbps,omitempty"`
	Reconnects        *int64   `json:"reconnects,omitempty"`
	ConnectionsOpened int64    `json:"connections_opened"`
	Resumed           int64    `json:"resumed"`    // window errors of class resumed (not offered)
	Handshakes        int64    `json:"handshakes"` // client-completed TLS handshakes, whole run
	Errors            Errors   `json:"errors"`
	Bytes             Bytes    `json:"bytes"`
	// Closes says how the connections ended (CPS only; nil otherwise),
	// the preflight's included (unlike Whole).
	Closes *Closes `json:"closes,omitempty"`
	// HTTP2 is what an HTTP/2 run's first connection to answer exchanged
	// in SETTINGS; nil over HTTP/1.1.
	HTTP2 *HTTP2 `json:"http2,omitempty"`
	// Transport is "quic" for a run over QUIC (HTTP/3: no TCP connect
	// phase in its latencies), "" over TCP; QUIC is its statistics.
	Transport string `json:"transport,omitempty"`
	QUIC      *QUIC  `json:"quic,omitempty"`
	// Resumption splits the handshakes into full and resumed ones in a run
	// that offered sessions; nil in one that did not (SR=0).
	Resumption *Resumption `json:"resumption,omitempty"`

	Latency    map[string]Percentiles `json:"latency_us"`
	Histograms map[string]string      `json:"histograms"` // phase → HdrHistogram V2 compressed, base64
	OutOfRange int64                  `json:"latency_out_of_range,omitempty"`
	Series     []Second               `json:"series"`
	Whole      Whole                  `json:"whole_run"`
	Client     Client                 `json:"client"`
	// Noise is the machine's own noise over the steady window (Linux
	// only: nil elsewhere, or when the window was never reached).
	Noise *Noise `json:"noise,omitempty"`
	// NoiseUnmeasured says why Noise is nil when the run had a steady
	// window to measure it over (the measurement's own error); "" when
	// it was measured, or in records made before it.
	NoiseUnmeasured string `json:"noise_unmeasured,omitempty"`
	// Device is the device's own counters over the run (see Device); nil
	// when the DUT names none.
	Device *Device `json:"device,omitempty"`
	// TCP is the kernel's account of the window's connections (tcp.go):
	// retransmissions, resets, smoothed RTT; nil in records made before it,
	// or when no connection was measured.
	TCP *TCP `json:"tcp,omitempty"`
	// Names is how the connections were spread over the run's server
	// names (names.go); nil for a run of one name.
	Names *Names `json:"names,omitempty"`
	// Timeline is the run's ramp–sustain–ramp timeline (RFC 9411 §4.3.4);
	// nil for a run without ramps.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Objects is each object's share of the window (objects.go); nil for a
	// run that asked for one path.
	Objects []ObjectStats `json:"objects,omitempty"`

	// Agent identifies the agent that made this run when it was one shard
	// of a distributed run (--shard, --start-at); nil for a lone run.
	Agent *Agent `json:"agent,omitempty"`
	// Agents lists the agents a merged record was made from, each with its
	// own host, CPU and start skew; empty for a record of one process.
	Agents []AgentRun `json:"agents,omitempty"`
}

// Agent is one agent's identity in a distributed run.
type Agent struct {
	Name   string `json:"name"`   // --agent, or host-pid
	Shard  int    `json:"shard"`  // i of --shard i/N (0-based)
	Shards int    `json:"shards"` // N
	// StartAt is the agreed start (--start-at); zero when none was given.
	StartAt time.Time `json:"start_at,omitempty"`
	// StartSkewMS is the actual start minus StartAt, in milliseconds.
	StartSkewMS float64 `json:"start_skew_ms"`
}

// AgentRun is what a merged record keeps of each agent's run.
type AgentRun struct {
	Agent
	Host   Host   `json:"host"`
	Client Client `json:"client"`
	Noise  *Noise `json:"noise,omitempty"`
	// NoiseUnmeasured is the agent's Run.NoiseUnmeasured.
	NoiseUnmeasured string    `json:"noise_unmeasured,omitempty"`
	Started         time.Time `json:"started"`
	Ended           time.Time `json:"ended"`
	Complete        bool      `json:"complete"`
	Transactions    int64     `json:"transactions"`
	Errors          int64     `json:"errors"`
	// SteadyStartS and DurationS are the agent's steady window: it began
	// SteadyStartS after Started and lasted DurationS.
	SteadyStartS float64 `json:"steady_start_s"`
	DurationS    float64 `json:"duration_s"`
}

// ProtocolName is the protocol that carried the run: Protocol, or
// vocab.DefaultProtocol (HTTP/1.1) in a record that names none.
func (r *Run) ProtocolName() string { return cmp.Or(r.Protocol, vocab.DefaultProtocol) }

// HasThroughput says whether the record has throughput rates (any of
// Requests, RPS, Gbps, WireGbps; Fill and Merge set all four).
func (r *Run) HasThroughput() bool {
	return r.Requests != nil || r.RPS != nil || r.Gbps != nil || r.WireGbps != nil
}

// Value returns *p, or zero when p is nil: a rate a record does not have.
func Value[T int64 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// Target is what was measured: the device's identity. Reports group
// records by DUT when it is given, else by (Address, ServerName,
// LeafSHA256); Merge refuses records whose identities differ.
type Target struct {
	// DUT is the device's name (--dut, a plan's DUT); empty when not given.
	DUT        string `json:"dut,omitempty"`
	URL        string `json:"url"`
	Address    string `json:"address"` // the IP:port dialled (after --resolve and name resolution)
	ServerName string `json:"server_name,omitempty"`
	// LeafSHA256 is the SHA-256 of the DER leaf certificate the device
	// presented on the run's first verified connection, lowercase hex;
	// empty when no connection was verified.
	LeafSHA256 string `json:"leaf_sha256,omitempty"`
	// InProcess is true when the reference target ran inside the generator.
	InProcess bool `json:"in_process,omitempty"`
	// InsecureSkipVerify records that chain verification was skipped.
	InsecureSkipVerify bool   `json:"insecure_skip_verify"`
	CAFile             string `json:"ca_file,omitempty"`
	// ClientCert is the client certificate the run presented when the
	// device asked for one (mutual TLS); nil: none.
	ClientCert *ClientCert `json:"client_cert,omitempty"`
}

// ClientCert describes a run's client certificate (never its key).
type ClientCert struct {
	Key    string `json:"key"`    // "ECDSA P-256", "RSA 2048", …
	SHA256 string `json:"sha256"` // of its DER encoding, lowercase hex
	// Source is where it came from: "file" (--cert), "ca_file" (issued for
	// the run by --client-ca) or "generated" (issued by a CA made for the run).
	Source string `json:"source"`
	// Requested counts the handshakes, the preflight's included, in which
	// the device asked for it (each was presented it).
	Requested int64 `json:"requested"`
}

// Tool identifies the generator build.
type Tool struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
}

// Host describes the generator machine.
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model,omitempty"`
}

// Negotiated is what the handshakes negotiated (all verified against the
// profile; taken from the first verified connection).
type Negotiated struct {
	Version     string `json:"version"`
	CipherSuite string `json:"cipher_suite"`
	OpenSSL     string `json:"cipher_suite_openssl,omitempty"`
	Group       string `json:"group"`
	CertKey     string `json:"cert_key"`
	// SuitePinned is false for TLS 1.3, where the suite is observed.
	SuitePinned bool `json:"suite_pinned"`
	// ALPN is the application protocol negotiated (the profile's
	// expect.alpn, verified); "" when the profile offered none.
	ALPN string `json:"alpn,omitempty"`
}

// Preflight is the one complete transaction made before any load, exactly
// as the load makes them (connection, handshake verified against the
// profile, request, whole response checked). It is counted neither in the
// window nor in whole_run: a server's counters see whole_run plus these.
// When it fails, no load is sent and the record holds nothing else.
type Preflight struct {
	OK         bool  `json:"ok"`
	DurationUS int64 `json:"duration_us"`
	// Transactions is how many preflight transactions were made (1, up
	// to 3 when the first ones time out or are reset; a merged record: the
	// agents' sum), Handshakes how many of them completed a TLS handshake.
	// BodySize is the body of the last one (the success, or the last
	// failure).
	Transactions int64 `json:"transactions"`
	Handshakes   int64 `json:"handshakes"`
	// Resumed: how many of the handshakes resumed a session (a run that
	// resumes checks that the server takes one).
	Resumed int64 `json:"resumed,omitempty"`
	// Requests: how many were answered (2 for a resuming preflight's
	// success); absent in older records (read as 1 when OK).
	Requests int64 `json:"requests,omitempty"`
	BodySize int64 `json:"body_size"`
	// Class and Error say why it failed (merged: the first agent's).
	Class vocab.Class `json:"class,omitempty"`
	Error string      `json:"error,omitempty"`
	// FailedAttempts are the transactions that failed, in order (merged:
	// the agents' in turn); a failed preflight's last is Class and Error.
	FailedAttempts []PreflightAttempt `json:"failed_attempts,omitempty"`
	// Server is the Server header of the preflight's first response (e.g.
	// "nginx/1.22.1"): the device's software as it names itself.
	Server string `json:"server,omitempty"`
}

// PreflightAttempt is a failed preflight transaction: its class and error.
type PreflightAttempt struct {
	Class vocab.Class `json:"class"`
	Error string      `json:"error,omitempty"`
}

// Answer is the preflight's failure: its class, and its error when that
// says more ("status 404 for /x", not "status (status 404 for /x)").
func (p *Preflight) Answer() string {
	c := p.Class.String()
	if p.Error == "" || strings.HasPrefix(p.Error, c+" ") {
		return cmp.Or(p.Error, c)
	}
	return c + " (" + p.Error + ")"
}

// Tries names the preflight's failed attempts by class, in the order they
// first failed: "3 attempts failed: reset, handshake_timeout ×2"; "" when
// none failed.
func (p *Preflight) Tries() string {
	n := map[vocab.Class]int{}
	var parts []string
	for _, a := range p.FailedAttempts {
		if n[a.Class]++; n[a.Class] == 1 {
			parts = append(parts, a.Class.String())
		}
	}
	for i, c := range parts {
		if k := n[vocab.Class(c)]; k > 1 {
			parts[i] += fmt.Sprintf(" ×%d", k)
		}
	}
	if s := "s"; len(parts) > 0 {
		if len(p.FailedAttempts) == 1 {
			s = ""
		}
		return fmt.Sprintf("%d attempt%s failed: %s", len(p.FailedAttempts), s, strings.Join(parts, ", "))
	}
	return ""
}

// Failed returns why a run produced no measurement of its own making: its
// preflight failed, or it was aborted (Load.Aborted); "" otherwise.
func (r *Run) Failed() string {
	if p := r.Preflight; p != nil && !p.OK {
		if len(p.FailedAttempts) > 1 {
			return "preflight failed (" + p.Tries() + "): " + p.Answer()
		}
		return "preflight failed: " + p.Answer()
	}
	if r.Load.Aborted != "" {
		return "aborted: " + r.Load.Aborted
	}
	return ""
}

// Load is how load was applied.
type Load struct {
	Mode        string  `json:"mode"` // "closed" or "open"
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"`
	Late        int64   `json:"late,omitempty"`    // open loop: started >1 ms after intended
	Dropped     int64   `json:"dropped,omitempty"` // open loop: never started (no worker free)
	Sources     int     `json:"source_addresses,omitempty"`
	// PreOpened is how many connections were opened (and verified) before
	// the load started, PreOpenFailed how many of those failed (warm-up
	// errors; the worker tried again in the window). Throughput only.
	PreOpened     int64 `json:"pre_opened,omitempty"`
	PreOpenFailed int64 `json:"pre_open_failed,omitempty"`
	// ConnectionsHeld is how many connections were open when the window
	// ended, ConnectionsHeldPeak the most open at once (merged: the sum of
	// the agents' peaks, an upper bound). Both -1 when not counted.
	ConnectionsHeld     int64 `json:"connections_held"`
	ConnectionsHeldPeak int64 `json:"connections_held_peak"`
	// Attempts is how many transactions the workers started, the whole
	// run (pre-opens included, the preflight not); Backoffs how many times
	// a worker waited after consecutive failures before trying again.
	Attempts int64 `json:"attempts"`
	Backoffs int64 `json:"backoffs,omitempty"`
	// Abandoned is how many transactions were still in flight when the
	// drain bound expired after the window (or an interruption): each is
	// also an error of class abandoned, in the window's errors when it
	// started in the window (a merged record: the agents' sum).
	Abandoned int64 `json:"abandoned,omitempty"`
	// Aborted, if set, says why the run was stopped early: nothing
	// succeeded for the abort bound (the last failure's class and error).
	Aborted string `json:"aborted,omitempty"`

	// Scheduled is how many starts the open loop intended (run or
	// dropped, whole run); DroppedShare is Dropped ÷ Scheduled.
	Scheduled    int64   `json:"scheduled,omitempty"`
	DroppedShare float64 `json:"dropped_share,omitempty"`
	// LatencyLowerBound marks an open-loop run that dropped starts: the
	// dropped ones are in no histogram, so its latencies are lower bounds.
	LatencyLowerBound bool `json:"latency_lower_bound,omitempty"`
	// StartLagMaterial marks an open-loop run whose own start lateness
	// (latency_us.schedule_lag) is a material part of its latency: its p50
	// or p99 above StartLagShare of the total's.
	StartLagMaterial bool `json:"start_lag_material,omitempty"`
}

// HTTP2 is the SETTINGS (RFC 9113 §6.5) of an HTTP/2 run's first
// connection to answer a request, by their names (MAX_CONCURRENT_STREAMS):
// the server's, whether it acknowledged the client's, and the client's
// own, with the connection's flow-control window the client opened.
type HTTP2 struct {
	ServerSettings   map[string]uint32 `json:"server_settings"`
	SettingsAcked    bool              `json:"settings_acked"`
	ClientSettings   map[string]uint32 `json:"client_settings"`
	ConnectionWindow uint32            `json:"connection_window"`
}

// Closes counts how the connections that read a complete response ended,
// whole run (CPS). The server closes first: after its close_notify alert the
// client waits (within the read deadline) for its TCP FIN, so that the
// TIME_WAIT state stays with the server.
type Closes struct {
	// ServerFirst: the server's FIN came before the client closed.
	ServerFirst int64 `json:"server_first"`
	// ClientFirst: the read deadline came first and the client closed
	// first (its side then holds the TIME_WAIT, unless --linger0).
	ClientFirst int64 `json:"client_first"`
	// NoCloseNotify: the server closed the TCP connection without a TLS
	// close_notify alert.
	NoCloseNotify int64 `json:"no_close_notify"`
	// FirstByteMerged: successful transactions whose response's first
	// byte may carry a later segment's receive time (the kernel merged a
	// segment that arrived before the client read the first one): their
	// TTFB is an upper bound and their transfer a lower bound.
	FirstByteMerged int64 `json:"first_byte_merged,omitempty"`
}

// Histogram is the histogram type of the shared geometry (NewHistogram).
type Histogram = hdr.Histogram

// SetHistogram sets the phase's histogram of the record and its percentiles.
func (r *Run) SetHistogram(p vocab.Phase, h *Histogram) error {
	name := p.String()
	lat, enc, err := summarizeEncoded(name, h)
	if err != nil {
		return err
	}
	if r.Latency == nil {
		r.Latency = map[string]Percentiles{}
	}
	if r.Histograms == nil {
		r.Histograms = map[string]string{}
	}
	r.Latency[name], r.Histograms[name] = lat, enc
	return nil
}

// summarizeEncoded returns h's percentiles and its encoding as the record
// keeps it (V2 compressed, base64); name says which histogram in the error.
func summarizeEncoded(name string, h *Histogram) (Percentiles, string, error) {
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return Percentiles{}, "", fmt.Errorf("metrics: encoding the %s histogram: %w", name, err)
	}
	return Summarize(h), string(enc), nil
}

// startLagShare is the share of the total latency (at p50 or p99) above
// which an open loop's own start lateness is material.
const startLagShare = 0.05

// SetLoadMarks sets the open loop's marks from the record's counts and
// histograms: the dropped share and lower bound, and whether the
// generator's own lateness is material.
func (r *Run) SetLoadMarks() {
	l := &r.Load
	l.DroppedShare, l.LatencyLowerBound, l.StartLagMaterial = 0, false, false
	if l.Mode != "open" {
		return
	}
	if l.Scheduled > 0 {
		l.DroppedShare = float64(l.Dropped) / float64(l.Scheduled)
	}
	l.LatencyLowerBound = l.Dropped > 0
	lag, total := r.Percentiles(vocab.PhaseScheduleLag), r.Percentiles(vocab.PhaseTotal)
	if lag.Count > 0 && total.Count > 0 {
		l.StartLagMaterial = float64(lag.P50) > startLagShare*float64(total.P50) ||
			float64(lag.P99) > startLagShare*float64(total.P99)
	}
}

// Errors counts failed transactions of the steady-state window.
type Errors struct {
	Total    int64                  `json:"total"`
	ByClass  map[vocab.Class]int64  `json:"by_class"`
	Examples map[vocab.Class]string `json:"examples,omitempty"`
}

// Bytes counts the steady-state window's bytes.
type Bytes struct {
	In  int64 `json:"in"`  // application bytes received (headers and bodies)
	Out int64 `json:"out"` // application bytes sent (requests)
	// Payload is the body bytes of successful transactions; PayloadPartial
	// the body bytes received by failed ones (not in Gbps).
	Payload        int64 `json:"payload"`
	PayloadPartial int64 `json:"payload_partial"`
	WireIn         int64 `json:"wire_in"`  // TLS bytes read from sockets
	WireOut        int64 `json:"wire_out"` // TLS bytes written to sockets
}

// Whole counts the whole run, warm-up and drain included, for reconciling
// with a server's counters.
type Whole struct {
	Transactions      int64 `json:"transactions"`
	Errors            int64 `json:"errors"`
	ConnectionsOpened int64 `json:"connections_opened"`
	// Resumed counts the handshakes that resumed a session (a device's
	// reuse counter sees these plus the preflight's).
	Resumed int64 `json:"resumed,omitempty"`
}

// Client is the generator's own resource use during the run.
type Client struct {
	CPUSeconds  float64 `json:"cpu_s"`
	UserS       float64 `json:"user_s"`
	SysS        float64 `json:"sys_s"`
	MaxRSSBytes int64   `json:"max_rss_bytes"`
	Cores       int     `json:"cores"`
	// Utilization is CPU seconds ÷ (wall seconds × cores), 0..1.
	Utilization float64 `json:"utilization"`
	// CPUPerTxnUS is client CPU µs per completed transaction (whole run).
	CPUPerTxnUS float64 `json:"cpu_per_transaction_us,omitempty"`
	// IncludesTarget is true when an in-process target's CPU is included.
	IncludesTarget bool `json:"includes_target,omitempty"`
	// GeneratorBound is true when Utilization was above 90%: the generator,
	// not the target, may have set the pace.
	GeneratorBound bool `json:"generator_bound"`
}

// Noise is the machine's own noise over a run's steady window, measured
// from /proc (bench/sysnoise): the CPU steal, and the CPU of everything
// that is neither the generator (this process) nor a DUT process listed in
// the run's spec. Cores are CPU-seconds per second of the window; a share
// is of the whole machine (all its CPUs), 0..1.
type Noise struct {
	WindowS float64 `json:"window_s"` // the interval measured
	CPUs    int     `json:"cpus"`     // the machine's online CPUs
	// StealShare is the machine's CPU time its hypervisor gave to others.
	StealShare float64 `json:"steal_share"`
	// OtherCores is the CPU of the machine's busy time that is neither
	// the generator's nor the listed DUT processes'; OtherShare is it ÷ CPUs.
	OtherCores float64 `json:"other_cores"`
	OtherShare float64 `json:"other_share"`
	// GeneratorCores is this process's CPU over the window.
	GeneratorCores float64 `json:"generator_cores"`
	// DUTCores is the CPU of the DUT processes on this machine that the
	// spec listed and that were measured at both ends of the window
	// (DUTProcesses of them); nil when none was.
	DUTCores     *float64 `json:"dut_cores,omitempty"`
	DUTProcesses int      `json:"dut_processes,omitempty"`
	DUTCPUs      int      `json:"dut_cpus,omitempty"` // the CPUs their threads may run on; 0: unknown
}

// Percentiles summarises one phase in microseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
}

// Summarize computes the percentiles and mean of h as HdrHistogram's
// reference implementation does (ValueAtPercentile, Mean).
func Summarize(h *hdr.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		Count: h.TotalCount(),
		Min:   h.Min(),
		Mean:  Mean(h),
		P50:   ValueAtPercentile(h, 50),
		P90:   ValueAtPercentile(h, 90),
		P99:   ValueAtPercentile(h, 99),
		P999:  ValueAtPercentile(h, 99.9),
		Max:   h.Max(),
	}
}

// Fill sets the record's counts, rates, percentiles and encoded histograms
// from a snapshot of a steady window of length window. The rates are those
// of r.Engine.
func (r *Run) Fill(s Snapshot, window time.Duration) error {
	r.DurationS = window.Seconds()
	r.Transactions = s.OK
	per := func(v float64) float64 { return divide(v, window.Seconds()) }
	switch r.Engine {
	case vocab.EngineCPS:
		r.CPS = new(per(float64(s.OK)))
	case vocab.EngineThroughput:
		r.Requests, r.RPS = new(s.OK), new(per(float64(s.OK)))
		r.Gbps, r.WireGbps = new(per(float64(s.Bytes.Payload)*8)/1e9), new(per(float64(s.Bytes.WireIn)*8)/1e9)
	}
	r.Errors = Errors{ByClass: s.Errors, Examples: s.Examples}
	for _, v := range s.Errors {
		r.Errors.Total += v
	}
	r.Resumed = s.Errors[vocab.ClassResumed]
	r.Handshakes = s.Handshakes
	r.Bytes = s.Bytes
	r.ConnectionsOpened = s.Opened
	r.OutOfRange = s.OutOfRange
	r.Whole = Whole{Transactions: s.AllOK, Errors: s.AllErrors, ConnectionsOpened: s.AllOpened, Resumed: s.AllResumed}
	r.Latency = make(map[string]Percentiles, vocab.NumTimed)
	r.Histograms = make(map[string]string, vocab.NumTimed)
	for p, h := range s.Hist {
		if err := r.SetHistogram(vocab.Phase(p), h); err != nil {
			return err
		}
	}
	var err error
	r.TCP, err = fillTCP(s.TCP)
	return err
}

// divide is v over by: a rate over seconds, a mean over a count; 0 when
// by is not positive (no time, no count).
func divide(v, by float64) float64 {
	if by <= 0 {
		return 0
	}
	return v / by
}

// Percentiles returns the phase's percentiles in the record (latency_us);
// zero when the record has none.
func (r *Run) Percentiles(p vocab.Phase) Percentiles { return r.Latency[p.String()] }

// Histogram decodes the named phase's histogram (a key of Histograms, a
// vocab.Phase's name) from the record.
func (r *Run) Histogram(phase string) (*hdr.Histogram, error) {
	enc, ok := r.Histograms[phase]
	if !ok {
		return nil, fmt.Errorf("metrics: record has no %q histogram", phase)
	}
	h, err := hdr.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("metrics: decoding %s histogram: %w", phase, err)
	}
	return h, nil
}

// ReadRun reads a run record and checks its schema.
func ReadRun(file string) (*Run, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r, err := DecodeRun(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

// DecodeRun decodes a run record and validates it (Validate): its schema,
// every field known (a misspelled one is an error), counts, rates,
// percentiles, window, series and histograms. A record that is not valid
// gets a *vocab.FieldError naming the field.
func DecodeRun(data []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a run record: %w", err)
	}
	if r.Schema != Schema {
		return nil, &vocab.FieldError{Field: "schema", Msg: fmt.Sprintf("%q, want %q", r.Schema, Schema)}
	}
	if err := CheckFields(data, &r); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// WriteJSON writes the record as indented JSON, readable by all (0644), as
// outfile.WriteOut: to stdout when file is "-", a FIFO within ctx (its wait
// said on stderr, nil: nowhere), any other file atomically.
func (r *Run) WriteJSON(ctx context.Context, file string, stdout, stderr io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteOut(ctx, file, append(data, '\n'), 0o644, stdout, stderr)
}

// QUIC is an HTTP/3 run's own account of its QUIC connections in place of
// TCP_INFO: quic-go's connection statistics summed at each connection's
// close, whole run (the preflight's included). Bytes are UDP payload (QUIC
// packets, without UDP and IP headers); packets declared lost may arrive
// later (quic-go's counts do not take them back).
type QUIC struct {
	Connections     int64 `json:"connections"`
	PacketsSent     int64 `json:"packets_sent"`
	PacketsReceived int64 `json:"packets_received"`
	PacketsLost     int64 `json:"packets_lost"`
	BytesSent       int64 `json:"bytes_sent"`
	BytesReceived   int64 `json:"bytes_received"`
	BytesLost       int64 `json:"bytes_lost"`
	// PTOs is cps's probe timeouts (absent over throughput).
	PTOs *QUICPTOs `json:"ptos,omitempty"`
	// EarlyData*: cps with early data (0-RTT): the connections whose
	// request the server took as 0-RTT data, and those it refused (the
	// request then made again in 1-RTT); absent without.
	EarlyDataAccepted int64  `json:"early_data_accepted,omitempty"`
	EarlyDataRejected int64  `json:"early_data_rejected,omitempty"`
	Version           string `json:"version,omitempty"` // the QUIC version of the first connection closed (v1)
	GSO               bool   `json:"gso"`               // a connection sent with UDP GSO
	// Sockets: "per_connection" (a UDP socket per connection) or
	// "shared" (one socket, demultiplexed by connection ID).
	Sockets string `json:"sockets"`
}

// QUICPTOs is the probe timeouts of a cps run's QUIC connections (RFC 9002
// §6.2: no acknowledgment in time, probes sent): all of them, those in the
// Initial and Handshake packet number spaces (TCP's SYN retransmissions'
// counterpart), and the connections that had any. quic-go reports them as
// qlog events only, which cost client CPU per packet (http3's trace.go):
// throughput, whose connections carry many packets, does not count them.
type QUICPTOs struct {
	Count       int64 `json:"count"`
	Handshake   int64 `json:"handshake"`
	Connections int64 `json:"connections"`
}

// SetQUIC makes r the record of a run over QUIC: its transport and
// statistics, and no TCP connect phase (none happened: its percentiles
// and histogram are dropped rather than shown as zeros).
func (r *Run) SetQUIC(q *QUIC) {
	r.Transport, r.QUIC = "quic", q
	delete(r.Latency, vocab.PhaseConnect.String())
	delete(r.Histograms, vocab.PhaseConnect.String())
	r.TCP = nil
}

// mergeQUIC sums the agents' QUIC statistics; nil when none has any.
func mergeQUIC(ins []*mergeInput) *QUIC {
	var m *QUIC
	for _, in := range ins {
		q := in.r.QUIC
		switch {
		case q == nil:
		case m == nil:
			c := *q
			m = &c
		default:
			m.Connections += q.Connections
			m.PacketsSent += q.PacketsSent
			m.PacketsReceived += q.PacketsReceived
			m.PacketsLost += q.PacketsLost
			m.BytesSent += q.BytesSent
			m.BytesReceived += q.BytesReceived
			m.BytesLost += q.BytesLost
			m.PTOs = m.PTOs.Add(q.PTOs)
			m.EarlyDataAccepted += q.EarlyDataAccepted
			m.EarlyDataRejected += q.EarlyDataRejected
			m.GSO = m.GSO || q.GSO
		}
	}
	return m
}

// checkQUIC checks a record's transport: "" (TCP) or "quic", whose
// record has its statistics, and neither a connect phase nor TCP_INFO.
func (r *Run) checkQUIC(c *Checker) {
	_, connect := r.Latency[vocab.PhaseConnect.String()]
	switch {
	case r.Transport != "" && r.Transport != "quic":
		c.Failf("transport", "%q, want quic or none (TCP)", r.Transport)
	case r.Transport == "" && r.QUIC != nil:
		c.Failf("quic", "set in a record whose transport is TCP")
	case r.Transport == "quic" && (connect || r.TCP != nil):
		c.Failf("transport", "quic, but the record has a TCP connect phase or TCP_INFO")
	}
	if q := r.QUIC; q != nil {
		c.nums("quic.", []num{{"connections", q.Connections}, {"packets_sent", q.PacketsSent},
			{"packets_received", q.PacketsReceived}, {"packets_lost", q.PacketsLost}})
	}
	if p := r.QUIC.ptos(); p != nil {
		c.nums("quic.ptos.", []num{{"count", p.Count}, {"handshake", p.Handshake}, {"connections", p.Connections}})
		switch {
		case p.Handshake > p.Count:
			c.Failf("quic.ptos.handshake", "%d, more than count (%d)", p.Handshake, p.Count)
		case p.Connections > min(r.QUIC.Connections, p.Count):
			c.Failf("quic.ptos.connections", "%d, more than quic.connections (%d) or count (%d)",
				p.Connections, r.QUIC.Connections, p.Count)
		}
	}
}

// ptos is q's PTOs, nil without q.
func (q *QUIC) ptos() *QUICPTOs {
	if q == nil {
		return nil
	}
	return q.PTOs
}

// Add returns p's counts plus o's in a new QUICPTOs; nil when both are nil.
func (p *QUICPTOs) Add(o *QUICPTOs) *QUICPTOs {
	if p == nil && o == nil {
		return nil
	}
	var s QUICPTOs
	for _, x := range []*QUICPTOs{p, o} {
		if x != nil {
			s.Count, s.Handshake, s.Connections = s.Count+x.Count, s.Handshake+x.Handshake, s.Connections+x.Connections
		}
	}
	return &s
}
