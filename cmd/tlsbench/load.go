package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

// The two engine commands, cps and throughput, share their flags and
// their run (runLoad); each adds its own.

const cpsUsage = `tlsbench cps [flags] [URL]

Measures connections per second with a full TLS handshake on every connection
(SR=0): TCP connect, handshake verified against the cipher profile, HTTP/1.0
GET, the complete response, the server's close. URL is https://host[:port]/path
(path default /1k). Without URL, the reference target runs in-process.
With several --profile flags the runs follow one another and one table ends
the output. --http 2: over HTTP/2 (ALPN h2), one GET on one stream per
connection.`

func runCPS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	spec, fs, lf := cpsCommand(stderr)
	return runLoad(ctx, spec, fs, lf, args, cpsUsage, stdout, stderr)
}

// cpsCommand is the cps command's flags and engine; stderr takes its
// warnings and advice.
func cpsCommand(stderr io.Writer) (engineSpec, *pflag.FlagSet, *loadFlags) {
	fs := newFlags("cps")
	lf := addLoadFlags(fs, vocab.EngineCPS, 0, "connections")
	lf.live.addStream(fs)
	lf.addDUTFlag(fs)
	lf.addDeviceCountersFlag(fs)
	fs.IntVar(&lf.spec.RequestsPerConn, "requests-per-conn", 0, "make `M` transactions on each connection: above 1, "+
		"HTTP/1.1 keep-alive, the M-th asking the server to close (0 or 1: one HTTP/1.0 transaction; HTTP/2: M streams "+
		"in turn)")
	spec := engineSpec{
		name: vocab.EngineCPS,
		status: func(s metrics.Second) string {
			return fmt.Sprintf("%7d cps  %d errors  handshake p99 %s", s.Transactions, s.Errors, reports.Micros(s.HandshakeP99))
		},
		table: func(w io.Writer, runs []*metrics.Run) error {
			if err := reports.CPSTable(runs).Text(w); err != nil {
				return err
			}
			for _, r := range runs {
				if n := cps.TimeoutAdvice(r, lf.spec.HandshakeTimeout, lf.spec.ReadTimeout); n != nil {
					fmt.Fprintf(stderr, "tlsbench cps: %s: %s\n", r.Profile, timeoutNote(n))
				}
			}
			return nil
		},
	}
	// Thousands of connections: warn before the load when the deadlines
	// cannot suffice (memory and descriptors are checked by checkCapacity,
	// the other flags before this).
	spec.check = func() error {
		s := &lf.spec
		if w := cps.DeadlineAdvice(s.Concurrency, runtime.GOMAXPROCS(0), s.HandshakeTimeout, s.ReadTimeout); w != nil {
			fmt.Fprintln(stderr, "tlsbench cps: warning:", deadlineWarning(w))
		}
		return nil
	}
	return spec, fs, lf
}

const throughputUsage = `tlsbench throughput [flags] [URL]

Measures encrypted bandwidth: -c connections, each opened with a full TLS
handshake verified against the cipher profile (counted, not part of the
bandwidth), then repeated HTTP/1.1 GETs with keep-alive. Payload Gbps counts
response bodies; wire Gbps the TLS bytes read. URL is https://host[:port]/path
(path default /1m). Without URL, the reference target runs in-process.
--http 2: over HTTP/2 (ALPN h2), --streams concurrent streams per connection.`

// engineEcho is the engine-specific part of the echoed configuration of
// the run s, as given (nil for cps).
func engineEcho(s *runner.Spec) any {
	if s.Engine != vocab.EngineThroughput {
		if s.RequestsPerConn > 0 || s.EarlyData {
			return &cpsEcho{RequestsPerConn: s.RequestsPerConn, EarlyData: s.EarlyData}
		}
		return nil
	}
	return &throughputEcho{Pipeline: s.Pipeline, Streams: s.Streams, RequestsPerConn: s.RequestsPerConn,
		VerifyBody: s.VerifyBody}
}

// cpsEcho is cps's part of the echoed configuration, when it has one.
type cpsEcho struct {
	RequestsPerConn int  `json:"requests_per_conn"`
	EarlyData       bool `json:"early_data,omitempty"`
}

// throughputEcho is the engine-specific part of the echoed configuration.
type throughputEcho struct {
	Pipeline        int    `json:"pipeline"`
	Streams         int    `json:"streams,omitempty"`
	RequestsPerConn int    `json:"requests_per_conn"`
	VerifyBody      string `json:"verify_body,omitempty"`
}

func runThroughput(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	spec, fs, lf := throughputCommand()
	return runLoad(ctx, spec, fs, lf, args, throughputUsage, stdout, stderr)
}

