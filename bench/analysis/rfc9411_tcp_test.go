package analysis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
)

// Criterion b from the kernel on §7.9's path: the CPS engine's kept-alive
// connections (100 requests each, 100 ms apart: none ends within the run),
// whose TCP_INFO is read at their close, those held to the end of the run
// included. The tcp block counts every connection the run opened; against
// a device that resets every other connection after its response, b fails
// with the kernel's count of the resets.
func TestRFC9411HeldConnectionsTCP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs load")
	}
	if !tlsconn.TCPInfo {
		t.Skip(metrics.TCPUnavailable)
	}
	hold := func(s *runner.Spec) {
		s.RequestsPerConn, s.Pause, s.Duration = 100, 100*time.Millisecond, 3*time.Second
	}
	// Ramped up and down over a second, as §7.9 runs: the 8 connections
	// are opened in the ramp-up and measured when the run ends.
	r := targetRun(t, target.Config{}, 8, func(s *runner.Spec) {
		hold(s)
		s.RampUp, s.RampDown = time.Second, time.Second
	})
	b := criterion(t, analysis.RFC9411(r, "7.9", 8), analysis.CriterionResets)
	t.Logf("clean: tcp %+v, %d connections opened: %s", r.TCP, r.Whole.ConnectionsOpened, b.Note)
	if r.TCP == nil || r.TCP.Connections != 8 || r.Whole.ConnectionsOpened != 8 || !b.Pass ||
		!strings.Contains(b.Note, "8 connections measured") {
		t.Errorf("8 held connections: tcp %+v, b %+v, want the 8 measured and b passed", r.TCP, b)
	}
	// Every transaction in the window (no ramp, no warm-up): the
	// connections a reset ended and those held to the end are all measured.
	r = targetRun(t, target.Config{Faults: []target.Fault{{Kind: "reset-after-response", Fraction: 0.5}}}, 8,
		func(s *runner.Spec) {
			hold(s)
			s.Warmup = 0
		})
	b = criterion(t, analysis.RFC9411(r, "7.9", 8), analysis.CriterionResets)
	t.Logf("reset-after-response: tcp %+v, %d connections opened: %s", r.TCP, r.Whole.ConnectionsOpened, b.Note)
	var seconds int64
	for _, s := range r.Series {
		seconds += s.TCPResets
	}
	if r.TCP == nil {
		t.Fatal("no tcp block")
	}
	opened, resets := r.Whole.ConnectionsOpened, r.TCP.ResetsReceived
	if r.TCP.Connections != opened || resets == 0 || seconds != resets || opened-resets != 8 {
		t.Errorf("tcp %+v, %d connections opened, %d resets in the seconds: want every connection measured, "+
			"8 held and the others reset", r.TCP, opened, seconds)
	}
	if b.Pass || b.Value != 100*float64(resets)/float64(opened) {
		t.Errorf("every other connection reset: %+v, want b failed at %d of %d", b, resets, opened)
	}
}
