package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TCPConn is the kernel's account of one TCP connection (Linux TCP_INFO),
// read when the client closed it.
type TCPConn struct {
	// Retransmits is the segments the client retransmitted
	// (tcpi_total_retrans), its SYNs included.
	Retransmits uint32
	// SynRetransmits is how many of them were SYNs: tcpi_total_retrans
	// when connect returned, before any data was sent.
	SynRetransmits uint32
	// Reset: the peer's RST ended the connection before the client closed
	// it (the socket was already in TCP_CLOSE).
	Reset bool
	// RTTUS is the smoothed round-trip time (tcpi_rtt), µs; 0 when the
	// kernel had no sample.
	RTTUS uint32
}

// tcpClosed is the connections a transaction closed (a CPS transaction
// closes one; a throughput request at most two: the kept-alive connection
// the server had closed, and the one opened to ask again).
type tcpClosed struct {
	N     uint8
	Conns [2]TCPConn
}

// Add notes a connection the transaction closed.
func (t *tcpClosed) Add(c TCPConn) {
	if int(t.N) < len(t.Conns) {
		t.Conns[t.N] = c
		t.N++
	}
}

// tcpCounts are the counters of the connections measured at their close.
type tcpCounts struct {
	Connections, Retransmits, SynRetransmits, WithRetransmits, Resets int64
}

func (c *tcpCounts) add(x *TCPConn) {
	c.Connections++
	c.Retransmits += int64(x.Retransmits)
	c.SynRetransmits += int64(x.SynRetransmits)
	if x.Retransmits > 0 {
		c.WithRetransmits++
	}
	if x.Reset {
		c.Resets++
	}
}

func (c *tcpCounts) merge(o tcpCounts) {
	c.Connections += o.Connections
	c.Retransmits += o.Retransmits
	c.SynRetransmits += o.SynRetransmits
	c.WithRetransmits += o.WithRetransmits
	c.Resets += o.Resets
}

// add records in a shard's t a connection closed by a transaction, or at
// the end of the run, in the window or not, and counts it in the shard's
// interval iv.
func (s *tcpSnapshot) add(c *TCPConn, steady bool, iv *Second) {
	iv.TCPRetransmits += int64(c.Retransmits)
	iv.TCPSynRetransmits += int64(c.SynRetransmits)
	if c.Reset {
		iv.TCPResets++
	}
	if !steady {
		return
	}
	s.tcpCounts.add(c)
	if c.RTTUS > 0 {
		if s.RTT == nil {
			s.RTT = NewHistogram()
		}
		_ = s.RTT.RecordValue(min(int64(c.RTTUS), Highest))
	}
}

// RecordTCP adds a connection that was closed outside any transaction (a
// kept-alive connection held by a worker to the end of the run) to shard
// i; steady says whether it counts in the window (it was open in it).
func (r *Recorder) RecordTCP(i int, c TCPConn, steady bool) {
	sh := &r.shards[uint(i)%uint(len(r.shards))]
	sh.mu.Lock()
	sh.TCP.add(&c, steady, &sh.iv.Second)
	sh.mu.Unlock()
}

// tcpSnapshot is the TCP state of a Recorder's window (of a shard, or
// merged).
type tcpSnapshot struct {
	tcpCounts
	RTT *hdr.Histogram // smoothed RTT, µs, one value per connection that had one; nil until one
}

// merge merges a shard's window into s.
func (s *tcpSnapshot) merge(t *tcpSnapshot) {
	s.tcpCounts.merge(t.tcpCounts)
	mergeLazy(&s.RTT, t.RTT)
}

// TCPUnavailable is the record's tcp.unavailable where the kernel's
// TCP_INFO is not read.
const TCPUnavailable = "TCP_INFO is read on Linux only"

// TCP is the kernel's account (TCP_INFO, Linux) of the connections the
// client closed in the steady window: connections closed by transactions
// that started in it, and those held over its end (kept alive). On other
// systems only Unavailable is set.
type TCP struct {
	// Unavailable says why nothing was measured (TCPUnavailable).
	Unavailable string `json:"unavailable,omitempty"`
	// Connections is how many connections were measured at their close.
	Connections int64 `json:"connections"`
	// Retransmits is the segments they retransmitted, SYNs included;
	// SynRetransmits the SYNs among them (each ≈ 1 s, then 2 s, 3 s... of
	// connect); ConnectionsWithRetransmits how many retransmitted any.
	Retransmits                int64 `json:"retransmits"`
	SynRetransmits             int64 `json:"syn_retransmits"`
	ConnectionsWithRetransmits int64 `json:"connections_with_retransmits"`
	// ResetsReceived is how many were ended by the peer's RST.
	ResetsReceived int64 `json:"resets_received"`
	// RTT is their smoothed round-trip times (µs), RTTHist its histogram
	// (HdrHistogram V2 compressed, base64, the shared geometry).
	RTT     Percentiles `json:"rtt_us"`
	RTTHist string      `json:"rtt_hist,omitempty"`
}

