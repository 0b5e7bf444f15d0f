package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/httpreq"
	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

// loadFlags are the flags every engine command shares.
type loadFlags struct {
	conc                           *int
	dur, warmup                    *time.Duration
	rate                           *float64
	names, files, resolves         *[]string
	caFile, sni, jsonOut, keylog   *string
	insecure, linger0, quiet       *bool
	cpuProfile                     *string
	sources, headers               *[]string
	expectSize                     *int64
	connectTO, handshakeTO, readTO *time.Duration
	// dut is --dut, the device's name in the record (cps, throughput);
	// nil for a command without it.
	dut *string
	// Agent flags: one shard of a distributed run.
	shard, startAt, agentName, reportTo *string
	startTolerance                      *time.Duration
	abortAfter                          *time.Duration
}

func addLoadFlags(fs *pflag.FlagSet, defConc int, unit string) *loadFlags {
	return &loadFlags{
		conc:        fs.IntP("concurrency", "c", defConc, "closed loop: `N` concurrent connections; open loop: most in flight (default 1024 there)"),
		dur:         fs.DurationP("duration", "d", 10*time.Second, "steady-state `DURATION` measured"),
		warmup:      fs.Duration("warmup", 2*time.Second, "warm-up `DURATION` before it, excluded from statistics"),
		rate:        fs.Float64("rate", 0, "open loop: start `R` "+unit+" per second (latency from intended starts)"),
		names:       fs.StringArray("profile", nil, "cipher profile `NAME` (repeatable; default ecdhe-ecdsa-aes128-sha256-p256)"),
		files:       fs.StringArray("profile-file", nil, "add the profiles of a YAML `FILE` (repeatable)"),
		resolves:    fs.StringArray("resolve", nil, "`HOST:PORT:ADDR`: dial ADDR, keep SNI and Host of the URL (repeatable)"),
		caFile:      fs.String("cacert", "", "verify the server with the CA certificates in `FILE` (PEM)"),
		insecure:    fs.BoolP("insecure", "k", false, "skip certificate chain verification (recorded in the results)"),
		sni:         fs.String("sni", "", "send this server `NAME` (SNI) instead of the URL's host"),
		sources:     fs.StringArray("source", nil, "local `ADDR[,ADDR…]`, range A-B or CIDR to dial from, in turn (repeatable)"),
		headers:     fs.StringArrayP("header", "H", nil, "extra request header `'Name: value'` (repeatable)"),
		expectSize:  fs.Int64("expect-size", -1, "any other body size than `N` bytes is an error"),
		jsonOut:     fs.String("json", "", "write the run record to `FILE` (several profiles: a directory; -: stdout, the text goes to stderr)"),
		connectTO:   fs.Duration("connect-timeout", tlsconn.DefaultConnectTimeout, "TCP connect `DEADLINE`"),
		handshakeTO: fs.Duration("handshake-timeout", tlsconn.DefaultHandshakeTimeout, "TLS handshake `DEADLINE`"),
		readTO:      fs.Duration("read-timeout", tlsconn.DefaultReadTimeout, "first byte and each later read `DEADLINE`"),
		linger0:     fs.Bool("linger0", false, "close with RST instead of FIN (no TIME_WAIT; recorded)"),
		keylog:      fs.String("keylog", "", "debug: append TLS secrets to `FILE` (serialises handshakes)"),
		quiet:       fs.BoolP("quiet", "q", false, "no live status line"),
		cpuProfile:  fs.String("cpuprofile", "", "debug: write the generator's CPU profile (pprof) to `FILE`"),

		shard:          fs.String("shard", "", "agent: take share `i/N` of the load (concurrency, rate and --source addresses divided; i from 0)"),
		startAt:        fs.String("start-at", "", "agent: prepare, then start the load at `TIME` (RFC 3339); refuse to start later than --start-tolerance after it"),
		startTolerance: fs.Duration("start-tolerance", time.Second, "agent: how late after --start-at the load may still start (`DURATION`)"),
		agentName:      fs.String("agent", "", "agent: `NAME` in the record (default host-pid)"),
		reportTo:       fs.String("report-to", "", "agent: POST the run record to a collector at `URL` (tlsbench collect)"),
		abortAfter:     fs.Duration("abort-after", bench.DefaultAbortAfter, "stop the run, exit 1, when no transaction has succeeded for `DURATION` while they failed (0: never)"),
	}
}