// throughputCommand is the throughput command's flags and engine.
func throughputCommand() (engineSpec, *pflag.FlagSet, *loadFlags) {
	fs := newFlags("throughput")
	lf := addLoadFlags(fs, vocab.EngineThroughput, 0, "requests")
	lf.live.addStream(fs)
	lf.addDUTFlag(fs)
	lf.addDeviceCountersFlag(fs)
	fs.IntVar(&lf.spec.Pipeline, "pipeline", lf.spec.Pipeline, "keep `K` requests in flight on each connection")
	fs.IntVar(&lf.spec.Streams, "streams", 0, "HTTP/2: keep `S` concurrent streams open on each connection "+
		"(default: the protocol's)")
	fs.IntVar(&lf.spec.RequestsPerConn, "requests-per-conn", 0, "close each connection after `M` responses and open a "+
		"new one (0: never)")
	fs.StringVar(&lf.spec.VerifyBody, "verify-body", "", "check every body: `pattern` (the reference target's objects) "+
		"or sha256:HEX")
	spec := engineSpec{
		name: vocab.EngineThroughput,
		status: func(s metrics.Second) string {
			return fmt.Sprintf("%6.2f Gbps  %6d req/s  %d errors", float64(s.PayloadBytes)*8/1e9, s.Transactions, s.Errors)
		},
		table: func(w io.Writer, runs []*metrics.Run) error { return reports.ThroughputTable(runs).Text(w) },
	}
	return spec, fs, lf
}

// loadFlags are the flags every engine command shares: the run's values
// are bound into spec, the rest is how the command reads and writes them.
type loadFlags struct {
	spec                          runner.Spec
	names, resolves               []string
	sniNames                      sniFlags // --sni-list, --sni-count (names.go)
	sources, headers              []string
	sni, jsonOut, keylog, cpuProf string
	quiet                         bool
	// Agent flags: one shard of a distributed run.
	shard               shardValue
	startAt             time.Time
	agentName, reportTo string
	startTolerance      time.Duration
	pushAuth            pushAuthFlags // --token-file, --report-cacert
	live                liveFlags     // --metrics-listen, --stream (liveflags.go)
	mtls                mtlsFlags     // --cert, --key, --client-ca… (mtlsflags.go)
	objects             objectFlags   // --objects, --object-path (objectflags.go)

	// Resolved from the flags (resolve, parseLoad): the profiles, the
	// engine, the URL's endpoint (nil: the in-process reference target) and
	// this process's agent identity (nil: not an agent).
	set      *profiles.Set
	profiles []*profiles.Profile
	eng      engineSpec
	ep       *endpoint
	agent    *runner.Agent
}

