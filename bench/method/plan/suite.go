package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// SuiteRFC9411 is the suite of RFC 9411's four HTTPS tests: §7.6
// connections per second, §7.7 throughput, §7.8 latency and §7.9
// concurrent connections, with NetSecOPEN's reference values where the RFC
// leaves one open (docs/METHOD.md, "The RFC 9411 suite").
const SuiteRFC9411 = "rfc9411"

// Suites are the names Suite knows.
var Suites = []string{SuiteRFC9411}

// The RFC 9411 tests.
const (
	RFC9411CPS        = "7.6"
	RFC9411Throughput = "7.7"
	RFC9411Latency    = "7.8"
	RFC9411Concurrent = "7.9"
)

// The suite's settings where RFC 9411 leaves them open: NetSecOPEN's
// (Spirent's cf-netsecopen-tests). Their "k" is 1000 bytes; tlsbench's is
// 1024 (httpreq.ParseSize).
var (
	suiteCPSSizes        = []string{"1k", "2k", "4k", "16k", "64k"}
	suiteThroughputSizes = []string{"1k", "16k", "64k", "256k"}
	// SuiteMix is NetSecOPEN's throughput mix of objects, equally weighted.
	SuiteMix            = "0.2k,6k,8k,9k,10k,25k,26k,35k,59k,347k"
	suiteLatencySizes   = []string{"1k", "16k", "64k"}
	suiteQuickTests     = []string{"7.6 1k", "7.6 16k", "7.7 16k", "7.7 mix", "7.8 1k s1", "7.8 16k s2", "7.9 1k"}
	suiteRamp           = 10 * time.Second
	suiteQuickRamp      = time.Second
	suiteThroughputReqs = 10
)

// SuiteHoldRequests are the GETs of each §7.9 connection (NetSecOPEN's 10).
const SuiteHoldRequests = 10

// HoldPause is §7.9's think time when its test sets none: NetSecOPEN's
// (ramp-up + sustain)/10 follows each of its 10 GETs; tlsbench's engine
// closes a connection at its last response, so its GETs are 9 pauses of
// (ramp-up + sustain)/9 apart: the first connection's last GET ends the
// sustain, the others' fall in the ramp-down, which closes them (FIN).
func HoldPause(rampUp, sustain time.Duration) time.Duration {
	return ((rampUp + sustain) / (SuiteHoldRequests - 1)).Round(time.Millisecond)
}

// SuiteShare is RFC 9411 §7.8's load: 50% of the maximum of §7.6 or §7.7;
// and §7.9's ramp-up: at most 50% of §7.6's maximum connections per second.
const SuiteShare Percent = 0.5

// Suite returns the tests of the suite name (their profiles unset: the
// caller's) and its method: the RFC's 300 s sustain phase (quick: a short
// subset of the tests, runs of about 1 s, one accepted final run each, so
// that the suite against one local DUT ends within a minute; the
// statistics are correspondingly weak).
func Suite(name string, quick bool) ([]Test, Method, error) {
	if name != SuiteRFC9411 {
		return nil, Method{}, fmt.Errorf("unknown suite %q (known: %s)", name, strings.Join(Suites, ", "))
	}
	ramp := Duration(suiteRamp)
	if quick {
		ramp = Duration(suiteQuickRamp)
	}
	var tests []Test
	add := func(t Test) {
		t.RampUp, t.RampDown = ramp, ramp
		if t.Path == "" {
			t.Path = t.Engine.DefaultPath()
		}
		tests = append(tests, t)
	}
	for _, size := range suiteCPSSizes {
		add(Test{Name: "7.6 " + size, RFC9411: RFC9411CPS, Engine: vocab.EngineCPS, Objects: size, RequestsPerConn: 1})
	}
	for _, size := range append(slices.Clone(suiteThroughputSizes), "mix") {
		objects := size
		if size == "mix" {
			objects = SuiteMix
		}
		add(Test{Name: "7.7 " + size, RFC9411: RFC9411Throughput, Engine: vocab.EngineThroughput, Objects: objects,
			RequestsPerConn: suiteThroughputReqs})
	}
	for _, size := range suiteLatencySizes {
		add(Test{Name: "7.8 " + size + " s1", RFC9411: RFC9411Latency, Engine: vocab.EngineCPS, Objects: size,
			RequestsPerConn: 1, Of: "7.6 " + size, Share: SuiteShare})
		add(Test{Name: "7.8 " + size + " s2", RFC9411: RFC9411Latency, Engine: vocab.EngineCPS, Objects: size,
			RequestsPerConn: suiteThroughputReqs, Of: "7.7 " + size, Share: SuiteShare})
	}
	add(Test{Name: "7.9 1k", RFC9411: RFC9411Concurrent, Engine: vocab.EngineCPS, Objects: "1k",
		RequestsPerConn: SuiteHoldRequests, Of: "7.6 1k", Share: SuiteShare})
	// The RFC's 300 s sustain; §7.9's search from 1024 connections, with
	// no ceiling but the generator's limits.
	m := DefaultMethod()
	m.Duration, m.Warmup = Duration(300*time.Second), Duration(5*time.Second)
	m.Explore.Connections = Range{Min: 1024}
	if quick {
		tests = slices.DeleteFunc(tests, func(t Test) bool { return !slices.Contains(suiteQuickTests, t.Name) })
		m = QuickMethod()
		// 3 s of sustain: two whole seconds at least, which the constant
		// rate criterion needs to be judged.
		m.Duration, m.Warmup = Duration(3*time.Second), Duration(200*time.Millisecond)
		m.Explore.Concurrency = Range{Min: 8, Max: 32}
		// §7.9 to 32 at most, published "≥ N (the search's ceiling)" there.
		m.Explore.Connections = Range{Min: 8, Max: 32}
		m.Explore.ProbeDuration = Duration(300 * time.Millisecond)
		// One accepted final run (of three at most) per test: with the
		// ramps, two or three would take the suite past a minute.
		m.Final.MinAccepted, m.Final.MaxRuns, m.Final.Tolerance = 1, 3, 0.20
		// A quick suite runs where the generator and the device share a
		// machine: the generator may take what it needs, and an open loop
		// may drop 1% of its starts (the run's record says how many).
		m.Accept.MaxGeneratorCPU, m.Accept.MaxDroppedShare = 1, 0.01
	}
	return tests, m, nil
}