// addDUTFlag adds --dut to an engine command.
func (lf *loadFlags) addDUTFlag(fs *pflag.FlagSet) {
	lf.dut = fs.String("dut", "", "name the device under test `NAME` in the record: report and compare group records by it")
}

// checkDUTName checks a DUT name given with flag: "" (none) or printable,
// without spaces or slashes (as a plan's DUT names), 100 bytes at most.
func checkDUTName(flag, name string) error {
	if name == "" {
		return nil
	}
	if len(name) > 100 || strings.ContainsAny(name, " /\\") || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
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
	ConnectTimeout   string   `json:"connect_timeout"`
	HandshakeTimeout string   `json:"handshake_timeout"`
	ReadTimeout      string   `json:"read_timeout"`
	Resolve          []string `json:"resolve,omitempty"`
	CAFile           string   `json:"cacert,omitempty"`
	Insecure         bool     `json:"insecure"`
	SNI              string   `json:"sni,omitempty"`
	Sources          []string `json:"source,omitempty"`
	Headers          []string `json:"headers,omitempty"`
	ExpectSize       int64    `json:"expect_size"`
	LingerZero       bool     `json:"linger0,omitempty"`
	Extra            any      `json:"engine,omitempty"` // engine-specific settings
}

// engineSpec is what differs between the engine commands.
type engineSpec struct {
	name string // job.CPS or job.Throughput
	// options sets the engine's own fields of a run's specification.
	options func(spec *job.Spec)
	// check, if set, validates the engine's own flags once parsed.
	check func() error
	// extra is the engine-specific configuration echoed in the record.
	extra any
	// status formats one second of the live status line.
	status func(s metrics.Second) string
	// table writes the closing table.
	table func(w io.Writer, runs []*metrics.Run)
}

// loadSetup is the shared flags, checked and resolved.
type loadSetup struct {
	engine   bench.Config
	set      *profiles.Set
	profiles []*profiles.Profile
	sources  []net.IP
	headers  [][2]string
	roots    *x509.CertPool
	agent    *agentSetup
}

// resolve checks the shared flags (after parsing) and resolves them.
func (lf *loadFlags) resolve() (*loadSetup, error) {
	ls := &loadSetup{engine: bench.Config{Concurrency: *lf.conc, Rate: *lf.rate, Duration: *lf.dur, Warmup: *lf.warmup, AbortAfter: *lf.abortAfter}}
	switch {
	case *lf.conc < 1:
		return nil, usagef("-c: concurrency must be at least 1, got %d", *lf.conc)
	case *lf.dur <= 0:
		return nil, usagef("--duration must be positive, got %s", *lf.dur)
	case *lf.expectSize < -1:
		return nil, usagef("--expect-size must be a size in bytes (0 or more; -1: any), got %d", *lf.expectSize)
	}
	if err := ls.engine.Validate(); err != nil {
		return nil, usagef("%s", err)
	}
	if *lf.abortAfter < 0 {
		return nil, usagef("--abort-after must not be negative, got %s", *lf.abortAfter)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--connect-timeout", *lf.connectTO}, {"--handshake-timeout", *lf.handshakeTO}, {"--read-timeout", *lf.readTO}} {
		if d.v <= 0 {
			return nil, usagef("%s must be positive, got %s", d.name, d.v)
		}
	}
	var err error
	if ls.set, err = loadProfiles(*lf.files); err != nil {
		return nil, err
	}
	names := *lf.names
	if len(names) == 0 {
		names = []string{"ecdhe-ecdsa-aes128-sha256-p256"}
	}
	for _, n := range names {
		p, err := ls.set.Get(n)
		if err != nil {
			return nil, usagef("%s", err)
		}
		ls.profiles = append(ls.profiles, p)
	}
	if ls.sources, err = parseSources(*lf.sources); err != nil {
		return nil, err
	}
	if ls.headers, err = parseHeaders(*lf.headers); err != nil {
		return nil, err
	}
	if ls.agent, err = lf.resolveAgent(); err != nil {
		return nil, err
	}
	if a := ls.agent; a != nil && a.shards > 1 {
		if ls.engine, ls.sources, err = a.split(ls.engine, ls.sources); err != nil {
			return nil, err
		}
	}
	if *lf.caFile != "" {
		pem, err := os.ReadFile(*lf.caFile)
		if err != nil {
			return nil, usagef("--cacert: %v", err)
		}
		ls.roots = x509.NewCertPool()
		if !ls.roots.AppendCertsFromPEM(pem) {
			return nil, usagef("--cacert %s: no PEM certificate in it", *lf.caFile)
		}
	}
	return ls, nil
}