// addLoadFlags adds the shared flags, their defaults those of
// runner.Defaults(engine) but for concurrency conc (0: the engine's).
func addLoadFlags(fs *pflag.FlagSet, engine vocab.Engine, conc int, unit string) *loadFlags {
	lf := &loadFlags{spec: runner.Defaults(engine)}
	s := &lf.spec
	if conc > 0 {
		s.Concurrency = conc
	}
	fs.IntVarP(&s.Concurrency, "concurrency", "c", s.Concurrency, "closed loop: `N` concurrent connections; open loop: "+
		"most in flight (default 1024 there)")
	fs.DurationVarP(&s.Duration, "duration", "d", s.Duration, "steady-state `DURATION` measured")
	fs.DurationVar(&s.Warmup, "warmup", s.Warmup, "warm-up `DURATION` before it, excluded from statistics")
	fs.DurationVar(&s.RampUp, "ramp-up", 0, "before the warm-up, raise the load linearly from nothing to -c or --rate "+
		"over `DURATION` (RFC 9411 §4.3.4; excluded from statistics)")
	fs.DurationVar(&s.RampDown, "ramp-down", 0, "after the window, lower the load linearly to nothing over `DURATION` "+
		"(excluded from statistics)")
	fs.DurationVar(&s.Pause, "pause", 0, "closed loop: each connection waits `DURATION` after every transaction "+
		"before its next")
	fs.Float64Var(&s.Rate, "rate", 0, "open loop: start `R` "+unit+" per second (latency from intended starts)")
	fs.StringArrayVar(&lf.names, "profile", nil, "cipher profile `NAME` (repeatable; default "+runner.DefaultProfile+")")
	addHTTPFlag(fs, &s.Protocol)
	fs.StringArrayVar(&s.ProfileFiles, "profile-file", nil, "add the profiles of a YAML `FILE` (repeatable)")
	fs.StringArrayVar(&lf.resolves, "resolve", nil, "`HOST:PORT:ADDR`: dial ADDR, keep SNI and Host of the URL "+
		"(repeatable)")
	fs.StringVar(&s.Target.CAFile, "cacert", "", "verify the server with the CA certificates in `FILE` (PEM)")
	fs.BoolVarP(&s.Target.InsecureSkipVerify, "insecure", "k", false, "skip certificate chain verification (recorded "+
		"in the results)")
	fs.StringVar(&lf.sni, "sni", "", "send this server `NAME` (SNI) instead of the URL's host")
	lf.sniNames.add(fs)
	fs.StringArrayVar(&lf.sources, "source", nil, "local `ADDR[,ADDR…]`, range A-B or CIDR to dial from, in turn "+
		"(repeatable)")
	fs.StringArrayVarP(&lf.headers, "header", "H", nil, "extra request header `'Name: value'` (repeatable)")
	fs.Int64Var(&s.ExpectSize, "expect-size", s.ExpectSize, "any other body size than `N` bytes is an error")
	fs.StringVar(&lf.jsonOut, "json", "", "write the run record to `FILE` (several profiles: a directory; -: stdout, "+
		"the text goes to stderr)")
	fs.DurationVar(&s.ConnectTimeout, "connect-timeout", s.ConnectTimeout, "TCP connect `DEADLINE`")
	fs.DurationVar(&s.HandshakeTimeout, "handshake-timeout", s.HandshakeTimeout, "TLS handshake `DEADLINE`")
	fs.DurationVar(&s.ReadTimeout, "read-timeout", s.ReadTimeout, "first byte and each later read `DEADLINE`")
	fs.BoolVar(&s.LingerZero, "linger0", false, "close with RST instead of FIN (no TIME_WAIT; recorded)")
	fs.Float64Var(&s.Resume, "resume", 0, "resume a session on this share `R` of each worker's connections (0-1; "+
		"0: every handshake full, SR=0); a connection that offers one and gets a full handshake is a not_resumed error")
	fs.StringVar(&s.Resumption, "resumption", "", "with --resume: `MODE` tickets (TLS 1.2) or psk (TLS 1.3); "+
		"default: the profile's version's")
	if engine == vocab.EngineCPS {
		fs.BoolVar(&s.EarlyData, "early-data", false, "with --resume and --http 3: send each resuming connection's "+
			"request as 0-RTT early data (accepted and rejected counted apart)")
	}
	fs.StringVar(&lf.keylog, "keylog", "", "debug: append TLS secrets to `FILE` (serialises handshakes)")
	fs.BoolVarP(&lf.quiet, "quiet", "q", false, "no live status line")
	fs.StringVar(&lf.cpuProf, "cpuprofile", "", "debug: write the generator's CPU profile (pprof) to `FILE`")

	fs.Var(&lf.shard, "shard", "agent: take share `i/N` of the load (concurrency, rate and --source addresses divided; "+
		"i from 0)")
	fs.Var(timeValue{"--start-at", &lf.startAt}, "start-at", "agent: prepare, then start the load at `TIME` (RFC "+
		"3339); refuse to start later than --start-tolerance after it")
	fs.DurationVar(&lf.startTolerance, "start-tolerance", runner.DefaultStartTolerance, "agent: how late after "+
		"--start-at the load may still start (`DURATION`)")
	fs.StringVar(&lf.agentName, "agent", "", "agent: `NAME` in the record (default host-pid)")
	fs.StringVar(&lf.reportTo, "report-to", "", "agent: POST the run record to a collector at `URL` (tlsbench collect; "+
		"asked before the load)")
	lf.pushAuth.add(fs)
	fs.DurationVar(&s.Drain, "drain", 0, "after the window, wait at most `DURATION` for the transactions in flight, "+
		"then count them as abandoned errors (default and least: the connect, handshake and read deadlines' sum; "+
		"default at least 30s)")
	fs.DurationVar(&s.AbortAfter, "abort-after", s.AbortAfter, "stop the run, exit 1, when no transaction has "+
		"succeeded for `DURATION` while they failed (0: never)")
	lf.live.add(fs)
	lf.mtls.add(fs, s)
	lf.objects.add(fs)
	return lf
}

// addDUTFlag adds --dut to an engine command.
func (lf *loadFlags) addDUTFlag(fs *pflag.FlagSet) {
	fs.StringVar(&lf.spec.Target.DUT, "dut", "", "name the device under test `NAME` in the record: report and compare "+
		"group records by it")
}

// checkDUTName checks a DUT name given with flag: "" (none) or printable,
// without spaces or slashes (as a plan's DUT names), 100 bytes at most.
func checkDUTName(flag, name string) error {
	if name == "" {
		return nil
	}
	control := func(r rune) bool { return r < ' ' || r == 0x7f }
	if len(name) > 100 || strings.ContainsAny(name, " /\\") || strings.ContainsFunc(name, control) {
		return usagef("bad %s %q: want a name without spaces, slashes or control characters, 100 bytes at most", flag, name)
	}
	return nil
}

