package vocab_test

import (
	"encoding/json"
	"testing"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

func TestPhaseNames(t *testing.T) {
	for p := vocab.PhaseConnect; p <= vocab.PhaseScheduleLag; p++ {
		got, ok := vocab.ParsePhase(p.String())
		if !ok || got != p {
			t.Errorf("ParsePhase(%q) = %v, %v", p, got, ok)
		}
	}
	if _, ok := vocab.ParsePhase("nope"); ok {
		t.Error("ParsePhase accepted an unknown name")
	}
	if got, want := vocab.PhaseTotal.String(), "total"; got != want {
		t.Errorf("PhaseTotal = %q, want %q", got, want)
	}
	if got := len(vocab.TimedNames()); got != int(vocab.NumTimed) {
		t.Errorf("%d timed names, want %d", got, vocab.NumTimed)
	}
}

func TestEngine(t *testing.T) {
	for _, e := range vocab.Engines {
		if got, err := vocab.ParseEngine(e.String()); err != nil || got != e {
			t.Errorf("ParseEngine(%q) = %v, %v", e, got, err)
		}
	}
	if _, err := vocab.ParseEngine("h2"); err == nil {
		t.Error("ParseEngine accepted h2")
	}
	if vocab.EngineCPS.DefaultPath() != "/1k" || vocab.EngineThroughput.DefaultPath() != "/1m" {
		t.Error("default paths")
	}
}

func TestClass(t *testing.T) {
	c := vocab.TLSAlert("handshake_failure")
	if c != "tls_alert:handshake_failure" {
		t.Errorf("TLSAlert = %q", c)
	}
	if name, ok := c.Alert(); !ok || name != "handshake_failure" {
		t.Errorf("Alert() = %q, %v", name, ok)
	}
	if _, ok := vocab.ClassReset.Alert(); ok {
		t.Error("reset is not an alert")
	}
	// The typed names encode as their strings, in values and map keys.
	b, err := json.Marshal(map[vocab.Class]vocab.Engine{vocab.ClassReset: vocab.EngineCPS})
	if err != nil || string(b) != `{"reset":"cps"}` {
		t.Errorf("JSON %s, %v", b, err)
	}
}

func TestPhaseStrings(t *testing.T) {
	tests := []struct {
		p    vocab.Phase
		want string
	}{
		// The names are the keys of the run record's latency and histograms.
		{vocab.PhaseConnect, "connect"},
		{vocab.PhaseHandshake, "handshake"},
		{vocab.PhaseTTFB, "ttfb"},
		{vocab.PhaseTransfer, "transfer"},
		{vocab.PhaseTotal, "total"},
		{vocab.PhaseUncorrected, "total_uncorrected"},
	}
	if got, want := len(tests), int(vocab.NumTimed); got != want {
		t.Errorf("table has %d phases, want %d", got, want)
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("Phase(%d).String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}
