// Package plan reads and checks campaign plans (YAML): the devices under test
// (DUTs), the tests, and the method's settings as declared — durations, the
// exploratory range, the acceptance rule, the final phase. It also holds the
// host-name rules of a DUT's URL (IDNA A-labels, https, port).
package plan

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/net/idna"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// Reference is the URL of a DUT that is the built-in reference target,
// started by the caller (see Campaign.Reference).
const Reference = "reference"

// Plan is a campaign: DUTs, tests, and the method's settings.
type Plan struct {
	Name   string `yaml:"name" json:"name"`
	DUTs   []DUT  `yaml:"duts" json:"duts"`
	Tests  []Test `yaml:"tests" json:"tests"`
	Method Method `yaml:"method" json:"method"`
	// Suite, if set, names a suite (suite.go) whose tests ParsePlan adds
	// after the plan's own; the plan it returns lists them (Suite "").
	Suite string `yaml:"suite,omitempty" json:"suite,omitempty"`
	// Generator describes the load generator, for the report (describe.go).
	Generator *Description `yaml:"generator,omitempty" json:"generator,omitempty"`
	// Backends, if set, is the pool of plain backends behind the DUTs (backends.go).
	Backends *Backends `yaml:"backends,omitempty" json:"backends,omitempty"`
}

// DUT is a device under test.
type DUT struct {
	Name string `yaml:"name" json:"name"`
	// URL is the base URL (tests add their path), or Reference.
	URL string `yaml:"url" json:"url"`
	// Resolve, if set, is the address to dial; SNI and Host stay the URL's.
	Resolve  string `yaml:"resolve,omitempty" json:"resolve,omitempty"`
	CACert   string `yaml:"cacert,omitempty" json:"cacert,omitempty"`
	Insecure bool   `yaml:"insecure,omitempty" json:"insecure,omitempty"`
	// Endpoints are per-profile base URLs (one VIP per cipher profile).
	Endpoints map[string]string `yaml:"endpoints,omitempty" json:"endpoints,omitempty"`
	// Processes name the DUT's processes on the generator's machine: a
	// process name (/proc/PID/comm, e.g. nginx) or a pid file's path (with
	// a slash). The machine's noise counts their CPU as the DUT's.
	Processes []string `yaml:"processes,omitempty" json:"processes,omitempty"`
	// Counters, if set, is where the device's own counters are read, to
	// be put beside tlsbench's in every run's record (bench/devcount).
	Counters *devcount.Source `yaml:"counters,omitempty" json:"counters,omitempty"`
	// Describe says what the device is, for the report (describe.go).
	Describe *Description `yaml:"describe,omitempty" json:"describe,omitempty"`
}