// loadEcho is the configuration as echoed in the run record.
type loadEcho struct {
	URL              string   `json:"url"`
	Path             string   `json:"path"`
	Concurrency      int      `json:"concurrency"`
	Rate             float64  `json:"rate,omitempty"`
	Duration         string   `json:"duration"`
	Warmup           string   `json:"warmup"`
	RampUp           string   `json:"ramp_up,omitempty"`
	RampDown         string   `json:"ramp_down,omitempty"`
	Pause            string   `json:"pause,omitempty"`
	ConnectTimeout   string   `json:"connect_timeout"`
	HandshakeTimeout string   `json:"handshake_timeout"`
	ReadTimeout      string   `json:"read_timeout"`
	Resolve          []string `json:"resolve,omitempty"`
	CAFile           string   `json:"cacert,omitempty"`
	Insecure         bool     `json:"insecure"`
	SNI              string   `json:"sni,omitempty"`
	SNIList          string   `json:"sni_list,omitempty"`
	SNICount         int      `json:"sni_count,omitempty"`
	Sources          []string `json:"source,omitempty"`
	Headers          []string `json:"headers,omitempty"`
	ExpectSize       int64    `json:"expect_size"`
	LingerZero       bool     `json:"linger0,omitempty"`
	Resume           float64  `json:"resume,omitempty"`
	Resumption       string   `json:"resumption,omitempty"`
	Objects          string   `json:"objects,omitempty"`
	ObjectPath       string   `json:"object_path,omitempty"`
	Extra            any      `json:"engine,omitempty"` // engine-specific settings
}

// engineSpec is what differs between the engine commands.
type engineSpec struct {
	name vocab.Engine
	// check, if set, validates the engine's own flags once parsed.
	check func() error
	// status formats one second of the live status line.
	status func(s metrics.Second) string
	// table writes the closing table.
	table func(w io.Writer, runs []*metrics.Run) error
}

// specFlags names the flag that sets each field of runner.Spec.
var specFlags = map[string]string{
	"concurrency": "-c: " +
		"concurrency", "rate": "--rate", "duration": "--duration", "warmup": "--warmup", "abort_after": "--abort-after",
	"drain": "--drain", "ramp_up": "--ramp-up", "ramp_down": "--ramp-down", "pause": "--pause",
	"expect_size": "--expect-size", "connect_timeout": "--connect-timeout", "handshake_timeout": "--handshake-timeout",
	"read_timeout": "--read-timeout", "pipeline": "--pipeline", "requests_per_conn": "--requests-per-conn",
	"start_tolerance": "--start-tolerance", "shard": "--shard", "engine": "the engine", "verify_body": "--verify-body",
	"resume": "--resume", "resumption": "--resumption", "objects": "--objects", "object_path": "--object-path",
	"server_names": "the server names", "streams": "--streams", "protocol": "--http", "http": "--http",
	"profile": "--profile", "linger0": "--linger0", "early_data": "--early-data",
}

// specError words an error of runner.Spec.Validate or ForShard in flags.
func specError(err error) error {
	var fe *vocab.FieldError
	var se *runner.ShardError
	switch {
	case errors.As(err, &fe) && fe.Want == "" && fe.Value == true: // a switch: its name says it
		return usagef("%s: %s", specFlags[fe.Field], fe.Msg)
	case errors.As(err, &fe) && fe.Want == "":
		return usagef("%s %v: %s", specFlags[fe.Field], fe.Value, fe.Msg)
	case errors.As(err, &fe):
		return usagef("%s must %s, got %v", specFlags[fe.Field], fe.Want, fe.Value)
	case errors.As(err, &se) && se.What == "sources":
		return usagef("--shard %d/%d: %d source addresses cannot be divided among %d "+
			"agents", se.Shard, se.Shards, se.Have, se.Shards)
	case errors.As(err, &se):
		return usagef("--shard %d/%d: concurrency %d cannot be divided among %d "+
			"agents", se.Shard, se.Shards, se.Have, se.Shards)
	}
	return usagef("%s", err)
}

// resolve checks the shared flags (after parsing) and resolves them: the
// spec's profiles, sources, headers and roots, the agent. The spec stays
// the whole run's; share gives this agent's.
func (lf *loadFlags) resolve() error {
	s := &lf.spec
	s.UserAgent, s.Tool = "tlsbench/"+version, toolInfo()
	if err := lf.resolveNames(); err != nil {
		return err
	}
	var err error
	if lf.set, err = loadProfiles(s.ProfileFiles); err != nil {
		return err
	}
	s.Profiles = lf.set
	names := lf.names
	if len(names) == 0 {
		names = []string{runner.DefaultProfile}
	}
	for _, n := range names {
		p, err := lf.set.Get(n)
		if err != nil {
			return usagef("%s", err)
		}
		lf.profiles = append(lf.profiles, p)
	}
	if err := lf.mtls.check(s, lf.profiles); err != nil {
		return err
	}
	for i := len(lf.profiles) - 1; i >= 0; i-- { // each profile may refuse a setting; the first is the spec's
		s.Profile = lf.profiles[i].Name
		if err := s.Validate(); err != nil {
			return specError(err)
		}
	}
	if s.Drain > 0 && s.Drain < s.Deadlines() {
		return usagef("--drain %s is shorter than the deadlines it must cover: "+
			"--connect-timeout %s + --handshake-timeout %s + --read-timeout %s = %s",
			s.Drain, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout, s.Deadlines())
	}
	if s.Sources, err = parseSources(lf.sources); err != nil {
		return err
	}
	if s.Headers, err = parseHeaders(lf.headers); err != nil {
		return err
	}
	if lf.agent, err = lf.resolveAgent(); err != nil {
		return err
	}
	if lf.agent != nil {
		if _, err = s.ForShard(*lf.agent); err != nil {
			return specError(err)
		}
	}
	if f := s.Target.CAFile; f != "" {
		if s.Roots, err = profiles.LoadRoots(f); err != nil {
			return cacertError("--cacert", err)
		}
	}
	return nil
}

