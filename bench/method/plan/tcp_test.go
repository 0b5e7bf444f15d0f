package plan_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method/plan"
)

// TestTCPLimits: max_retransmit_rate and max_reset_rate default to 1% per
// transaction when unset (and a resolved plan does not name them); set,
// even to 0, they are the limits and round-trip.
func TestTCPLimits(t *testing.T) {
	a := plan.DefaultMethod().Accept
	if a.RetransmitLimit() != plan.DefaultMaxRetransmitRate || a.ResetLimit() != plan.DefaultMaxResetRate || plan.DefaultMaxRetransmitRate != 0.01 {
		t.Errorf("default limits %s, %s", a.RetransmitLimit(), a.ResetLimit())
	}
	def, err := plan.ParsePlan("plan.yaml", []byte(goodPlan), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := def.Marshal(); err != nil || strings.Contains(string(out), "max_retransmit_rate") || strings.Contains(string(out), "max_reset_rate") {
		t.Errorf("the resolved default plan names the unset limits (%v):\n%s", err, out)
	}
	data := strings.Replace(goodPlan, "max_generator_cpu: 90%", "max_generator_cpu: 90%, max_retransmit_rate: 0, max_reset_rate: 0.5%", 1)
	p, err := plan.ParsePlan("plan.yaml", []byte(data), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Method.Accept; a.RetransmitLimit() != 0 || a.ResetLimit() != 0.005 {
		t.Fatalf("limits %s, %s; want 0%%, 0.5%%", a.RetransmitLimit(), a.ResetLimit())
	}
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p2, err := plan.ParsePlan("resolved.yaml", out, profilesSet())
	if err != nil || p2.Method.Accept.RetransmitLimit() != 0 || p2.Method.Accept.ResetLimit() != 0.005 {
		t.Fatalf("round trip %+v, %v", p2.Method.Accept, err)
	}
}
