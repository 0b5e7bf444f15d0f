// Package metrics records transactions into sharded HDR histograms and
// counters, and defines the persisted run record. Of tlsbench it imports only
// the vocabulary (bench/vocab) and the file writer (bench/outfile).
//
// All latencies are microseconds, in one histogram geometry (Lowest, Highest,
// SigFigs), so that histograms from any run or agent merge exactly.
package metrics

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

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
	if sec.Transactions > 0 {
		sec.TotalMean = float64(sum) / float64(sec.Transactions)
	}
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
	for k, v := range o.Errors {
		s.Errors[k] += v
	}
	for k, v := range o.Examples {
		if _, ok := s.Examples[k]; !ok {
			s.Examples[k] = v
		}
	}
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
	if o.ResumedHS != nil {
		if s.ResumedHS == nil {
			s.ResumedHS = NewHistogram()
		}
		s.ResumedHS.Merge(o.ResumedHS)
	}
	s.mergeObjects(o)
}

// clip shortens s to at most n bytes (an error may quote what a server sent).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