// Test is an engine and the profiles it runs.
type Test struct {
	Engine   vocab.Engine `yaml:"engine" json:"engine"`
	Path     string       `yaml:"path,omitempty" json:"path,omitempty"`
	Profiles []string     `yaml:"profiles" json:"profiles"`
	// HTTP is the HTTP version that carries the test's transactions ("2";
	// "": 1.1), Streams HTTP/2's concurrent streams per throughput
	// connection (0: the protocol's default). method.CheckPlan checks
	// them against the registered protocols; a test is a cell per
	// profile and protocol (Protocol).
	HTTP    string `yaml:"http,omitempty" json:"http,omitempty"`
	Streams int    `yaml:"streams,omitempty" json:"streams,omitempty"`

	// The RFC 9411 suite's settings (suite.go); all empty in the study's
	// two tests. Name names the test in the ledger and the report (e.g.
	// "7.6 1k"); RFC9411 is the test of RFC 9411 it runs (7.6, 7.7, 7.8,
	// 7.9), whose pass/fail criteria judge its runs.
	Name    string `yaml:"name,omitempty" json:"name,omitempty"`
	RFC9411 string `yaml:"rfc9411,omitempty" json:"rfc9411,omitempty"`
	// Objects is the test's object or mix (httpreq.ParseObjects: "16k",
	// "0.2k,6k,8k"), asked for at ObjectPath ("" : /bytes/{size}).
	Objects    string `yaml:"objects,omitempty" json:"objects,omitempty"`
	ObjectPath string `yaml:"object_path,omitempty" json:"object_path,omitempty"`
	// RequestsPerConn is how many transactions a connection makes (0: the
	// engine's default), Pause the wait between them (RFC 9411 §7.9).
	RequestsPerConn int      `yaml:"requests_per_conn,omitempty" json:"requests_per_conn,omitempty"`
	Pause           Duration `yaml:"pause,omitempty" json:"pause,omitempty"`
	// Resume, if positive, is the share of each worker's connections that
	// resume a session (cps --resume R; throughput needs RequestsPerConn),
	// Resumption how: tickets (TLS 1.2) or psk (TLS 1.3), "" the profile's
	// version's. Such a test publishes SSL TPS with session reuse (SR=R).
	Resume     float64 `yaml:"resume,omitempty" json:"resume,omitempty"`
	Resumption string  `yaml:"resumption,omitempty" json:"resumption,omitempty"`
	// EarlyData: the resuming connections send their request as 0-RTT data
	// (cps --early-data: http 3 and resume only).
	EarlyData bool `yaml:"early_data,omitempty" json:"early_data,omitempty"`
	// RampUp and RampDown are each run's ramps (RFC 9411 §4.3.4).
	RampUp   Duration `yaml:"ramp_up,omitempty" json:"ramp_up,omitempty"`
	RampDown Duration `yaml:"ramp_down,omitempty" json:"ramp_down,omitempty"`
	// Of and Share make a test that runs in open loop at Share of the rate
	// the test named Of published (RFC 9411 §7.8: 50% of §7.6's or §7.7's
	// maximum), instead of searching for its own.
	Of    string  `yaml:"of,omitempty" json:"of,omitempty"`
	Share Percent `yaml:"share,omitempty" json:"share,omitempty"`
}

// Protocol is the protocol that carries t's transactions: http/1.1 or
// what its http names (vocab.HTTPProtocol).
func (t Test) Protocol() string { return vocab.HTTPProtocol(t.HTTP) }

// Method holds the settings of the phases.
type Method struct {
	Duration Duration `yaml:"duration" json:"duration"`
	Warmup   Duration `yaml:"warmup" json:"warmup"`
	Cooldown Duration `yaml:"cooldown" json:"cooldown"`
	Explore  explore  `yaml:"explore" json:"explore"`
	Accept   Accept   `yaml:"accept" json:"accept"`
	Final    Final    `yaml:"final" json:"final"`
	// StopOnUnsupported stops the campaign when a DUT refuses a profile;
	// by default that cell is "not supported" and the campaign goes on.
	StopOnUnsupported bool `yaml:"stop_on_unsupported,omitempty" json:"stop_on_unsupported,omitempty"`
}

// explore is the exploratory search.
type explore struct {
	Concurrency   Range    `yaml:"concurrency" json:"concurrency"`
	ProbeDuration Duration `yaml:"probe_duration" json:"probe_duration"`
	MinGain       Percent  `yaml:"min_gain" json:"min_gain"`
	// Connections is RFC 9411 §7.9's capacity search: its first level
	// (min; 0: concurrency.min) and its ceiling (max; 0: none but the
	// generator's limits). See docs/RFC9411.md.
	Connections Range `yaml:"connections,omitempty" json:"connections,omitzero"`
}

// Range is an inclusive range of load levels.
type Range struct {
	Min int `yaml:"min" json:"min"`
	Max int `yaml:"max" json:"max"`
}

