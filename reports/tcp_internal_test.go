package reports

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestRunTCP: a run whose connect p99 reaches the initial RTO is flagged,
// one below it is not; a record without tcp and no stall adds nothing.
func TestRunTCP(t *testing.T) {
	run := func(p99 int64, tcp *metrics.TCP) *metrics.Run {
		return &metrics.Run{Transactions: 100, TCP: tcp,
			Latency: map[string]metrics.Percentiles{vocab.PhaseConnect.String(): {Count: 100, P99: p99}}}
	}
	if got := runTCP(run(999_999, nil)); got != nil {
		t.Errorf("no tcp, no stall: %+v", got)
	}
	stall := runTCP(run(1_000_000, &metrics.TCP{Connections: 100, Retransmits: 4, SynRetransmits: 3}))
	clean := runTCP(run(900, &metrics.TCP{Connections: 100}))
	if stall == nil || !stall.SynStall || stall.RetransmitRate != 0.04 || clean == nil || clean.SynStall {
		t.Fatalf("stall %+v, clean %+v", stall, clean)
	}
	if old := runTCP(run(3_000_000, nil)); old == nil || !old.SynStall {
		t.Errorf("an older record's stall is flagged from its latency: %+v", old)
	}
	s := &section{Runs: []runResult{{Seq: 1, TCP: clean}, {Seq: 2, TCP: stall}}}
	var text []string
	for _, b := range tcpBlocks(s) {
		text = append(text, string(b.(para)))
	}
	got := strings.Join(text, "\n")
	for _, want := range []string{
		"SYN retransmission stalls: connect p99 at or above the kernel's initial retransmission timeout (1.00 s): run 2 (connect p99 1.00 s, 3 SYN retransmissions)",
		"run 2: 4 (4.00% per transaction, 3 SYNs), 0 resets",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notes %q, want %q", got, want)
		}
	}
	if strings.Contains(got, "run 1") {
		t.Errorf("the clean run is noted: %q", got)
	}
}

// TestFootnoteEarlyData: a run that sent 0-RTT data says so in its
// footnote, with the device's answers.
func TestFootnoteEarlyData(t *testing.T) {
	r := &metrics.Run{Protocol: "http/3", Resumption: &metrics.Resumption{Ratio: 1, Mode: "psk"},
		QUIC: &metrics.QUIC{EarlyDataAccepted: 513, EarlyDataRejected: 2}}
	want := "SR=1 (psk), 0-RTT early data (513 accepted, 2 rejected), 1 request(s) per connection"
	if got := footnote(r, 0, ""); !strings.HasPrefix(got, want) {
		t.Errorf("footnote %q, want it to begin %q", got, want)
	}
}