// share is the run of this process: the spec, divided by the agent's
// shard when it is one (resolve has checked that it divides).
func (lf *loadFlags) share() runner.Spec {
	if lf.agent == nil {
		return lf.spec
	}
	s, _ := lf.spec.ForShard(*lf.agent)
	return s
}

// parseLoad parses and checks an engine command line (no network, no file
// written, nothing printed but help).
func parseLoad(eng engineSpec, fs *pflag.FlagSet, lf *loadFlags, args []string, usage string,
	stdout io.Writer) (*loadFlags, error) {
	if err := parseFlags(fs, usage, args, stdout); err != nil {
		return nil, err
	}
	if lf.spec.Rate > 0 && !fs.Changed("concurrency") {
		lf.spec.Concurrency = 1024
	}
	if fs.Changed("streams") && lf.spec.Streams < 1 { // 0 is the protocol's default, never a value given
		return nil, usagef("--streams must be at least 1, got %d", lf.spec.Streams)
	}
	if fs.NArg() > 1 {
		return nil, usagef("one URL at most, got %d arguments", fs.NArg())
	}
	if err := checkDUTName("--dut", lf.spec.Target.DUT); err != nil {
		return nil, err
	}
	lf.mtls.inProcess = fs.NArg() == 0
	if err := lf.objects.resolve(&lf.spec, fs.Arg(0)); err != nil {
		return nil, err
	}
	if err := lf.resolve(); err != nil {
		return nil, err
	}
	if err := lf.checkLive(); err != nil {
		return nil, err
	}
	lf.eng = eng
	if fs.NArg() == 1 {
		var err error
		if lf.ep, err = parseTarget(fs.Arg(0), lf.resolves, lf.plainSNI(), eng.name.DefaultPath()); err != nil {
			return nil, err
		}
	} else {
		for _, r := range lf.resolves {
			if _, _, _, err := parseResolve(r); err != nil {
				return nil, err
			}
		}
	}
	if a := lf.agent; a != nil {
		if lf.spec.Device != nil && a.Shards > 1 {
			return nil, usagef("%s (--shard %d/%d)", errAgentDeviceCounters, a.Shard, a.Shards)
		}
		if lf.ep == nil && (a.Shards > 1 || a.ReportTo != "") {
			return nil, usagef("--shard and --report-to need a URL: the agents of one run share one target")
		}
		if len(lf.profiles) > 1 && (!a.StartAt.IsZero() || a.ReportTo != "") {
			return nil, usagef("--start-at and --report-to take one --profile: one distributed run is one profile")
		}
	}
	return lf, nil
}

// runSpec is the run of profile p against the command's URL or, without one,
// the reference target tgt.
func (lf *loadFlags) runSpec(p *profiles.Profile, tgt *target.Target) runner.Spec {
	spec := lf.share()
	spec.Profile = p.Name
	t := &spec.Target
	if ep := lf.ep; ep != nil {
		t.URL, t.Address, t.ServerName = ep.URL.String(), ep.Address, ep.ServerName
		spec.Host, spec.Path = ep.HostHeader, ep.Path
	} else {
		l := tgt.Listener(p.Name)
		spec.Host, spec.Path = "localhost", lf.eng.name.DefaultPath()
		if !t.InsecureSkipVerify {
			spec.Roots = tgt.CA.Pool()
		}
		t.URL = "https://localhost:" + portOf(l.Addr) + spec.Path
		t.Address, t.ServerName, t.InProcess, spec.IncludesTarget = l.Addr, "localhost", true, true
	}
	if names := spec.ServerNames; len(names) > 0 {
		t.ServerName = names[0] // the record's identity: the first name's (its leaf, from the preflight)
	}
	given := &lf.spec // before this agent's share
	spec.Config = runner.Echo(loadEcho{
		URL: t.URL, Path: spec.Path, Resolve: lf.resolves, SNI: lf.sni, Sources: lf.sources, Headers: lf.headers,
		SNIList: lf.sniNames.list, SNICount: lf.sniNames.count.n,
		Concurrency: given.Concurrency, Rate: given.Rate, Duration: given.Duration.String(),
		Warmup: given.Warmup.String(), ConnectTimeout: given.ConnectTimeout.String(),
		HandshakeTimeout: given.HandshakeTimeout.String(), ReadTimeout: given.ReadTimeout.String(),
		ExpectSize: given.ExpectSize, LingerZero: given.LingerZero, CAFile: given.Target.CAFile,
		Insecure: given.Target.InsecureSkipVerify, Resume: given.Resume, Resumption: given.Resumption,
		Objects: lf.objects.list, ObjectPath: lf.objects.path, Extra: engineEcho(given),
		RampUp: echoDuration(given.RampUp), RampDown: echoDuration(given.RampDown), Pause: echoDuration(given.Pause),
	})
	return spec
}