// Accept is the acceptance rule of a run.
type Accept struct {
	// A run is rejected when its errors exceed both MaxErrors and
	// MaxErrorRate (of its transactions): with both 0, any error rejects.
	MaxErrors    int64   `yaml:"max_errors" json:"max_errors"`
	MaxErrorRate Percent `yaml:"max_error_rate" json:"max_error_rate"`
	// MaxGeneratorCPU rejects a run whose generator used more of its cores.
	MaxGeneratorCPU Percent `yaml:"max_generator_cpu" json:"max_generator_cpu"`
	// MaxDroppedShare rejects an open-loop run that dropped more of its
	// scheduled starts; 0, the default, rejects any drop.
	MaxDroppedShare Percent `yaml:"max_dropped_share" json:"max_dropped_share"`
	// MaxOtherCPU rejects a run during which processes other than the
	// generator and the DUT's used more of the machine's CPU
	// (metrics.Noise.OtherShare); MaxSteal one whose machine had more
	// stolen by the hypervisor. 0, the default, is no limit: what is
	// "disturbed" depends on the machine, so the plan says it (e.g. 25%,
	// 5%). When either is set, a run whose noise was not measured is
	// rejected.
	MaxOtherCPU Percent `yaml:"max_other_cpu,omitempty" json:"max_other_cpu,omitempty"`
	MaxSteal    Percent `yaml:"max_steal,omitempty" json:"max_steal,omitempty"`
	// MaxDeviceDisagreement, if set, rejects a run whose device's counts
	// (metrics.Run.DeviceRows) differ from tlsbench's by more than this
	// share, or could not be read; 0% asks for exact agreement.
	MaxDeviceDisagreement *Percent `yaml:"max_device_disagreement,omitempty" json:"max_device_disagreement,omitempty"`
	// MaxRetransmitRate rejects a run whose connections retransmitted more
	// TCP segments per transaction, MaxResetRate one more of whose
	// connections a RST ended; unset, they are the defaults (tcp.go).
	MaxRetransmitRate *Percent `yaml:"max_retransmit_rate,omitempty" json:"max_retransmit_rate,omitempty"`
	MaxResetRate      *Percent `yaml:"max_reset_rate,omitempty" json:"max_reset_rate,omitempty"`
	// MaxReconnectShare rejects a throughput run more of whose requests
	// reconnected (metrics.Run.Reconnects); unset, DefaultMaxReconnectShare.
	MaxReconnectShare *Percent `yaml:"max_reconnect_share,omitempty" json:"max_reconnect_share,omitempty"`
	// SessionReuse judges runs published as SSL TPS with session reuse:
	// their resumptions are the test, not a reason to refuse them (never
	// in a plan; the report sets it for a CPS record's SR row).
	SessionReuse bool `yaml:"-" json:"-"`
}

// DefaultMaxReconnectShare: a keep-alive limit of 10 requests or fewer
// measures handshakes as much as bulk; Apache's 100 passes (docs/METHOD.md).
const DefaultMaxReconnectShare Percent = 0.1

// Final is the final phase.
type Final struct {
	MinAccepted int     `yaml:"min_accepted" json:"min_accepted"`
	MaxRuns     int     `yaml:"max_runs" json:"max_runs"`
	Tolerance   Percent `yaml:"tolerance" json:"tolerance"`
	// Order is OrderInterleaved (the default: run k of every cell, then
	// k+1, so that a slow drift is shared by every DUT) or OrderSequential
	// (each cell's runs together, after its exploration).
	Order string `yaml:"order,omitempty" json:"order,omitempty"`
	// Repeat, above 1, makes the final phase that many times at the frozen
	// levels, interleaved: their values' spread is the cell's
	// repeatability (qualify --repeat). 0 or 1: once.
	Repeat int `yaml:"repeat,omitempty" json:"repeat,omitempty"`
}

// MaxRepeat bounds Final.Repeat.
const MaxRepeat = 20

// The orders of the final runs.
const (
	OrderInterleaved = "interleaved"
	OrderSequential  = "sequential"
)

// Interleaved reports whether the final runs are interleaved across cells.
func (f Final) Interleaved() bool { return f.Order != OrderSequential }

