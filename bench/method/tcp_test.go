package method_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestJudgeTCP: retransmissions and resets above the plan's limits (1% per
// transaction by default) reject a run with the figures in the reason; at
// the limit, or without the kernel's account (not Linux, older records),
// they do not.
func TestJudgeTCP(t *testing.T) {
	r := &metrics.Run{Engine: vocab.EngineCPS, Complete: true, Transactions: 990, Errors: metrics.Errors{Total: 10},
		TCP: &metrics.TCP{Connections: 1000, Retransmits: 120, SynRetransmits: 30, ConnectionsWithRetransmits: 100, ResetsReceived: 20}}
	a := plan.DefaultMethod().Accept
	a.MaxErrors = 10
	why := strings.Join(method.Judge(a, r), "; ")
	for _, want := range []string{
		"TCP retransmissions: 120 segments, 30 of them SYNs on 100 of 1000 connections, 12.00% per transaction, above max_retransmit_rate 1%",
		"TCP resets received: 20 connections (2.00% of transactions), above max_reset_rate 1%",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("reasons %q, want %q", why, want)
		}
	}
	r.TCP.Retransmits, r.TCP.SynRetransmits, r.TCP.ConnectionsWithRetransmits, r.TCP.ResetsReceived = 10, 0, 10, 10 // 1%: at the limits
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("at the limits: %q", why)
	}
	zero := plan.Percent(0)
	a.MaxRetransmitRate, a.MaxResetRate = &zero, &zero
	if why := method.Judge(a, r); len(why) != 2 {
		t.Errorf("limits of 0: %q", why)
	}
	r.TCP = &metrics.TCP{Unavailable: metrics.TCPUnavailable}
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("without the kernel's account: %q", why)
	}
}
