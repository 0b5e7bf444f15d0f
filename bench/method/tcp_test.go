package method_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
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

// tcpExec gives every other final run of a fakeExec a lossy path's
// retransmissions (12% per transaction) and the others a clean one's.
type tcpExec struct {
	*fakeExec
	finals int
}

func (e *tcpExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	r, err := e.fakeExec.Run(ctx, req)
	if err != nil || req.Phase != vocab.Final {
		return r, err
	}
	e.finals++
	r.TCP = &metrics.TCP{Connections: r.Transactions}
	if e.finals%2 == 1 {
		r.TCP.Retransmits, r.TCP.SynRetransmits, r.TCP.ConnectionsWithRetransmits = r.Transactions*12/100, 10, r.Transactions/10
	}
	return r, nil
}

// TestRetransmitsRejectedInCampaign: a campaign's final runs whose
// connections retransmitted above the default limit are rejected with the
// reason in the ledger and the summary; the clean ones are published.
func TestRetransmitsRejectedInCampaign(t *testing.T) {
	exec := &tcpExec{fakeExec: finalRunsExplored(func(level int) float64 { return curve(level) * 15 / 16 },
		func(n int) (float64, map[string]int64) { return 1500 + float64(n), nil })}
	s := oneCell(t, exec)
	c := s.Cells[0]
	var rejected, accepted int
	for _, r := range c.Runs {
		why := strings.Join(r.Reasons, "; ")
		switch {
		case r.Seq%2 == 1 && !r.Accepted && strings.Contains(why, "TCP retransmissions: 120 segments, 10 of them SYNs on 100 of 1000 connections, 12.00% per transaction, above max_retransmit_rate 1%"):
			rejected++
		case r.Seq%2 == 0 && r.Accepted:
			accepted++
		default:
			t.Errorf("run %d: accepted %v, %q", r.Seq, r.Accepted, why)
		}
	}
	if rejected == 0 || accepted < 3 || c.Value == 0 || int(c.Value)%2 == 1 {
		t.Errorf("%d rejected, %d accepted, published %v", rejected, accepted, c.Value)
	}
}

// TestJudgeQUIC: over QUIC (no tcp block) max_retransmit_rate judges the
// share of packets sent that were lost, with the figures in the reason; at
// the limit it passes.
func TestJudgeQUIC(t *testing.T) {
	r := &metrics.Run{Engine: vocab.EngineCPS, Complete: true, Transactions: 1000, Transport: "quic",
		QUIC: &metrics.QUIC{Connections: 1001, PacketsSent: 7000, PacketsLost: 140}}
	a := plan.DefaultMethod().Accept
	want := "QUIC losses: 140 of 7000 packets sent lost (2.00%), above max_retransmit_rate 1%"
	if why := strings.Join(method.Judge(a, r), "; "); why != want {
		t.Errorf("reasons %q, want %q", why, want)
	}
	r.QUIC.PacketsLost = 70 // 1%: at the limit
	if why := method.Judge(a, r); len(why) != 0 {
		t.Errorf("at the limit: %q", why)
	}
}