// Duration is a time.Duration written as "30s" in plans.
type Duration time.Duration

// UnmarshalYAML accepts Go duration strings.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: bad duration %q (want e.g. 30s, 500ms)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the Go duration string (YAML and JSON).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Percent is a fraction written "3%" (or 0.03) in plans.
type Percent float64

// parsePercent accepts "3%", "0.5 %" and fractions from 0 to 1 ("0.03").
func parsePercent(s string) (Percent, error) {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "%") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("bad percentage %q", s)
		}
		return Percent(v / 100), nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v > 1 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bad percentage %q (write 3%% or 0.03)", s)
	}
	return Percent(v), nil
}

// UnmarshalYAML accepts ParsePercent's forms.
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	v, err := parsePercent(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*p = v
	return nil
}

// MarshalText writes "3%" (YAML and JSON).
func (p Percent) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// String writes the percentage: "3%".
func (p Percent) String() string { return strconv.FormatFloat(float64(p)*100, 'g', -1, 64) + "%" }

// DefaultMethod returns the method of the reference study: 30 s runs, an
// exploratory search from 1 to 1024 connections, no errors tolerated, the
// generator below 90% of its cores, three accepted runs within 3%.
func DefaultMethod() Method {
	return Method{
		Duration: Duration(30 * time.Second), Warmup: Duration(5 * time.Second), Cooldown: Duration(2 * time.Second),
		Explore: explore{Concurrency: Range{Min: 1, Max: 1024}, ProbeDuration: Duration(5 * time.Second), MinGain: 0.03},
		Accept:  Accept{MaxGeneratorCPU: 0.90},
		Final:   Final{MinAccepted: 3, MaxRuns: 10, Tolerance: 0.03},
	}
}

// QuickMethod shrinks the durations so that the default plan ends in about a
// minute on a small machine; the statistics are correspondingly weak.
func QuickMethod() Method {
	m := DefaultMethod()
	m.Duration, m.Warmup, m.Cooldown = Duration(1500*time.Millisecond), Duration(300*time.Millisecond), 0
	m.Explore.Concurrency = Range{Min: 4, Max: 64}
	m.Explore.ProbeDuration = Duration(400 * time.Millisecond)
	m.Explore.MinGain = 0.05
	m.Final.MaxRuns = 5
	m.Final.Tolerance = 0.10
	return m
}

// DefaultPlan is the reference study's plan: CPS and throughput for the
// three seed profiles against duts.
func DefaultPlan(duts []DUT, m Method) *Plan {
	seeds := append([]string(nil), profiles.SeedProfiles...)
	return &Plan{
		Name: "adc-qualification",
		DUTs: duts,
		Tests: []Test{
			{Engine: vocab.EngineCPS, Path: vocab.EngineCPS.DefaultPath(), Profiles: seeds},
			{Engine: vocab.EngineThroughput, Path: vocab.EngineThroughput.DefaultPath(), Profiles: seeds},
		},
		Method: m,
	}
}

// ReadPlan reads and checks a plan file; set resolves profile names.
func ReadPlan(file string, set *profiles.Set) (*Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return ParsePlan(file, data, set)
}

