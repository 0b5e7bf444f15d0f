package reports

import (
	"fmt"
	"strings"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// initialRTOUS is the kernel's initial retransmission timeout (Linux
// TCP_TIMEOUT_INIT, RFC 6298: 1 s), µs: a connection whose SYN was lost
// connects after it at the earliest (then 3 s, 7 s...), so a connect p99 at
// or above it shows SYN retransmission stalls.
const initialRTOUS = 1_000_000

// RunTCP is what the report keeps of a run's TCP: the kernel's account of
// its connections (metrics.TCP) and whether its connect latency shows SYN
// retransmission stalls.
type RunTCP struct {
	Retransmits    int64 `json:"retransmits"`
	SynRetransmits int64 `json:"syn_retransmits"`
	ResetsReceived int64 `json:"resets_received"`
	// RetransmitRate is the retransmitted segments per transaction.
	RetransmitRate float64 `json:"retransmit_rate"`
	// ConnectP99US is the run's connect p99; SynStall is true when it is
	// at or above the kernel's initial RTO (InitialRTOUS).
	ConnectP99US int64 `json:"connect_p99_us"`
	SynStall     bool  `json:"syn_stall,omitempty"`
}

// runTCP summarises a run's TCP; nil when the record has no measurement and
// no stall (older records, other systems), so that their reports stay as
// they were.
func runTCP(r *metrics.Run) *RunTCP {
	p99 := r.Percentiles(vocab.PhaseConnect).P99
	stall := p99 >= initialRTOUS
	t := r.TCP
	if (t == nil || t.Unavailable != "") && !stall {
		return nil
	}
	out := &RunTCP{ConnectP99US: p99, SynStall: stall, RetransmitRate: r.RetransmitRate()}
	if t != nil {
		out.Retransmits, out.SynRetransmits, out.ResetsReceived = t.Retransmits, t.SynRetransmits, t.ResetsReceived
	}
	return out
}

// tcpBlocks notes, under a section's runs, those whose connect p99 shows SYN
// retransmission stalls, and the runs' retransmissions when there were
// any.
func tcpBlocks(s *section) []block {
	var stalls, retrans []string
	for _, r := range s.Runs {
		t := r.TCP
		if t == nil {
			continue
		}
		if t.SynStall {
			stalls = append(stalls, fmt.Sprintf("run %d (connect p99 %s, %d SYN retransmissions)",
				r.Seq, Micros(float64(t.ConnectP99US)), t.SynRetransmits))
		}
		if t.Retransmits > 0 || t.ResetsReceived > 0 {
			retrans = append(retrans, fmt.Sprintf("run %d: %d (%.2f%% per transaction, %d SYNs), %d resets",
				r.Seq, t.Retransmits, t.RetransmitRate*100, t.SynRetransmits, t.ResetsReceived))
		}
	}
	var out []block
	if len(stalls) > 0 {
		out = append(out, para(fmt.Sprintf("SYN retransmission stalls: connect p99 at or above "+
			"the kernel's initial retransmission timeout (%s): %s. "+
			"Their CPS includes connections that waited for a lost SYN to be sent again.",
			Micros(initialRTOUS), strings.Join(stalls, "; "))))
	}
	if len(retrans) > 0 {
		out = append(out, para("TCP segments retransmitted by the client (the kernel's TCP_INFO at each close): "+
			strings.Join(retrans, "; ")+"."))
	}
	return out
}