// echoDuration is d as the record's configuration echoes it; "" (absent)
// for 0.
func echoDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// runLoad parses an engine command line and runs it for each profile.
func runLoad(ctx context.Context, eng engineSpec, fs *pflag.FlagSet, lf *loadFlags, args []string, usage string,
	stdout, stderr io.Writer) (err error) {
	if _, err := parseLoad(eng, fs, lf, args, usage, stdout); err != nil {
		return helpOK(err)
	}
	if err := lf.checkLoad(eng); err != nil {
		return err
	}
	text, closeOutputs, err := lf.openOutputs(ctx, stdout, stderr)
	defer closeOutputs()
	if err != nil {
		return err
	}
	live, err := lf.live.open(ctx, stdout, stderr)
	defer func() { err = errors.Join(err, live.close()) }() // the stream's end is said
	if err != nil {
		return err
	}
	if err := lf.pushAuth.hello(ctx, lf.reportTo); err != nil { // agentflags.go: before any load
		return err
	}
	if err := lf.mtls.write(ctx, &lf.spec, stdout, stderr); err != nil { // mtlsflags.go: before any load
		return err
	}

	tgt, err := lf.startTarget(eng, stderr)
	if err != nil {
		return err
	}
	if tgt != nil {
		defer tgt.Close()
	}

	var runs []*metrics.Run
	for _, p := range lf.profiles {
		if ctx.Err() != nil {
			break
		}
		spec := lf.runSpec(p, tgt)
		spec.Progress = statusLine(stderr, p.Name, lf.quiet, spec.Warmup, eng.status)
		live.hook(&spec, runLabels(&spec))
		if a := spec.Agent; a != nil && !a.StartAt.IsZero() && !lf.quiet {
			fmt.Fprintf(stderr, "tlsbench %s: agent %s (shard %d/%d) ready; starting at "+
				"%s\n", eng.name, a.Name, a.Shard, a.Shards, a.StartAt.Format(time.RFC3339Nano))
		}
		r, err := runner.Run(ctx, &spec)
		live.finish(r)
		endStatus(stderr, lf.quiet)
		if err != nil {
			return err
		}
		if pf := r.Preflight; pf != nil && !pf.OK && ctx.Err() != nil {
			return errors.New("interrupted before the load")
		}
		// A failed preflight sent no load: an agent has nothing to
		// report, and fails (as the coordinator then sees).
		if pf := r.Preflight; pf != nil && !pf.OK && lf.agent != nil && lf.agent.ReportTo != "" {
			return noSuccess(r, lf.set)
		}
		runs = append(runs, r)
		if err := lf.output(ctx, r, p.Name, text, stdout, stderr); err != nil {
			return err
		}
		// A failed preflight sent no load; an aborted run stopped it:
		// no further profile is run.
		if r.Failed() != "" {
			return noSuccess(r, lf.set)
		}
	}
	return lf.finish(ctx, eng, text, runs)
}

// finish ends runLoad once the runs are made: the engine's table of them,
// then the exit's error: the device counters', a run without a success or
// the interruption.
func (lf *loadFlags) finish(ctx context.Context, eng engineSpec, text io.Writer, runs []*metrics.Run) error {
	if err := eng.table(text, runs); err != nil {
		return err
	}
	if err := deviceErrors(runs); err != nil {
		return err
	}
	for _, r := range runs {
		if r.Transactions == 0 { // its window's: no figure to quote
			return noSuccess(r, lf.set)
		}
	}
	if ctx.Err() != nil {
		return errors.New("interrupted; the records written say complete: false")
	}
	return nil
}

// checkLoad makes runLoad's checks after the parse: the push credentials,
// the machine's capacity, then the engine's own.
func (lf *loadFlags) checkLoad(eng engineSpec) error {
	if err := lf.pushAuth.resolve(lf.reportTo); err != nil { // agentflags.go
		return err
	}
	if err := checkCapacity(eng.name, lf.share().Concurrency); err != nil {
		return err
	}
	// The engine's own checks come last: its warnings come only when the
	// rest is valid.
	if eng.check != nil {
		return eng.check()
	}
	return nil
}

