package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// tcpRun records n transactions, every k-th of whose connection
// retransmitted (one SYN among two segments), one RST, in a window of 10 s
// from start; warm-up connections count in the seconds only.
func tcpRun(t *testing.T, start time.Time, n, k int, rtt uint32) *metrics.Run {
	t.Helper()
	rec := metrics.NewRecorder(3, start)
	for i := range n {
		s := &metrics.Sample{Steady: i%10 != 0, Opened: true, Handshake: true}
		s.Dur[vocab.PhaseTotal], s.Dur[vocab.PhaseConnect] = time.Millisecond, 100*time.Microsecond
		c := metrics.TCPConn{RTTUS: rtt + uint32(i)}
		if i%k == 0 {
			c.Retransmits, c.SynRetransmits = 2, 1
		}
		c.Reset = i == 1
		s.TCP.Add(c)
		rec.Record(i, s)
	}
	// A kept-alive connection closed after the window, held in it.
	rec.RecordTCP(0, metrics.TCPConn{Retransmits: 5, RTTUS: 7}, true)
	sec := rec.Tick(start.Add(time.Second))
	r := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Profile: "p", Started: start, Ended: start.Add(12 * time.Second),
		SteadyStartS: 1, Target: metrics.Target{Address: "dut:443"}, Complete: true, Series: []metrics.Second{sec},
		Load: metrics.Load{Mode: "closed", Concurrency: 4}}
	if err := r.Fill(rec.Snapshot(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTCPRecord: the tcp block counts the window's connections, the series
// every connection, and the record round-trips and validates.
func TestTCPRecord(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := tcpRun(t, start, 100, 4, 200)
	tcp := r.TCP
	// Steady: i%10 != 0 → 90 connections; of i%4 == 0 (25), those with
	// i%10 != 0: i%20 != 0 → 20; plus the kept-alive one.
	want := metrics.TCP{Connections: 91, Retransmits: 20*2 + 5, SynRetransmits: 20, ConnectionsWithRetransmits: 21, ResetsReceived: 1}
	got := *tcp
	got.RTT, got.RTTHist = metrics.Percentiles{}, ""
	if got != want {
		t.Errorf("tcp %+v, want %+v", got, want)
	}
	if tcp.RTT.Count != 91 || tcp.RTT.Min != 7 || tcp.RTT.Max < 299 || tcp.RTT.Max > 300 {
		t.Errorf("rtt %+v: want 91 values from 7 to 299 µs", tcp.RTT)
	}
	if s := r.Series[0]; s.TCPRetransmits != 25*2+5 || s.TCPSynRetransmits != 25 || s.TCPResets != 1 {
		t.Errorf("second %+v: want every connection's 55 retransmits, 25 SYNs, 1 reset", s)
	}
	if got := r.RetransmitRate(); got != 45.0/90 {
		t.Errorf("retransmit rate %v, want 45/90", got)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := metrics.DecodeRun(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.TCP.Retransmits != 45 || back.TCP.RTTHist != tcp.RTTHist {
		t.Errorf("decoded tcp %+v", back.TCP)
	}
	// A record without the block stays without it.
	r.TCP = nil
	data, _ = json.Marshal(r)
	if strings.Contains(string(data), `"tcp"`) {
		t.Errorf("a record without tcp writes one: %s", data)
	}
}

// TestTCPMerge: merging sums the counts and merges the RTT histograms
// exactly; a side that did not measure (not Linux) adds nothing.
func TestTCPMerge(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a, b := tcpRun(t, start, 100, 4, 200), tcpRun(t, start.Add(50*time.Millisecond), 60, 3, 900)
	a.Agent = &metrics.Agent{Name: "a", Shard: 0, Shards: 3}
	b.Agent = &metrics.Agent{Name: "b", Shard: 1, Shards: 3}
	c := tcpRun(t, start, 10, 1, 5)
	c.Agent = &metrics.Agent{Name: "c", Shard: 2, Shards: 3}
	c.TCP = &metrics.TCP{Unavailable: metrics.TCPUnavailable}
	m, err := metrics.Merge([]*metrics.Run{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.TCP.Unavailable != "" || m.TCP.Connections != a.TCP.Connections+b.TCP.Connections ||
		m.TCP.Retransmits != a.TCP.Retransmits+b.TCP.Retransmits || m.TCP.SynRetransmits != a.TCP.SynRetransmits+b.TCP.SynRetransmits ||
		m.TCP.ConnectionsWithRetransmits != a.TCP.ConnectionsWithRetransmits+b.TCP.ConnectionsWithRetransmits ||
		m.TCP.ResetsReceived != 2 {
		t.Errorf("merged %+v from %+v and %+v", m.TCP, a.TCP, b.TCP)
	}
	// The merged RTT percentiles are those of one recorder that saw both.
	rec := metrics.NewRecorder(1, start)
	for _, x := range []struct {
		n   int
		rtt uint32
	}{{100, 200}, {60, 900}} {
		for i := range x.n {
			s := &metrics.Sample{Steady: i%10 != 0}
			s.TCP.Add(metrics.TCPConn{RTTUS: x.rtt + uint32(i)})
			rec.Record(0, s)
		}
		rec.RecordTCP(0, metrics.TCPConn{RTTUS: 7}, true)
	}
	if want := metrics.Summarize(rec.Snapshot().TCP.RTT); m.TCP.RTT != want {
		t.Errorf("merged rtt %+v, want %+v", m.TCP.RTT, want)
	}
	var secs int64
	for _, s := range m.Series {
		secs += s.TCPRetransmits
	}
	if secs != a.Series[0].TCPRetransmits+b.Series[0].TCPRetransmits+c.Series[0].TCPRetransmits {
		t.Errorf("merged seconds retransmitted %d", secs)
	}
	// All unavailable: the merged record says so.
	a.TCP, b.TCP = c.TCP, c.TCP
	if m, err = metrics.Merge([]*metrics.Run{a, b, c}); err != nil || m.TCP == nil || m.TCP.Unavailable != metrics.TCPUnavailable {
		t.Errorf("merged unavailable: %+v, %v", m.TCP, err)
	}
}

// TestTCPValidate: inconsistent tcp blocks are refused, naming the field.
func TestTCPValidate(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		path string
		edit func(*metrics.TCP, *metrics.Second)
	}{
		{"tcp.syn_retransmits", func(x *metrics.TCP, _ *metrics.Second) { x.SynRetransmits = x.Retransmits + 1 }},
		{"tcp.connections_with_retransmits", func(x *metrics.TCP, _ *metrics.Second) { x.ConnectionsWithRetransmits = x.Connections + 1 }},
		{"tcp.resets_received", func(x *metrics.TCP, _ *metrics.Second) { x.ResetsReceived = -1 }},
		{"tcp.rtt_hist", func(x *metrics.TCP, _ *metrics.Second) { x.RTT.Count--; x.RTT.P999, x.RTT.Max = x.RTT.P99, x.RTT.P99 }},
		{"tcp.unavailable", func(x *metrics.TCP, _ *metrics.Second) { x.Unavailable = metrics.TCPUnavailable }},
		{"series[0].tcp_syn_retransmits", func(_ *metrics.TCP, s *metrics.Second) { s.TCPSynRetransmits = s.TCPRetransmits + 1 }},
	} {
		r := tcpRun(t, start, 40, 2, 100)
		c.edit(r.TCP, &r.Series[0])
		err := r.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.path) {
			t.Errorf("%s: %v", c.path, err)
		}
	}
}