// connConfig is the connection side of a run against ep with profile p.
func (lf *loadFlags) connConfig(ls *loadSetup, p *profiles.Profile, ep *endpoint) tlsconn.Config {
	return tlsconn.Config{
		Profile: p, Address: ep.Address, Sources: ls.sources, LingerZero: *lf.linger0,
		ConnectTimeout: *lf.connectTO, HandshakeTimeout: *lf.handshakeTO,
		TLS: profiles.ClientOptions{ServerName: ep.ServerName, RootCAs: ls.roots, InsecureSkipVerify: *lf.insecure},
	}
}

// runLoad parses the shared flags and runs spec for each profile.
func runLoad(ctx context.Context, spec engineSpec, fs *pflag.FlagSet, lf *loadFlags, args []string, usage string, stdout, stderr io.Writer) error {
	if err := parseFlags(fs, usage, args, stdout); err != nil {
		return helpOK(err)
	}
	if *lf.rate > 0 && !fs.Changed("concurrency") {
		*lf.conc = 1024
	}
	if fs.NArg() > 1 {
		return usagef("one URL at most, got %d arguments", fs.NArg())
	}
	dut := ""
	if lf.dut != nil {
		if err := checkDUTName("--dut", *lf.dut); err != nil {
			return err
		}
		dut = *lf.dut
	}
	ls, err := lf.resolve()
	if err != nil {
		return err
	}
	if !isDryRun(ctx) { // a manifest's agents run on other machines
		if err := checkCapacity(spec.name, ls.engine.Concurrency); err != nil {
			return err
		}
	}
	// Check everything before any load is sent (the engine's own flags last:
	// its warnings come only when the rest is valid).
	if spec.check != nil {
		if err := spec.check(); err != nil {
			return err
		}
	}
	engine, set, ps, srcIPs, hdrs, roots := ls.engine, ls.set, ls.profiles, ls.sources, ls.headers, ls.roots
	var ep *endpoint
	if fs.NArg() == 1 {
		if ep, err = parseTarget(fs.Arg(0), *lf.resolves, *lf.sni, job.DefaultPath(spec.name)); err != nil {
			return err
		}
	} else {
		for _, r := range *lf.resolves {
			if _, _, _, err := parseResolve(r); err != nil {
				return err
			}
		}
	}
	if a := ls.agent; a != nil {
		if ep == nil && (a.shards > 1 || a.reportTo != "") {
			return usagef("--shard and --report-to need a URL: the agents of one run share one target")
		}
		if len(ps) > 1 && (!a.startAt.IsZero() || a.reportTo != "") {
			return usagef("--start-at and --report-to take one --profile: one distributed run is one profile")
		}
	}
	if isDryRun(ctx) {
		return nil
	}
	// Every output is checked before the load: no run is wasted on a bad path.
	if err := checkOutputs([2]string{"--cpuprofile", *lf.cpuProfile}, [2]string{"--keylog", *lf.keylog}); err != nil {
		return err
	}
	if *lf.jsonOut != "" && *lf.jsonOut != stdoutName && len(ps) == 1 {
		if err := checkOutputs([2]string{"--json", *lf.jsonOut}); err != nil {
			return err
		}
	}
	// With --json -, the record is stdout and the text goes to stderr.
	text := stdout
	if *lf.jsonOut == stdoutName {
		text = stderr
	}
	if *lf.cpuProfile != "" {
		var w io.Writer = stdout
		if *lf.cpuProfile != stdoutName {
			f, err := os.Create(*lf.cpuProfile)
			if err != nil {
				return usagef("--cpuprofile: %v", err)
			}
			defer f.Close()
			w = f
		}
		if err := pprof.StartCPUProfile(w); err != nil {
			return usagef("--cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}
	var keylogW io.Writer
	if *lf.keylog != "" {
		keylogW = stdout
		if *lf.keylog != stdoutName {
			f, err := os.OpenFile(*lf.keylog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				return usagef("--keylog: %v", err)
			}
			defer f.Close()
			keylogW = f
		}
		fmt.Fprintf(stderr, "tlsbench %s: --keylog set: TLS secrets are written and handshakes are serialised; results are not representative\n", spec.name)
	}
	if *lf.jsonOut != "" && *lf.jsonOut != stdoutName && len(ps) > 1 {
		if err := metrics.CheckOutputDir(*lf.jsonOut); err != nil {
			return usagef("--json: %v", err)
		}
		if err := os.MkdirAll(*lf.jsonOut, 0o755); err != nil {
			return usagef("--json %s: %v", *lf.jsonOut, pathErr(err))
		}
	}

	// The in-process reference target, when no URL was given.
	var tgt *target.Target
	if ep == nil {
		if tgt, err = target.Start(target.Config{Profiles: ps}); err != nil {
			return err
		}
		defer tgt.Close()
		fmt.Fprintf(stderr, "tlsbench %s: no URL given: measuring the in-process reference target (its CPU counts as the generator's)\n", spec.name)
	}

	echo := loadEcho{
		Concurrency: *lf.conc, Rate: *lf.rate, Duration: lf.dur.String(), Warmup: lf.warmup.String(),
		ConnectTimeout: lf.connectTO.String(), HandshakeTimeout: lf.handshakeTO.String(), ReadTimeout: lf.readTO.String(),
		Resolve: *lf.resolves, CAFile: *lf.caFile, Insecure: *lf.insecure, SNI: *lf.sni, Sources: *lf.sources,
		Headers: *lf.headers, ExpectSize: *lf.expectSize, LingerZero: *lf.linger0, Extra: spec.extra,
	}
	var runs []*metrics.Run
	for _, p := range ps {
		if ctx.Err() != nil {
			break
		}
		conn := tlsconn.Config{
			Profile: p, Sources: srcIPs, LingerZero: *lf.linger0,
			ConnectTimeout: *lf.connectTO, HandshakeTimeout: *lf.handshakeTO,
			TLS: profiles.ClientOptions{RootCAs: roots, InsecureSkipVerify: *lf.insecure, KeyLogWriter: keylogW},
		}
		recTarget := metrics.Target{DUT: dut, InsecureSkipVerify: *lf.insecure, CAFile: *lf.caFile}
		var host, path string
		if ep != nil {
			conn.Address, conn.TLS.ServerName, host, path = ep.Address, ep.ServerName, ep.HostHeader, ep.Path
			recTarget.URL, recTarget.Address, recTarget.ServerName = ep.URL.String(), ep.Address, ep.ServerName
		} else {
			l := tgt.Listener(p.Name)
			conn.Address, conn.TLS.ServerName, host, path = l.Addr, "localhost", "localhost", job.DefaultPath(spec.name)
			if !*lf.insecure {
				conn.TLS.RootCAs = tgt.CA.Pool()
			}
			recTarget.URL = "https://localhost:" + portOf(l.Addr) + path
			recTarget.Address, recTarget.ServerName, recTarget.InProcess = l.Addr, "localhost", true
		}
		echo.URL, echo.Path = recTarget.URL, path
		js := &job.Spec{
			Engine: spec.name, Conn: conn,
			Request: httpreq.Request{
				Host: host, Path: path, Headers: hdrs,
				ExpectSize: *lf.expectSize, ReadTimeout: *lf.readTO, UserAgent: "tlsbench/" + version,
			},
			Load: engine, Target: recTarget, Tool: toolInfo(), Config: echo, IncludesTarget: ep == nil,
		}
		if spec.options != nil {
			spec.options(js)
		}
		js.Load.Progress = statusLine(stderr, p.Name, *lf.quiet, *lf.warmup, spec.status)
		if a := ls.agent; a != nil {
			js.Agent = a.identity()
			js.Load.StartAt, js.Load.StartTolerance = a.startAt, a.tolerance
			if !a.startAt.IsZero() && !*lf.quiet {
				fmt.Fprintf(stderr, "tlsbench %s: agent %s (shard %d/%d) ready; starting at %s\n", spec.name, a.name, a.shard, a.shards, a.startAt.Format(time.RFC3339Nano))
			}
		}
		r, err := job.Run(ctx, js)
		endStatus(stderr, *lf.quiet)
		if err != nil {
			return err
		}
		if pf := r.Preflight; pf != nil && !pf.OK && ctx.Err() != nil {
			return errors.New("interrupted before the load")
		}
		// A failed preflight sent no load: an agent has nothing to
		// report, and fails (as the coordinator then sees).
		if pf := r.Preflight; pf != nil && !pf.OK && ls.agent != nil && ls.agent.reportTo != "" {
			return noSuccess(r, set)
		}
		if a := ls.agent; a != nil && a.reportTo != "" {
			if err := agent.Push(ctx, a.reportTo, r); err != nil {
				return fmt.Errorf("pushing the record to %s: %w", a.reportTo, err)
			}
		}
		runs = append(runs, r)
		if pf := r.Preflight; pf == nil || pf.OK {
			reports.RunText(text, r)
		}
		if *lf.jsonOut != "" {
			file := *lf.jsonOut
			if len(ps) > 1 && file != stdoutName {
				file = filepath.Join(*lf.jsonOut, p.Name+".json")
			}
			if err := writeRunRecord(file, stdout, r); err != nil {
				return fmt.Errorf("writing the run record: %w", err)
			}
		}
		// A failed preflight sent no load; an aborted run stopped it:
		// no further profile is run.
		if r.Failed() != "" {
			return noSuccess(r, set)
		}
	}
	spec.table(text, runs)
	for _, r := range runs {
		if r.Whole.Transactions == 0 {
			return noSuccess(r, set)
		}
	}
	if ctx.Err() != nil {
		return errors.New("interrupted; the records written say complete: false")
	}
	return nil
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
		switch {
		case strings.Contains(pf.Error, "bind: "):
			return fmt.Errorf("cannot dial from the --source address: %s (no load sent)", pf.Error)
		case pf.Class == bench.ClassRefused || pf.Class == bench.ClassConnectTimeout:
			return fmt.Errorf("cannot connect to %s (%s): %s (no load sent)", r.Target.Address, r.Target.URL, pf.Error)
		}
		answer := pf.Class
		if pf.Error != "" {
			answer += " (" + pf.Error + ")"
		}
		switch pf.Class {
		case bench.ClassStatus, bench.ClassBodySize, bench.ClassBodyMismatch:
			answer += fmt.Sprintf(", body of %d bytes", pf.BodySize)
		}
		return fmt.Errorf("preflight failed against %s (%s) with profile %s after %d transaction(s), no load sent: offered %s; the server's answer: %s",
			r.Target.Address, r.Target.URL, r.Profile, pf.Transactions, offer, answer)
	}
	if r.Load.Aborted != "" {
		return fmt.Errorf("run stopped against %s with profile %s after %d attempts: %s; offered %s",
			r.Target.Address, r.Profile, r.Load.Attempts, r.Load.Aborted, offer)
	}
	classes := make([]string, 0, len(r.Errors.ByClass))
	for c := range r.Errors.ByClass {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool { return r.Errors.ByClass[classes[i]] > r.Errors.ByClass[classes[j]] })
	answer := "nothing (no transaction completed in the run)"
	if len(classes) > 0 {
		c := classes[0]
		answer = fmt.Sprintf("%s ×%d", c, r.Errors.ByClass[c])
		if ex := r.Errors.Examples[c]; ex != "" {
			answer += " (" + ex + ")"
		}
	}
	return fmt.Errorf("no transaction succeeded against %s with profile %s: offered %s; the server's answer: %s", r.Target.Address, r.Profile, offer, answer)
}

// offered describes what the profile of r offers: versions, suites, groups.
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
		offer = fmt.Sprintf("%s..%s, %s, groups %s", p.MinTLS().Short(), p.MaxTLS().Short(), strings.Join(suites, ":"), strings.Join(groups, ":"))
	}
	return offer
}

// statusLine returns the progress callback: once a second, rewritten in
// place on a terminal, one line per second otherwise.
func statusLine(w io.Writer, name string, quiet bool, warmup time.Duration, format func(metrics.Second) string) func(metrics.Second) {
	if quiet {
		return nil
	}
	tty := isTerminal(w)
	return func(s metrics.Second) {
		phase := ""
		if time.Duration(s.T)*time.Second <= warmup && warmup > 0 {
			phase = " (warm-up)"
		}
		line := fmt.Sprintf("%s %4ds%s  %s", name, s.T, phase, format(s))
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
