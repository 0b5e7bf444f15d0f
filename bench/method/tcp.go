package method

import (
	"fmt"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// judgeTCP rejects a run whose connections retransmitted segments or
// received resets, per transaction, above the plan's limits. A record
// without the kernel's account (older, or not Linux) is not judged by them.
// Over QUIC (no TCP_INFO), max_retransmit_rate judges QUIC's own account:
// the share of the packets sent that were declared lost (each lost
// packet's frames are sent again), whole run.
func judgeTCP(a plan.Accept, r *metrics.Run) []string {
	if q := r.QUIC; q != nil && q.PacketsSent > 0 {
		if share, limit := float64(q.PacketsLost)/float64(q.PacketsSent), a.RetransmitLimit(); share > float64(limit) {
			return []string{fmt.Sprintf("QUIC losses: %d of %d packets sent lost (%.2f%%), above max_retransmit_rate %s",
				q.PacketsLost, q.PacketsSent, share*100, limit)}
		}
		return nil
	}
	t := r.TCP
	if t == nil || t.Unavailable != "" || r.Transactions+r.Errors.Total == 0 {
		return nil
	}
	var reasons []string
	if rate, limit := r.RetransmitRate(), a.RetransmitLimit(); rate > float64(limit) {
		syn := ""
		if t.SynRetransmits > 0 {
			syn = fmt.Sprintf(", %d of them SYNs", t.SynRetransmits)
		}
		reasons = append(reasons, fmt.Sprintf("TCP retransmissions: %d segments%s on %d of %d connections, "+
			"%.2f%% per transaction, above max_retransmit_rate %s",
			t.Retransmits, syn, t.ConnectionsWithRetransmits, t.Connections, rate*100, limit))
	}
	if rate, limit := r.ResetRate(), a.ResetLimit(); rate > float64(limit) {
		reasons = append(reasons, fmt.Sprintf("TCP resets received: %d connections (%.2f%% of transactions), "+
			"above max_reset_rate %s",
			t.ResetsReceived, rate*100, limit))
	}
	return reasons
}