// ParsePlan decodes a plan strictly (unknown fields are errors), fills
// unset method settings with DefaultMethod's, and checks it. Errors are one
// line naming the file, the line and the field.
func ParsePlan(file string, data []byte, set *profiles.Set) (*Plan, error) {
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		return nil, planError(profiles.YAMLError(file, err))
	}
	if node.Kind == 0 {
		return nil, &profiles.Error{Kind: "plan", File: file, Msg: "empty plan"}
	}
	p := &Plan{Method: DefaultMethod()}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil && err != io.EOF {
		return nil, planError(profiles.YAMLError(file, err))
	}
	err := p.expandSuite()
	if err == nil {
		err = p.Check(set)
	}
	if err == nil && p.Method.Final.Repeat == 0 && hasKey(&node, "method", "final", "repeat") {
		err = methodErr("final.repeat", "0 is out of range [1, %d] (leave it out to make the final phase once)", MaxRepeat)
	}
	if err == nil {
		err = p.readConfigFiles(filepath.Dir(file))
	}
	if err == nil {
		err = p.checkPidFiles()
	}
	if err != nil {
		var fe *vocab.FieldError
		if errors.As(err, &fe) && fe.Field == "" {
			return nil, &profiles.Error{Kind: "plan", File: file, Line: profiles.LineOf(&node, fe.Path...), Msg: fe.Msg}
		}
		return nil, &profiles.Error{Kind: "plan", File: file, Msg: err.Error()}
	}
	return p, nil
}

// hasKey reports whether the YAML document sets the key at path (a
// mapping's key under mappings' keys), whatever its value.
func hasKey(doc *yaml.Node, path ...string) bool {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return false
		}
		next := (*yaml.Node)(nil)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	return true
}

// checkPidFiles checks that each DUT's pid files exist and hold a PID
// (relative to the working directory, as FindProcesses reads them). The
// DUT must be running when the plan is read, so a missing pid file is a
// wrong path, which would silently count the DUT's CPU as other processes'.
func (p *Plan) checkPidFiles() error {
	for i, d := range p.DUTs {
		for j, proc := range d.Processes {
			if !strings.Contains(proc, "/") {
				continue
			}
			if err := checkPidFile(proc); err != nil {
				return ferr(fmt.Sprintf("duts: %s: processes: pid file %s: %v", d.Name, proc, err),
					"duts", strconv.Itoa(i), "processes", strconv.Itoa(j))
			}
		}
	}
	return nil
}

