package main

import (
	"fmt"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// tcpStatus is the status line's note of the second's TCP retransmissions
// and resets received, when there were any (Linux: TCP_INFO at each close).
func tcpStatus(s metrics.Second) string {
	out := ""
	if s.TCPRetransmits > 0 {
		out += fmt.Sprintf("  retrans %d", s.TCPRetransmits)
		if s.TCPSynRetransmits > 0 {
			out += fmt.Sprintf(" (SYN %d)", s.TCPSynRetransmits)
		}
	}
	if s.TCPResets > 0 {
		out += fmt.Sprintf("  resets %d", s.TCPResets)
	}
	return out
}