// SuiteProfiles are the suite's profiles when none is named: RFC 9411
// §4.3.1.4's four recommended TLS 1.2 suites, each with its key ("key
// strengths as well as forward looking stronger keys"): NetSecOPEN's
// ECDHE-RSA-AES128-GCM-SHA256 with RSA 2048 (first: the quick suite runs
// it alone), ECDHE-ECDSA-AES128-GCM-SHA256 with P-256,
// ECDHE-ECDSA-AES256-GCM-SHA384 with P-384 and ECDHE-RSA-AES256-GCM-SHA384
// with RSA 4096 (ECDHE on P-256, as the RSA 2048 row).
var SuiteProfiles = []string{"ecdhe-rsa-aes128-gcm-sha256-p256", "ecdhe-ecdsa-aes128-gcm-sha256-p256",
	"ecdhe-ecdsa-aes256-gcm-sha384-p384", "ecdhe-rsa-aes256-gcm-sha384-p256"}

// SuitePlan is the plan of suite name against duts for the profiles (none:
// SuiteProfiles; quick: the first of them).
func SuitePlan(name string, quick bool, duts []DUT, names []string) (*Plan, error) {
	tests, m, err := Suite(name, quick)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		names = slices.Clone(SuiteProfiles)
		if quick {
			names = names[:1]
		}
	}
	for i := range tests {
		tests[i].Profiles = slices.Compact(slices.Clone(names))
	}
	return &Plan{Name: name, DUTs: duts, Tests: tests, Method: m}, nil
}

// FilterTests keeps the tests named, or whose RFC 9411 test is named
// ("7.6", "7.8 1k s1"); a name that matches none is an error.
func FilterTests(tests []Test, names []string) ([]Test, error) {
	if len(names) == 0 {
		return tests, nil
	}
	for _, n := range names {
		if !slices.ContainsFunc(tests, func(t Test) bool { return t.Name == n || t.RFC9411 == n }) {
			return nil, fmt.Errorf("unknown test %q (want a test's name, as \"7.6 1k\", or 7.6, 7.7, 7.8, 7.9)", n)
		}
	}
	return slices.DeleteFunc(slices.Clone(tests), func(t Test) bool {
		return !slices.Contains(names, t.Name) && !slices.Contains(names, t.RFC9411)
	}), nil
}