// checkPidFile checks that file is a regular file that holds a PID.
func checkPidFile(file string) error {
	st, err := os.Stat(file)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no such file (is the DUT running? it writes its pid file when it starts)")
	}
	if err != nil {
		return pathErr(err)
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	f, err := os.Open(file)
	if err != nil {
		return pathErr(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return pathErr(err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err != nil || pid <= 0 {
		return fmt.Errorf("holds no PID (%q)", strings.TrimSpace(string(data)))
	}
	return nil
}

// pathErr is err without the path an *os.PathError repeats.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// planError names a YAML error's file as a plan.
func planError(err error) error {
	var pe *profiles.Error
	if errors.As(err, &pe) {
		pe.Kind = "plan"
	}
	return err
}

func ferr(msg string, path ...string) error { return &vocab.FieldError{Path: path, Msg: msg} }

// methodErr is an error "method: FIELD …" at the key of the method's field
// (as "final.max_runs").
func methodErr(field, format string, args ...any) error {
	path := append([]string{"method"}, strings.Split(field, ".")...)
	return ferr("method: "+field+" "+fmt.Sprintf(format, args...), path...)
}

// Check validates the plan against the profiles in set.
func (p *Plan) Check(set *profiles.Set) error {
	if p.Name == "" {
		return ferr("name is required", "name")
	}
	if len(p.DUTs) == 0 {
		return ferr("duts: at least one DUT is required", "duts")
	}
	seen := map[string]bool{}
	for i, d := range p.DUTs {
		if seen[d.Name] {
			return ferr(fmt.Sprintf("duts: %s is listed twice", d.Name), "duts", strconv.Itoa(i), "name")
		}
		seen[d.Name] = true
		if err := checkDUT(i, d, set); err != nil {
			return err
		}
	}
	if err := p.checkTests(set); err != nil {
		return err
	}
	if err := p.checkDescriptions(); err != nil {
		return err
	}
	if err := p.Backends.check(p.DUTs); err != nil {
		return err
	}
	return p.Method.check()
}

// checkDUT checks DUT number i.
func checkDUT(i int, d DUT, set *profiles.Set) error {
	at := func(f ...string) []string { return append([]string{"duts", strconv.Itoa(i)}, f...) }
	if d.Name == "" || strings.ContainsAny(d.Name, " /\\") {
		return ferr(fmt.Sprintf("duts: name %q must be set and have no spaces or slashes", d.Name), at("name")...)
	}
	if d.URL != Reference {
		if _, err := ParseTarget(d.URL, ""); err != nil {
			return ferr(fmt.Sprintf("duts: %s: %v", d.Name, err), at("url")...)
		}
	}
	if d.Resolve != "" && net.ParseIP(d.Resolve) == nil {
		return ferr(fmt.Sprintf("duts: %s: resolve %q is not an IP address", d.Name, d.Resolve), at("resolve")...)
	}
	for j, proc := range d.Processes {
		if proc == "" || strings.ContainsAny(proc, " \t\n") || (!strings.Contains(proc, "/") && len(proc) > 15) {
			return ferr(fmt.Sprintf("duts: %s: processes: %q is neither a process name "+
				"(1 to 15 characters, no spaces) nor a pid file's path", d.Name, proc), at("processes", strconv.Itoa(j))...)
		}
	}
	if err := checkCounters(d, set); err != nil {
		return ferr(fmt.Sprintf("duts: %s: counters: %v", d.Name, err), at("counters")...)
	}
	for prof, u := range d.Endpoints {
		if _, err := set.Get(prof); err != nil {
			return ferr(fmt.Sprintf("duts: %s: endpoints: %v", d.Name, err), at("endpoints", prof)...)
		}
		if _, err := ParseTarget(u, ""); err != nil {
			return ferr(fmt.Sprintf("duts: %s: endpoint of %s: %v", d.Name, prof, err), at("endpoints", prof)...)
		}
	}
	return nil
}

// checkTests checks the plan's tests against the profiles in set.
func (p *Plan) checkTests(set *profiles.Set) error {
	if len(p.Tests) == 0 {
		return ferr("tests: at least one test is required", "tests")
	}
	for i, t := range p.Tests {
		at := func(f string) []string { return []string{"tests", strconv.Itoa(i), f} }
		if t.Engine != vocab.EngineCPS && t.Engine != vocab.EngineThroughput {
			return ferr(fmt.Sprintf("tests: engine %q is not cps or throughput", t.Engine), at("engine")...)
		}
		if t.Path != "" && !strings.HasPrefix(t.Path, "/") {
			return ferr(fmt.Sprintf("tests: path %q must start with /", t.Path), at("path")...)
		}
		// As the engines' --objects with a URL's path (the default path, which
		// the suite's tests hold, says nothing).
		if t.Path != "" && t.Path != t.Engine.DefaultPath() && t.Objects != "" {
			return ferr(fmt.Sprintf("tests: objects are asked for at object_path: path %q would be ignored", t.Path),
				at("path")...)
		}
		if t.Streams < 0 {
			return ferr(fmt.Sprintf("tests: streams must not be negative, got %d", t.Streams), at("streams")...)
		}
		if len(t.Profiles) == 0 {
			return ferr("tests: profiles: at least one is required", at("profiles")...)
		}
		for j, name := range t.Profiles {
			p, err := set.Get(name)
			if err != nil {
				return ferr("tests: "+err.Error(), "tests", strconv.Itoa(i), "profiles", strconv.Itoa(j))
			}
			if field, msg := t.checkResume(p); msg != "" {
				return ferr(fmt.Sprintf("tests: %s: %s %s", t.Engine, field, msg), at(field)...)
			}
		}
		if err := p.checkSuiteTest(i); err != nil {
			return err
		}
	}
	return nil
}

// checkResume checks a test's session reuse for profile p as the engines'
// --resume and --resumption do: the field at fault and what is wrong.
func (t Test) checkResume(p *profiles.Profile) (field, msg string) {
	mode := "tickets"
	if p.ExpectedVersion() == tls.VersionTLS13 {
		mode = "psk"
	}
	switch {
	case !(t.Resume >= 0 && t.Resume <= 1): // NaN too
		return "resume", fmt.Sprintf("%g is not a share of connections in (0, 1]", t.Resume)
	case t.Resume == 0 && t.Resumption != "":
		return "resumption", "needs resume (the share of connections that resume a session)"
	case t.Resume > 0 && t.Engine == vocab.EngineThroughput && t.RequestsPerConn == 0:
		return "resume", "needs requests_per_conn: throughput keeps its connections open, so none would resume"
	case t.Resumption != "" && t.Resumption != mode:
		return "resumption", fmt.Sprintf("%q: profile %s negotiates %s, which resumes with %s (crypto/tls never "+
			"resumes by session ID)", t.Resumption, p.Name, p.ExpectedVersion().Short(), mode)
	}
	return "", ""
}

// check checks the acceptance rule's bounds, in the order of its fields.
func (a *Accept) check() error {
	shares := []struct {
		name string
		p    *Percent
	}{
		{"max_device_disagreement", a.MaxDeviceDisagreement}, {"max_error_rate", &a.MaxErrorRate},
		{"max_dropped_share", &a.MaxDroppedShare}, {"max_other_cpu", &a.MaxOtherCPU}, {"max_steal", &a.MaxSteal},
	}
	for i, s := range shares {
		if i == 1 && a.MaxErrors < 0 { // between max_device_disagreement and max_error_rate
			return methodErr("accept.max_errors", "must not be negative")
		}
		if err := share(s.name, s.p); err != nil {
			return err
		}
	}
	if r := a.MaxRetransmitRate; r != nil && (*r < 0 || *r > maxTCPRate) {
		return methodErr("accept.max_retransmit_rate", "%s is out of range [0%%, %s] "+
			"(retransmitted segments per transaction)", *a.MaxRetransmitRate, maxTCPRate)
	}
	if err := share("max_reset_rate", a.MaxResetRate); err != nil {
		return err
	}
	if err := share("max_reconnect_share", a.MaxReconnectShare); err != nil {
		return err
	}
	if a.MaxGeneratorCPU <= 0 || a.MaxGeneratorCPU > 1 {
		return methodErr("accept.max_generator_cpu", "%s is out of range (0%%, 100%%]", a.MaxGeneratorCPU)
	}
	return nil
}

// share checks that the acceptance bound name, if set, is a share: 0% to 100%.
func share(name string, p *Percent) error {
	if p == nil || (*p >= 0 && *p <= 1) {
		return nil
	}
	return methodErr("accept."+name, "%s is out of range [0%%, 100%%]", *p)
}

// check checks the method: its durations, exploration, acceptance and finals.
func (m *Method) check() error {
	e, f := &m.Explore, &m.Final
	switch {
	case m.Duration <= 0:
		return methodErr("duration", "must be positive")
	case e.ProbeDuration <= 0:
		return methodErr("explore.probe_duration", "must be positive")
	case e.Concurrency.Min < 1 || e.Concurrency.Max < e.Concurrency.Min:
		return methodErr("explore.concurrency", "needs 1 <= min <= max, got %d..%d", e.Concurrency.Min, e.Concurrency.Max)
	case e.Connections.Min < 0 || e.Connections.Max != 0 && e.Connections.Max < max(e.Connections.Min, 1):
		return methodErr("explore.connections", "needs 0 <= min and max 0 (none) or max >= min, got %d..%d",
			e.Connections.Min, e.Connections.Max)
	case e.MinGain < 0 || e.MinGain >= 1:
		return methodErr("explore.min_gain", "%s is out of range [0%%, 100%%)", e.MinGain)
	}
	if err := m.Accept.check(); err != nil {
		return err
	}
	switch {
	case f.MinAccepted < 1:
		return methodErr("final.min_accepted", "must be at least 1")
	case f.MaxRuns < f.MinAccepted:
		return methodErr("final.max_runs", "%d is below min_accepted %d", f.MaxRuns, f.MinAccepted)
	case f.Tolerance <= 0 || f.Tolerance >= 1:
		return methodErr("final.tolerance", "%s is out of range (0%%, 100%%)", f.Tolerance)
	case f.Repeat < 0 || f.Repeat > MaxRepeat:
		return methodErr("final.repeat", "%d is out of range [1, %d]", f.Repeat, MaxRepeat)
	case f.Order != "" && f.Order != OrderInterleaved && f.Order != OrderSequential:
		return methodErr("final.order", "%q is neither %s nor %s", f.Order, OrderInterleaved, OrderSequential)
	}
	return nil
}

// Target is an https URL parsed for a run: what is dialled, what is sent
// (SNI, Host header) and asked for. ParseTarget is the one URL → target
// parser of the commands and the method.
type Target struct {
	URL        *url.URL // its host in the A-label form
	Host       string   // host name (or IP) of the URL, A-label
	Port       string   // 443 when the URL has none
	Path       string   // escaped path with query; the default path when the URL has none
	Address    string   // host:port to dial
	ServerName string   // SNI: crypto/tls sends none for an IP, but verifies against it
	HostHeader string
}

// ParseTarget parses an https URL; a URL without a path gets defaultPath.
// Its host is turned into its A-label (SNI, verification, DNS and the Host
// header use it).
func ParseTarget(raw, defaultPath string) (*Target, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("bad URL %q: %v", raw, errors.Unwrap(err))
	case u.Scheme != "https":
		return nil, fmt.Errorf("bad URL %q: the scheme must be https", raw)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("bad URL %q: no host", raw)
	case u.User != nil:
		return nil, fmt.Errorf("bad URL %q: user information is not supported", raw)
	}
	host, err := ALabel(u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %v", raw, err)
	}
	if port := u.Port(); host != u.Hostname() {
		u.Host = host
		if port != "" {
			u.Host = net.JoinHostPort(host, port)
		}
	}
	t := &Target{URL: u, Host: host, Port: u.Port(), Path: u.EscapedPath(), HostHeader: u.Host, ServerName: host}
	t.Port = cmp.Or(t.Port, "443")
	if p, err := strconv.Atoi(t.Port); err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("bad URL %q: port %q is not 1-65535", raw, t.Port)
	}
	t.Path = cmp.Or(t.Path, defaultPath)
	if u.RawQuery != "" {
		t.Path += "?" + u.RawQuery
	}
	t.Address = net.JoinHostPort(t.Host, t.Port)
	return t, nil
}

// Marshal returns the plan as YAML, as resolved (defaults filled in).
func (p *Plan) Marshal() ([]byte, error) { return yaml.Marshal(p) }

// ALabel returns a host name as its IDNA A-label form (bücher.test →
// xn--bcher-kva.test), the form DNS, SNI and certificates use. An ASCII
// name or an IP address is returned as it is.
func ALabel(host string) (string, error) {
	if !strings.ContainsFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return host, nil
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("host %q is not a valid internationalized domain name: %v", host, err)
	}
	return a, nil
}

// checkCounters checks a DUT's counter source: its fields, and that the
// profiles its frontends name exist.
func checkCounters(d DUT, set *profiles.Set) error {
	c := d.Counters
	if c == nil {
		return nil
	}
	if err := c.Check(); err != nil {
		var se *devcount.SpecError
		if errors.As(err, &se) {
			return errors.New(se.Why)
		}
		return err
	}
	for prof := range c.Frontends {
		if _, err := set.Get(prof); err != nil {
			return fmt.Errorf("frontends: %v", err)
		}
	}
	return nil
}

// earlierNames lists the names of tests, for a message: "none" without one.
func earlierNames(tests []Test) string {
	var names []string
	for _, t := range tests {
		if t.Name != "" {
			names = append(names, strconv.Quote(t.Name))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
