package method_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// protocolPlan tests one profile over HTTP/1.1 (cps) and over HTTP/2 (cps,
// and throughput with 4 streams).
func protocolPlan() *plan.Plan {
	p := testPlan("a")
	name := p.Tests[0].Profiles[0]
	p.Tests = []plan.Test{
		{Engine: vocab.EngineCPS, Profiles: []string{name}},
		{Engine: vocab.EngineCPS, Profiles: []string{name}, HTTP: "2"},
		{Engine: vocab.EngineThroughput, Profiles: []string{name}, HTTP: "2", Streams: 4},
	}
	return p
}

// h2Double is worth twice the curve over HTTP/2: its cells cannot be taken
// for HTTP/1.1's.
func h2Double() *fakeExec {
	return &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		if req.Test.Protocol() == "http/2" {
			return 2 * curve(req.Concurrency), nil
		}
		return curve(req.Concurrency), nil
	}}
}

// TestProtocolCells: a plan that tests the same profile over HTTP/1.1 and
// HTTP/2 makes a cell per protocol (their own ledger keys, the HTTP/1.1
// ones as before protocols) and publishes two rows, each naming its
// protocol with its own values; resumed, it makes the same runs.
func TestProtocolCells(t *testing.T) {
	exec := h2Double()
	dir := t.TempDir()
	c := campaign(t, protocolPlan(), exec, dir)
	events := map[string]int{}
	c.Events = func(e method.Event) { events[e.Protocol]++ }
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	if len(s.Cells) != 3 {
		t.Fatalf("%d cells, want 3", len(s.Cells))
	}
	for i, want := range []string{"http/1.1", "http/2", "http/2"} {
		if got := s.Cells[i].Protocol; got != want {
			t.Errorf("cell %d (%s): protocol %q, want %q", i, s.Cells[i].Engine, got, want)
		}
	}
	for _, cell := range s.Cells { // the published run is the cell's own, not the other protocol's at its level
		if r := method.PublishedRun(c.Ledger.Entries(), cell); r == nil || r.ProtocolName() != cell.Protocol {
			t.Errorf("%s %s cell: published run %v", cell.Engine, cell.Protocol, r)
		}
	}
	keys := map[string]bool{}
	for _, e := range c.Ledger.Entries() {
		keys[e.Key] = true
		if want := strings.Contains(e.Key, "|http/2"); want != (e.Run.ProtocolName() == "http/2") {
			t.Errorf("ledger key %q for a run over %s", e.Key, e.Run.ProtocolName())
		}
	}
	h2Keys := 0
	for k := range keys {
		if strings.Contains(k, "|http/2") {
			h2Keys++
		}
	}
	if events["http/2"] != h2Keys || events["http/1.1"] != len(keys)-h2Keys {
		t.Errorf("events by protocol %v, for %d runs of %d over HTTP/2", events, h2Keys, len(keys))
	}
	if !keys["preliminary|a|cps|"+s.Cells[0].Profile] || !keys["preliminary|a|cps|"+s.Cells[0].Profile+"|http/2"] {
		t.Errorf("preliminary keys %v: want HTTP/1.1's as before protocols, and HTTP/2's", keys)
	}
	if len(s.Rows) != 2 {
		t.Fatalf("%d rows, want 2 (one per protocol): %+v", len(s.Rows), s.Rows)
	}
	h1, h2 := s.Rows[0], s.Rows[1]
	if h1.Protocol != "http/1.1" || h1.CPS == nil || *h1.CPS != 1600 || h1.Gbps != nil {
		t.Errorf("HTTP/1.1 row %+v: want CPS 1600, no Gbps", h1)
	}
	if h2.Protocol != "http/2" || h2.CPS == nil || *h2.CPS != 3200 || h2.Gbps == nil || *h2.Gbps != 3200 {
		t.Errorf("HTTP/2 row %+v: want CPS and Gbps 3200", h2)
	}
	resumeAt(t, protocolPlan, h2Double, func(calls int) []int { return []int{2, calls / 2, calls - 1} })
}

