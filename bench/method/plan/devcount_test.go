package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestPlanCounters: a DUT's counters and accept.max_device_disagreement
// as a plan writes them.
func TestPlanCounters(t *testing.T) {
	const p256 = "ecdhe-ecdsa-aes128-sha256-p256"
	text := `name: x
duts:
  - name: lb
    url: https://lb.test/
    counters:
      kind: haproxy
      url: "http://lb.test:8404/stats;csv"
      frontends: {` + p256 + `: fe_p256}
      timeout: 3s
  - name: web
    url: https://web.test/
    counters: {kind: prometheus, url: "http://web.test/metrics", metrics: {sessions: 'conns_total{proxy="{profile}"}'}, counts_reads: true}
tests: [{engine: cps, profiles: [` + p256 + `]}]
method: {duration: 1s, warmup: 0s, cooldown: 0s, explore: {concurrency: {min: 1, max: 2}, probe_duration: 100ms, min_gain: 5%},
  accept: {max_generator_cpu: 100%, max_device_disagreement: 0%}, final: {min_accepted: 1, max_runs: 1, tolerance: 10%}}
`
	p, err := ParsePlan("plan.yaml", []byte(text), profiles.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	c := p.DUTs[0].Counters
	if c == nil || c.Kind != devcount.KindHAProxy || c.Timeout != 3*time.Second || c.For(p256).Frontend != "fe_p256" {
		t.Errorf("haproxy counters %+v", c)
	}
	w := p.DUTs[1].Counters.For(p256)
	if w.Metrics[devcount.Sessions] != `conns_total{proxy="`+p256+`"}` || !w.ReadsCounted() {
		t.Errorf("prometheus counters %+v", w)
	}
	if m := p.Method.Accept.MaxDeviceDisagreement; m == nil || *m != 0 {
		t.Errorf("max_device_disagreement %v, want 0%%", m)
	}
	// Unset: not judged.
	p, err = ParsePlan("plan.yaml", []byte(strings.Replace(text, ", max_device_disagreement: 0%", "", 1)), profiles.Builtin())
	if err != nil || p.Method.Accept.MaxDeviceDisagreement != nil {
		t.Errorf("unset: %v, %v", p.Method.Accept.MaxDeviceDisagreement, err)
	}
	for bad, want := range map[string]string{
		"kind: haproxy":      "kind: ha",
		"fe_p256}":           "fe_p256, nope: x}",
		"timeout: 3s":        "timeout: -3s",
		"counts_reads: true": "counts_reads: true, commands: {sessions: ls}",
	} {
		_, err := ParsePlan("plan.yaml", []byte(strings.Replace(text, bad, want, 1)), profiles.Builtin())
		if err == nil || !strings.Contains(err.Error(), "counters") {
			t.Errorf("%s: %v, want an error naming the counters", want, err)
		}
	}
}
