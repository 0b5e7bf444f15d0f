package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRefuses checks that bad input is a one-line usage error (exit 2)
// naming the problem, before anything is built.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no base revision"},
		{[]string{"--base", "HEAD", "--rounds", "1"}, "at least 2 rounds"},
		{[]string{"--base", "HEAD", "--duration", "10ms"}, "at least 1s"},
		{[]string{"--base", "HEAD", "--profiles", "nope"}, "--profiles"},
		{[]string{"--base", "HEAD", "extra"}, `unexpected argument "extra"`},
		{[]string{"--base", "HEAD", "--bound", "0"}, "--bound 0"},
	} {
		_, err := parse(c.args)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parse(%q) = %v, want a one-line usage error containing %q", c.args, err, c.want)
		}
	}
	if o, err := parse([]string{"--base", "HEAD~1"}); err != nil || len(o.profiles) != 3 || o.rounds < 2 {
		t.Errorf("parse(--base HEAD~1) = %+v, %v; want the seed profiles and the default rounds", o, err)
	}
}

// TestReportVerdict checks the printed verdict, which is the rounds'
// paired one: rounds that all moved +3% (a drift of ±15% between rounds,
// shared by each round's pair) are significant, and nothing on their lines
// says otherwise; A/A rounds with 8% noise are inconclusive with the rounds
// that would settle it, with 0.4% noise equivalent. The JSON says the same.
func TestReportVerdict(t *testing.T) {
	base := []float64{100, 115, 88, 104, 93, 110}
	scaled := func(rs ...float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = base[i] * r
		}
		return out
	}
	figs := []figure{
		{name: "CPS up", unit: "µs", values: [2][]float64{base, scaled(1.02, 1.03, 1.039, 1.025, 1.035, 1.03)}},
		{name: "CPS noise", unit: "µs", values: [2][]float64{base, scaled(1.08, 0.93, 1.05, 0.95, 1.06, 0.94)}},
		{name: "CPS same", unit: "µs", values: [2][]float64{base, scaled(1.004, 0.996, 1.002, 0.998, 1, 1.001)}},
	}
	o := &options{base: "HEAD~1", rounds: 6, bound: 3, out: filepath.Join(t.TempDir(), "ab.json")}
	var out bytes.Buffer
	if err := report(&out, o, figs); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	lines := strings.Split(out.String(), "\n")
	want := map[string]string{"CPS up": "significant: the working tree higher by 3.0%",
		"CPS noise": "inconclusive: about ", "CPS same": "equivalent: within ±3%"}
	for name, verdict := range want {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, name+" ") {
				found = strings.Contains(l, verdict) && strings.Count(l, "significant")+
					strings.Count(l, "inconclusive")+strings.Count(l, "equivalent") == 1
			}
		}
		if !found {
			t.Errorf("%s: no line with the one verdict %q", name, verdict)
		}
	}
	if !strings.Contains(out.String(), "1.030 [1.02") {
		t.Error("CPS up: the paired interval is not printed")
	}
	var js []comparison
	b, err := os.ReadFile(o.out)
	if err == nil {
		err = json.Unmarshal(b, &js)
	}
	if err != nil || len(js) != 3 || js[0].Paired.Verdict != "significant" || js[1].Paired.Verdict != "inconclusive" ||
		js[1].Paired.RoundsNeeded <= 6 || js[2].Paired.Verdict != "equivalent" {
		t.Errorf("JSON %s (%v): want significant, inconclusive (more than 6 rounds needed), equivalent", b, err)
	}
}