// TestProtocolSpec: a test's protocol and streams reach the run's spec.
func TestProtocolSpec(t *testing.T) {
	p := protocolPlan()
	prof, _ := profiles.Builtin().Get(p.Tests[2].Profiles[0])
	spec, err := (&method.Local{}).Spec(method.Request{DUT: p.DUTs[0], Test: p.Tests[2], Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Protocol != "http/2" || spec.Streams != 4 {
		t.Errorf("spec protocol %q, streams %d: want http/2, 4", spec.Protocol, spec.Streams)
	}
}

// TestCheckPlanProtocols: a plan's http and streams are checked against the
// registered protocols and each profile before any run; an HTTP/1.1 plan
// that checks today (a mutual-TLS profile without its certificate
// included: the run says it) still does.
func TestCheckPlanProtocols(t *testing.T) {
	set := profiles.Builtin()
	tls10, err := profiles.Parse("tls10.yaml", []byte("name: tls10\nmin_version: TLS1.0\nmax_version: TLS1.0\n"+
		"cipher_suites: [ECDHE-ECDSA-AES128-SHA]\ngroups: [P-256]\n"+
		"expect: {version: TLS1.0, cipher_suite: ECDHE-ECDSA-AES128-SHA, group: P-256}\n---\nname: alpn-h2\n"+
		"min_version: TLS1.2\nmax_version: TLS1.2\ncipher_suites: [ECDHE-ECDSA-AES128-SHA256]\ngroups: [P-256]\n"+
		"alpn: [h2]\nexpect: {version: TLS1.2, cipher_suite: ECDHE-ECDSA-AES128-SHA256, group: P-256, alpn: h2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tls10 {
		if err := set.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	good := protocolPlan()
	good.Tests = append(good.Tests, plan.Test{Engine: vocab.EngineCPS, Profiles: []string{"tls10",
		"ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls"}}, plan.Test{Engine: vocab.EngineCPS, HTTP: "2",
		Profiles: []string{"alpn-h2"}})
	if err := method.CheckPlan(good, set); err != nil {
		t.Errorf("a good plan: %v", err)
	}
	for _, c := range []struct {
		test plan.Test
		want string
	}{
		{plan.Test{Engine: vocab.EngineCPS, HTTP: "4"}, `tests[0]: http "4": want 1.1 or 2`},
		{plan.Test{Engine: vocab.EngineCPS, HTTP: "1.0"}, `tests[0]: http "1.0": want 1.1 or 2`},
		{plan.Test{Engine: vocab.EngineCPS, HTTP: "2", Profiles: []string{"tls10"}},
			"http/2 runs over TLS 1.2 or later, but the profile's max_version is TLS1.0"},
		{plan.Test{Engine: vocab.EngineThroughput, Streams: 4}, "HTTP/1.1 has no streams"},
		{plan.Test{Engine: vocab.EngineCPS, Profiles: []string{"alpn-h2"}}, "expects alpn h2, but the run speaks http/1.1"},
		{plan.Test{Engine: vocab.EngineCPS, HTTP: "2", Streams: 4}, "streams are throughput's"},
	} {
		p := protocolPlan()
		if c.test.Profiles == nil {
			c.test.Profiles = p.Tests[0].Profiles
		}
		p.Tests = []plan.Test{c.test}
		if err := method.CheckPlan(p, set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.test, err, c.want)
		}
	}
}

// TestEarlyDataTest: a cps test over HTTP/3 with resume and early_data
// checks, and its runs' spec asks 0-RTT; early_data over HTTP/2 or
// without resume is refused before any run.
func TestEarlyDataTest(t *testing.T) {
	set := profiles.Builtin()
	const tls13 = "tls13-aes128-gcm-x25519"
	p := testPlan("a")
	h3 := plan.Test{Engine: vocab.EngineCPS, HTTP: "3", Resume: 1, EarlyData: true, Profiles: []string{tls13}}
	p.Tests = []plan.Test{h3}
	if err := method.CheckPlan(p, set); err != nil {
		t.Fatalf("0-RTT over HTTP/3: %v", err)
	}
	prof, err := set.Get(tls13)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := (&method.Local{Profiles: set}).Spec(method.Request{DUT: plan.DUT{Name: "a",
		URL: "https://127.0.0.1:1/"}, Test: h3, Profile: prof, Concurrency: 1})
	if err != nil || !spec.EarlyData || spec.Resume != 1 || spec.Protocol != "http/3" {
		t.Fatalf("spec %+v, %v: want early data, resume 1 over http/3", spec, err)
	}
	for _, c := range []struct {
		http   string
		resume float64
		want   string
	}{{"2", 1, "http/2 sends no 0-RTT data"}, {"3", 0, "0-RTT data goes with a resumed session"}} {
		x := h3
		x.HTTP, x.Resume = c.http, c.resume
		p.Tests = []plan.Test{x}
		if err := method.CheckPlan(p, set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("http %s resume %g: %v, want %q", c.http, c.resume, err, c.want)
		}
	}
}