// startTarget starts the in-process reference target when no URL was given
// (nil otherwise).
func (lf *loadFlags) startTarget(eng engineSpec, stderr io.Writer) (*target.Target, error) {
	if lf.ep != nil {
		return nil, nil
	}
	resume := target.Resumption{Tickets: lf.spec.Resume > 0, PSK: lf.spec.Resume > 0}
	cfg := target.Config{Profiles: lf.profiles, ClientCAs: lf.mtls.pool, ClientAuth: lf.mtls.auth, // mtlsflags.go
		Resumption: resume, Names: lf.spec.ServerNames}
	tgt, err := target.Start(cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "tlsbench %s: no URL given: measuring the in-process reference target (its CPU counts as the "+
		"generator's)\n", eng.name)
	return tgt, nil
}

// output gives a run's record out: the summary (when it sent load), the
// --json file, then the push to --report-to.
func (lf *loadFlags) output(ctx context.Context, r *metrics.Run, profile string, text, stdout, stderr io.Writer) error {
	if pf := r.Preflight; pf == nil || pf.OK {
		if err := reports.RunSummary(r).Text(text); err != nil {
			return err
		}
	}
	if lf.jsonOut != "" {
		file := lf.jsonOut
		if len(lf.profiles) > 1 && file != stdoutName {
			file = filepath.Join(lf.jsonOut, profile+".json")
		}
		if err := r.WriteJSON(ctx, file, stdout, stderr); err != nil {
			return fmt.Errorf("writing the run record: %w", err)
		}
	}
	// Pushed once the record is on disk and the summary printed: a
	// collector lost during the run loses no record.
	if a := lf.agent; a != nil && a.ReportTo != "" {
		if err := agent.Push(ctx, a.ReportTo, lf.pushAuth.cred, r); err != nil {
			if lf.jsonOut != "" && lf.jsonOut != stdoutName {
				return fmt.Errorf("pushing the record to %s: %w (the record is in %s)", a.ReportTo, err, lf.jsonOut)
			}
			return fmt.Errorf("pushing the record to %s: %w", a.ReportTo, err)
		}
	}
	return nil
}