// RetransmitRate is the retransmitted segments per transaction of the
// window (successes and errors); 0 when there is none.
func (r *Run) RetransmitRate() float64 {
	if r.TCP == nil {
		return 0
	}
	return perTransaction(r, r.TCP.Retransmits)
}

// ResetRate is the connections ended by the peer's RST per transaction of
// the window; 0 when there is none.
func (r *Run) ResetRate() float64 {
	if r.TCP == nil {
		return 0
	}
	return perTransaction(r, r.TCP.ResetsReceived)
}

func perTransaction(r *Run, n int64) float64 {
	if t := r.Transactions + r.Errors.Total; t > 0 {
		return float64(n) / float64(t)
	}
	return 0
}

// fillTCP sets the record's tcp block from a snapshot; nil when no
// connection was measured.
func fillTCP(s tcpSnapshot) (*TCP, error) {
	if s.Connections == 0 {
		return nil, nil
	}
	t := &TCP{
		Connections: s.Connections, Retransmits: s.Retransmits, SynRetransmits: s.SynRetransmits,
		ConnectionsWithRetransmits: s.WithRetransmits, ResetsReceived: s.Resets,
	}
	if s.RTT != nil {
		var err error
		if t.RTT, t.RTTHist, err = summarizeEncoded("tcp rtt", s.RTT); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// mergeTCP sums the agents' tcp blocks and merges their RTT histograms;
// nil when no record has one. It is unavailable only when every agent's
// is.
func mergeTCP(ins []*mergeInput) (*TCP, error) {
	var m *TCP
	h := NewHistogram()
	measured := false
	for _, in := range ins {
		t := in.r.TCP
		if t == nil {
			continue
		}
		if m == nil {
			m = &TCP{}
		}
		if t.Unavailable != "" {
			if m.Unavailable == "" && !measured {
				m.Unavailable = t.Unavailable
			}
			continue
		}
		measured = true
		m.Unavailable = ""
		m.Connections += t.Connections
		m.Retransmits += t.Retransmits
		m.SynRetransmits += t.SynRetransmits
		m.ConnectionsWithRetransmits += t.ConnectionsWithRetransmits
		m.ResetsReceived += t.ResetsReceived
		if err := mergeEncoded(h, t.RTTHist); err != nil {
			return nil, fmt.Errorf("metrics: %s: tcp rtt histogram: %w", in.label(), err)
		}
	}
	if measured && h.TotalCount() > 0 {
		var err error
		if m.RTT, m.RTTHist, err = summarizeEncoded("tcp rtt", h); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// checkTCP checks the tcp block: counts not negative and consistent, the
// RTT percentiles those of their histogram.
func checkTCP(c *Checker, t *TCP) {
	if t == nil {
		return
	}
	c.nums("tcp.", []num{{"connections", t.Connections}, {"retransmits", t.Retransmits},
		{"syn_retransmits", t.SynRetransmits}, {"connections_with_retransmits", t.ConnectionsWithRetransmits},
		{"resets_received", t.ResetsReceived}})
	switch {
	case t.Unavailable != "" && (t.Connections != 0 || t.RTTHist != ""):
		c.Failf("tcp.unavailable", "%q, but connections were measured", t.Unavailable)
	case t.SynRetransmits > t.Retransmits:
		c.Failf("tcp.syn_retransmits", "%d, more than retransmits (%d)", t.SynRetransmits, t.Retransmits)
	case t.ConnectionsWithRetransmits > t.Connections:
		c.Failf("tcp.connections_with_retransmits",
			"%d, more than connections (%d)", t.ConnectionsWithRetransmits, t.Connections)
	case t.ConnectionsWithRetransmits > t.Retransmits:
		c.Failf("tcp.connections_with_retransmits",
			"%d, more than retransmits (%d)", t.ConnectionsWithRetransmits, t.Retransmits)
	case t.ResetsReceived > t.Connections:
		c.Failf("tcp.resets_received", "%d, more than connections (%d)", t.ResetsReceived, t.Connections)
	}
	checkPercentiles(c, "tcp.rtt_us", t.RTT)
	if c.Err != nil {
		return
	}
	if t.RTT.Count > t.Connections {
		c.Failf("tcp.rtt_us.count", "%d, more than connections (%d)", t.RTT.Count, t.Connections)
		return
	}
	if t.RTTHist == "" {
		if t.RTT.Count != 0 {
			c.Failf("tcp.rtt_us", "has percentiles but tcp.rtt_hist is empty")
		}
		return
	}
	h, err := hdr.Decode([]byte(t.RTTHist))
	if err != nil {
		c.Failf("tcp.rtt_hist", "not an HdrHistogram: %v", err)
		return
	}
	if h.TotalCount() != t.RTT.Count {
		c.Failf("tcp.rtt_hist", "counts %d values, tcp.rtt_us.count says %d", h.TotalCount(), t.RTT.Count)
	}
}
