package plan_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestSuiteRFC9411 checks the suite's expansion: every test of RFC 9411's
// §7.6 to §7.9 with NetSecOPEN's sizes, each with its engine, objects,
// transactions per connection and ramps; the quick subset; the plan checks.
func TestSuiteRFC9411(t *testing.T) {
	tests, m, err := plan.Suite(plan.SuiteRFC9411, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tt := range tests {
		names = append(names, tt.Name)
		if tt.RampUp != plan.Duration(10*time.Second) || tt.RampDown != plan.Duration(10*time.Second) {
			t.Errorf("%s: ramps %v/%v, want NetSecOPEN's 10 s", tt.Name, tt.RampUp, tt.RampDown)
		}
	}
	want := []string{"7.6 1k", "7.6 2k", "7.6 4k", "7.6 16k", "7.6 64k", "7.7 1k", "7.7 16k", "7.7 64k", "7.7 256k",
		"7.7 mix", "7.8 1k s1", "7.8 1k s2", "7.8 16k s1", "7.8 16k s2", "7.8 64k s1", "7.8 64k s2", "7.9 1k"}
	if !slices.Equal(names, want) {
		t.Fatalf("tests %q, want %q", names, want)
	}
	if m.Duration < plan.Duration(300*time.Second) {
		t.Errorf("sustain %v, want RFC 9411's 300 s at least", m.Duration)
	}
	byName := map[string]plan.Test{}
	for _, tt := range tests {
		byName[tt.Name] = tt
	}
	for name, w := range map[string]plan.Test{
		"7.6 4k":     {Engine: vocab.EngineCPS, RFC9411: "7.6", Objects: "4k", RequestsPerConn: 1},
		"7.7 mix":    {Engine: vocab.EngineThroughput, RFC9411: "7.7", Objects: plan.SuiteMix, RequestsPerConn: 10},
		"7.8 64k s1": {Engine: vocab.EngineCPS, RFC9411: "7.8", Objects: "64k", RequestsPerConn: 1, Of: "7.6 64k", Share: 0.5},
		"7.8 16k s2": {Engine: vocab.EngineCPS, RFC9411: "7.8", Objects: "16k", RequestsPerConn: 10, Of: "7.7 16k", Share: 0.5},
		"7.9 1k": {Engine: vocab.EngineCPS, RFC9411: "7.9", Objects: "1k", RequestsPerConn: 10, Of: "7.6 1k",
			Share: 0.5},
	} {
		got := byName[name]
		if got.Engine != w.Engine || got.RFC9411 != w.RFC9411 || got.Objects != w.Objects ||
			got.RequestsPerConn != w.RequestsPerConn || got.Of != w.Of || got.Share != w.Share || got.Pause != w.Pause {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
	// NetSecOPEN's think time: the connection opened first makes its 10th
	// GET (which closes it) at the sustain's end, not before.
	for _, rs := range [][2]time.Duration{{10 * time.Second, 300 * time.Second}, {200 * time.Second, 305 * time.Second},
		{1300 * time.Millisecond, 3 * time.Second}} {
		if last := 9 * plan.HoldPause(rs[0], rs[1]); last < rs[0]+rs[1]-5*time.Millisecond || last > rs[0]+rs[1]+5*time.Millisecond {
			t.Errorf("ramp-up %v, sustain %v: the first connection's last GET at %v, want at their end", rs[0], rs[1], last)
		}
	}
	if m.Explore.Connections != (plan.Range{Min: 1024}) {
		t.Errorf("§7.9's search %+v, want from 1024 connections, no ceiling but the generator's", m.Explore.Connections)
	}

	pl, err := plan.SuitePlan(plan.SuiteRFC9411, false, []plan.DUT{{Name: "a", URL: plan.Reference}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Check(profilesSet()); err != nil {
		t.Fatalf("the suite's plan: %v", err)
	}
	if got := pl.Tests[0].Profiles; !slices.Equal(got, plan.SuiteProfiles) {
		t.Errorf("profiles %v, want the suite's (NetSecOPEN's ECDHE-RSA AES128-GCM, then ECDSA P-256)", got)
	}
	for _, name := range plan.SuiteProfiles {
		if _, err := profiles.Builtin().Get(name); err != nil {
			t.Errorf("suite profile %s: %v", name, err)
		}
	}

	quick, err := plan.SuitePlan(plan.SuiteRFC9411, true, []plan.DUT{{Name: "a", URL: plan.Reference}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := quick.Check(profilesSet()); err != nil {
		t.Fatalf("the quick suite's plan: %v", err)
	}
	var rfc []string
	for _, tt := range quick.Tests {
		rfc = append(rfc, tt.RFC9411)
		if !slices.Equal(tt.Profiles, plan.SuiteProfiles[:1]) || tt.RampUp != plan.Duration(time.Second) {
			t.Errorf("quick %s: profiles %v ramp %v, want one profile and 1 s", tt.Name, tt.Profiles, tt.RampUp)
		}
	}
	if len(slices.Compact(slices.Clone(rfc))) != 4 || len(quick.Tests) > 8 {
		t.Errorf("quick: %d tests of %v, want a few of each of the four", len(quick.Tests), rfc)
	}

	if _, _, err := plan.Suite("rfc2544", false); err == nil || !strings.Contains(err.Error(), `unknown suite "rfc2544"`) {
		t.Errorf("unknown suite: %v", err)
	}
	kept, err := plan.FilterTests(tests, []string{"7.6", "7.9 1k"})
	if err != nil || len(kept) != 6 {
		t.Errorf("FilterTests 7.6, 7.9 1k: %d tests, %v", len(kept), err)
	}
	if _, err := plan.FilterTests(tests, []string{"7.10"}); err == nil || !strings.Contains(err.Error(), `unknown test "7.10"`) {
		t.Errorf("FilterTests 7.10: %v", err)
	}
}

// TestSuitePlanChecks: a suite test's settings are checked — objects that
// parse and weigh something, Of naming an earlier test, a share in
// (0, 100%], ramps no longer than the run, unique names — and a plan's
// suite key expands to the suite's tests.
func TestSuitePlanChecks(t *testing.T) {
	const head = "name: s\nduts: [{name: a, url: \"https://a.test/\"}]\n"
	const prof = "profiles: [rsa2048-aes128-gcm-sha256]"
	const meth = "method: {duration: 2s, warmup: 0s}\n"
	test := func(fields string) string {
		return "  - {name: \"7.6 1k\", engine: cps, objects: 1k, " + prof + "}\n  - {engine: cps, " + prof + ", " + fields + "}\n"
	}
	for _, c := range []struct{ tests, want string }{
		{test("name: x, objects: 12q"), `size "12q"`},
		{test("name: x, objects: \"1k:0,2k:0\""), "weights sum to 0"},
		{test("name: x, of: \"7.7 1k\", share: 50%"), `of "7.7 1k" names no earlier test`},
		{test("name: x, of: \"7.6 1k\", share: 150%"), "share 150% is out of range"},
		{test("name: x, of: \"7.6 1k\""), "share 0% is out of range"},
		{test("name: x, ramp_up: 3s"), "ramp_up 3s is longer than the run"},
		{test("name: x, ramp_down: 5s"), "ramp_down 5s is longer than the run"},
		{test("name: \"7.6 1k\""), "is the name of two tests"},
		{test("name: x, rfc9411: \"7.10\""), "not 7.6, 7.7, 7.8 or 7.9"},
		{test("name: x, requests_per_conn: -1"), "requests_per_conn"},
		{test("rfc9411: \"7.6\""), "name is required"},
		{"  - {name: \"7.6 1k\", engine: cps, " + prof + "}\n  - {name: l, engine: cps, of: \"7.6 1k\", share: 50%, " + prof +
			"}\n  - {name: m, engine: cps, of: l, share: 50%, " + prof + "}\n", `"l" is itself run at a share`},
	} {
		_, err := plan.ParsePlan("p.yaml", []byte(head+"tests:\n"+c.tests+meth), profilesSet())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.tests, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error of more than one line: %q", err)
		}
	}
	if _, err := plan.ParsePlan("p.yaml", []byte(head+"suite: rfc1149\n"+meth), profilesSet()); err == nil ||
		!strings.Contains(err.Error(), `unknown suite "rfc1149"`) {
		t.Errorf("suite rfc1149: %v", err)
	}
	p, err := plan.ParsePlan("p.yaml", []byte(head+"suite: rfc9411\ntests: [{engine: cps, "+prof+"}]\n"), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tests) != 18 || p.Suite != "" || p.Tests[1].Name != "7.6 1k" ||
		!slices.Equal(p.Tests[1].Profiles, []string{"rsa2048-aes128-gcm-sha256"}) {
		t.Errorf("suite: rfc9411 expanded to %d tests (suite %q), second %+v", len(p.Tests), p.Suite, p.Tests[1])
	}
	// The suite's method where the plan leaves the default (A7): its 300 s
	// sustain and §7.9's search; a value the plan sets is the plan's.
	_, sm, _ := plan.Suite(plan.SuiteRFC9411, false)
	if p.Method.Duration != plan.Duration(300*time.Second) || p.Method.Explore.Connections != sm.Explore.Connections ||
		p.Method.Final != sm.Final {
		t.Errorf("suite: rfc9411's method %+v, want the suite's %+v", p.Method, sm)
	}
	own, err := plan.ParsePlan("p.yaml", []byte(head+"suite: rfc9411\nmethod: {duration: 60s, explore: {connections: "+
		"{min: 64, max: 4096}}}\ntests: [{engine: cps, "+prof+"}]\n"), profilesSet())
	if err != nil {
		t.Fatal(err)
	}
	if own.Method.Duration != plan.Duration(time.Minute) || own.Method.Explore.Connections != (plan.Range{Min: 64, Max: 4096}) ||
		own.Method.Explore.Concurrency != sm.Explore.Concurrency {
		t.Errorf("suite: rfc9411 with the plan's duration and search: %+v", own.Method)
	}
	// The written plan lists the tests, not the suite: read again, it is
	// the same plan.
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := plan.ParsePlan("plan.yaml", data, profilesSet())
	if err != nil || len(again.Tests) != len(p.Tests) {
		t.Errorf("plan.yaml read again: %v, %d tests", err, len(again.Tests))
	}
}