// openOutputs checks and opens the command's outputs before any load (no
// run is wasted on a bad path): the CPU profile, the key log, the records'
// directory. It returns where the text goes and what closes them.
func (lf *loadFlags) openOutputs(ctx context.Context, stdout, stderr io.Writer) (
	text io.Writer, closeAll func(), err error) {
	ps := lf.profiles
	var closers []func() error
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	if err := checkOutputs([2]string{"--cpuprofile", lf.cpuProf}, [2]string{"--keylog", lf.keylog}); err != nil {
		return nil, closeAll, err
	}
	if lf.jsonOut != "" && lf.jsonOut != stdoutName && len(ps) == 1 {
		if err := checkOutputs([2]string{"--json", lf.jsonOut}); err != nil {
			return nil, closeAll, err
		}
	}
	// With --json -, the record is stdout and the text goes to stderr.
	text = stdout
	if lf.jsonOut == stdoutName || lf.live.stream == stdoutName {
		text = stderr
	}
	if lf.cpuProf != "" {
		var w io.Writer = stdout
		if lf.cpuProf != stdoutName {
			f, err := createOutput(ctx, lf.cpuProf, os.O_TRUNC, stderr)
			if err != nil {
				return nil, closeAll, outputErr(ctx, "--cpuprofile", err)
			}
			closers = append(closers, f.Close)
			w = f
		}
		if err := pprof.StartCPUProfile(w); err != nil {
			return nil, closeAll, usagef("--cpuprofile: %v", err)
		}
		closers = append(closers, func() error { pprof.StopCPUProfile(); return nil })
	}
	if lf.keylog != "" {
		lf.spec.KeyLog = stdout
		if lf.keylog != stdoutName {
			f, err := createOutput(ctx, lf.keylog, os.O_APPEND, stderr)
			if err != nil {
				return nil, closeAll, outputErr(ctx, "--keylog", err)
			}
			closers = append(closers, f.Close)
			lf.spec.KeyLog = f
		}
		fmt.Fprintf(stderr, "tlsbench %s: --keylog set: TLS secrets are written and handshakes are serialised; results "+
			"are not representative\n", lf.eng.name)
	}
	if lf.jsonOut != "" && lf.jsonOut != stdoutName && len(ps) > 1 {
		if err := outfile.CheckDir(lf.jsonOut); err != nil {
			return nil, closeAll, usagef("--json: %v", err)
		}
		if err := os.MkdirAll(lf.jsonOut, 0o755); err != nil {
			return nil, closeAll, usagef("--json %s: %v", lf.jsonOut, pathErr(err))
		}
	}
	return text, closeAll, nil
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// noSuccess explains, in the user's terms, why a run produced no result:
// its preflight failed (no load was sent), it was aborted, or nothing
// succeeded.
func noSuccess(r *metrics.Run, set *profiles.Set) error {
	offer := offered(r, set)
	if pf := r.Preflight; pf != nil && !pf.OK {
		tried := ""
		if len(pf.FailedAttempts) > 1 {
			tried = " (" + pf.Tries() + ")"
		}
		switch {
		case strings.Contains(pf.Error, "bind: "):
			return fmt.Errorf("cannot dial from the --source address: %s (no load sent)", pf.Error)
		case pf.Class == vocab.ClassRefused || pf.Class == vocab.ClassConnectTimeout:
			return fmt.Errorf("cannot connect to %s (%s)%s: %s (no load sent)", r.Target.Address, r.Target.URL, tried, pf.Error)
		}
		answer := pf.Answer()
		switch pf.Class {
		case vocab.ClassStatus, vocab.ClassBodySize, vocab.ClassBodyMismatch:
			answer += fmt.Sprintf(", body of %d bytes", pf.BodySize)
		}
		answer += clientCertHint(r) // mtlsflags.go
		return fmt.Errorf("preflight failed against %s (%s) with profile %s after %d transaction(s)%s, no load sent: "+
			"offered %s; the server's answer: %s",
			r.Target.Address, r.Target.URL, r.Profile, pf.Transactions, tried, offer, answer)
	}
	if r.Load.Aborted != "" {
		return fmt.Errorf("run stopped against %s with profile %s after %d attempts: %s; offered %s",
			r.Target.Address, r.Profile, r.Load.Attempts, r.Load.Aborted, offer)
	}
	classes := make([]vocab.Class, 0, len(r.Errors.ByClass))
	for c := range r.Errors.ByClass {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool { return r.Errors.ByClass[classes[i]] > r.Errors.ByClass[classes[j]] })
	answer := "nothing (no transaction completed in the run)"
	if n := r.Whole.Transactions; n > 0 {
		answer = fmt.Sprintf("nothing in the measured window (%d transactions succeeded outside it; %.1f%% of "+
			"the starts dropped)", n, r.Load.DroppedShare*100)
	}
	if len(classes) > 0 {
		c := classes[0]
		answer = fmt.Sprintf("%s ×%d", c, r.Errors.ByClass[c])
		if ex := r.Errors.Examples[c]; ex != "" {
			answer += " (" + ex + ")"
		}
	}
	return fmt.Errorf("no transaction succeeded against %s with profile %s: offered %s; the server's answer: "+
		"%s", r.Target.Address, r.Profile, offer, answer)
}

// offered describes what the profile of r offers: versions, suites, groups, ALPN.
func offered(r *metrics.Run, set *profiles.Set) string {
	p, _ := set.Get(r.Profile)
	offer := r.Profile
	if p != nil {
		var suites, groups []string
		for _, s := range p.Suites() {
			suites = append(suites, s.OpenSSL)
		}
		if len(suites) == 0 {
			suites = []string{"any TLS 1.3 suite"}
		}
		for _, g := range p.OfferedGroups() {
			groups = append(groups, g.Name)
		}
		offer = fmt.Sprintf("%s..%s, %s, groups "+
			"%s", p.MinTLS().Short(), p.MaxTLS().Short(), strings.Join(suites, ":"), strings.Join(groups, ":"))
		if len(p.ALPN) > 0 {
			offer += ", alpn " + strings.Join(p.ALPN, ",")
		}
	}
	return offer
}

// statusLine returns the progress callback: once a second, rewritten in
// place on a terminal, one line per second otherwise.
func statusLine(w io.Writer, name string, quiet bool, warmup time.Duration,
	format func(metrics.Second) string) func(metrics.Second) {
	if quiet {
		return nil
	}
	tty := isTerminal(w)
	return func(s metrics.Second) {
		phase := ""
		switch {
		case s.Phase != "" && s.Phase != string(vocab.TimelineSustain):
			phase = " (" + strings.NewReplacer("_", "-", "warmup", "warm-up").Replace(s.Phase) + ")"
		case s.Phase == "" && time.Duration(s.T)*time.Second <= warmup && warmup > 0:
			phase = " (warm-up)"
		}
		line := fmt.Sprintf("%s %4ds%s  %s", name, s.T, phase, format(s)) + tcpStatus(s)
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(w, line)
		}
	}
}

func endStatus(w io.Writer, quiet bool) {
	if !quiet && isTerminal(w) {
		fmt.Fprintln(w)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// cacertError words an error of profiles.LoadRoots with the flag (or plan
// field) that named the file.
func cacertError(flag string, err error) error {
	var re *profiles.RootsError
	switch {
	case !errors.As(err, &re):
		return usagef("%s: %v", flag, err)
	case re.Err != nil:
		return usagef("%s: %v", flag, re.Err)
	}
	return usagef("%s %s: no PEM certificate in it", flag, re.File)
}