// expandSuite replaces a plan's suite by its tests, after the plan's own
// (their profiles those of the plan's first test, else SuiteProfiles), and
// keeps the suite's method (its 300 s sustain, §7.9's search) wherever the
// plan leaves a method value at tlsbench's default (DefaultMethod): a value
// the plan sets otherwise is the plan's.
func (p *Plan) expandSuite() error {
	if p.Suite == "" {
		return nil
	}
	tests, m, err := Suite(p.Suite, false)
	if err != nil {
		return ferr("suite: "+err.Error(), "suite")
	}
	names := slices.Clone(SuiteProfiles)
	if len(p.Tests) > 0 {
		names = p.Tests[0].Profiles
	}
	for i := range tests {
		tests[i].Profiles = slices.Clone(names)
	}
	keepUnset(reflect.ValueOf(&p.Method).Elem(), reflect.ValueOf(DefaultMethod()), reflect.ValueOf(m))
	p.Tests, p.Suite = append(p.Tests, tests...), ""
	return nil
}

// keepUnset sets each field of dst (down its nested structs) equal to def's
// to suite's.
func keepUnset(dst, def, suite reflect.Value) {
	if dst.Kind() == reflect.Struct {
		for i := range dst.NumField() {
			keepUnset(dst.Field(i), def.Field(i), suite.Field(i))
		}
		return
	}
	if dst.CanSet() && dst.Comparable() && dst.Equal(def) {
		dst.Set(suite)
	}
}

// checkSuiteTest checks test i's suite settings: a unique name, its RFC 9411
// test, objects that parse, Of naming an earlier test, a share in (0, 100%],
// ramps shorter than the run.
func (p *Plan) checkSuiteTest(i int) error {
	t := p.Tests[i]
	at := func(f string) []string { return []string{"tests", strconv.Itoa(i), f} }
	name := t.Name
	if name == "" {
		name = t.Engine.String()
	}
	bad := func(field, format string, args ...any) error {
		return ferr(fmt.Sprintf("tests: %s: %s ", name, field)+fmt.Sprintf(format, args...), at(field)...)
	}
	if t.Name != "" && slices.ContainsFunc(p.Tests[:i], func(o Test) bool { return o.Name == t.Name }) {
		return bad("name", "is the name of two tests")
	}
	if t.Name == "" && (t.RFC9411 != "" || t.Of != "") {
		return bad("name", "is required with rfc9411 or of (it names the test in the ledger, the table and of)")
	}
	if t.RFC9411 != "" && !slices.Contains([]string{RFC9411CPS, RFC9411Throughput, RFC9411Latency,
		RFC9411Concurrent}, t.RFC9411) {
		return bad("rfc9411", "%q is not 7.6, 7.7, 7.8 or 7.9", t.RFC9411)
	}
	if t.Objects != "" {
		objs, err := httpreq.ParseObjects(t.Objects)
		if err != nil {
			return bad("objects", "%v", err)
		}
		var sum float64
		for _, o := range objs {
			sum += o.Weight
		}
		if sum <= 0 {
			return bad("objects", "%q: the weights sum to 0", t.Objects)
		}
	}
	if t.ObjectPath != "" && !strings.HasPrefix(t.ObjectPath, "/") {
		return bad("object_path", "%q must start with /", t.ObjectPath)
	}
	switch {
	case t.RequestsPerConn < 0:
		return bad("requests_per_conn", "must not be negative")
	case t.Of != "" && !slices.ContainsFunc(p.Tests[:i], func(o Test) bool { return o.Name == t.Of }):
		return bad("of", "%q names no earlier test of the plan (of takes a share of the rate of a test named "+
			"before it; named before it: %s)", t.Of, earlierNames(p.Tests[:i]))
	case t.Of != "" && slices.ContainsFunc(p.Tests[:i], func(o Test) bool { return o.Name == t.Of && o.Of != "" }):
		return bad("of", "%q is itself run at a share of another test: name one that publishes its own", t.Of)
	case t.Of != "" && (t.Share <= 0 || t.Share > 1):
		return bad("share", "%s is out of range (0%%, 100%%]", t.Share)
	case t.Of == "" && t.Share != 0:
		return bad("share", "needs of (the test whose value it is a share of)")
	}
	run := p.Method.Warmup + p.Method.Duration
	if t.RampUp > run {
		return bad("ramp_up", "%s is longer than the run (warmup and duration: %s)", time.Duration(t.RampUp),
			time.Duration(run))
	}
	if t.RampDown > run {
		return bad("ramp_down", "%s is longer than the run (warmup and duration: %s)", time.Duration(t.RampDown),
			time.Duration(run))
	}
	return nil
}

// ObjectList is the test's objects parsed (nil when it has none).
func (t Test) ObjectList() ([]httpreq.Object, error) {
	if t.Objects == "" {
		return nil, nil
	}
	return httpreq.ParseObjects(t.Objects)
}
