package plan_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/plan"
)

// FuzzParsePlan: any bytes give a plan or a one-line error.
func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(goodPlan))
	f.Add([]byte("name: x\nduts: [{name: a, url: 'https://a/'}]\ntests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n"))
	set := profilesSet()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := plan.ParsePlan("fuzz.yaml", data, set)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			return
		}
		if _, err := p.Marshal(); err != nil {
			t.Errorf("a valid plan does not marshal: %v", err)
		}
	})
}
