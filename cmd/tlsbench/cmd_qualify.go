package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

const qualifyUsage = `tlsbench qualify [--plan FILE | --dut NAME=URL ...] [flags]

Runs the qualification method: preliminary validation of every DUT,
exploratory search for the best load level, final runs until final.min_accepted
(default 3) accepted runs agree, acceptance of each run, the best of them; then prints the published
table. Every run is appended to DIR/ledger.jsonl; --resume DIR continues an
interrupted campaign. Without --plan: CPS and throughput (--test) of the
three seed profiles (--profile) against the --dut DUTs, or the reference
target (started as a separate process). With --suite rfc9411: RFC 9411's
four HTTPS tests instead (§7.6 CPS, §7.7 throughput, §7.8 latency, §7.9
concurrent connections; --tests narrows them).

The preliminary phase prints what every DUT negotiated for every profile, or
its refusal: a profile a DUT refuses is "not supported" in the published
table and the campaign goes on with the rest (a plan's method can say
stop_on_unsupported: true). The campaign's HTML report is written to
DIR/report.html.`

// qualifyCmd is a qualify command line, parsed and checked: the plan and
// where the campaign goes.
type qualifyCmd struct {
	plan             *plan.Plan
	set              *profiles.Set
	dir              string
	resume           bool
	files            []string
	ef               *executorFlags
	allowDiff, quiet bool
	live             liveFlags // --metrics-listen (liveflags.go)
	sources          []net.IP  // --source
}

// runQualify runs a qualify command line: parseQualify, then run.
var runQualify = runParsed(parseQualify)

// parseQualify parses and checks a qualify command line: the plan read and
// checked, the campaign directory checked.
func parseQualify(args []string, stdout io.Writer) (*qualifyCmd, error) {
	q := qualifyFlags{tests: engineList{flag: "--test"}}
	fs := q.define()
	if err := parseFlags(fs, qualifyUsage, args, stdout); err != nil {
		return nil, err
	}
	if err := q.live.check(); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	sources, err := parseSources(q.srcs)
	if err != nil {
		return nil, err
	}
	set, err := loadProfiles(q.files)
	if err != nil {
		return nil, err
	}
	pl, err := q.readPlan(set, fs.Changed("repeat"))
	if err != nil {
		return nil, err
	}
	if err := method.CheckPlan(pl, set); err != nil {
		return nil, usagef("%v", err)
	}
	if fs.Changed("repeat") {
		if q.repeat < 1 || q.repeat > plan.MaxRepeat {
			return nil, usagef("bad --repeat %d: want 1 to %d", q.repeat, plan.MaxRepeat)
		}
		pl.Method.Final.Repeat = q.repeat
	}
	if err := checkPlanFiles(pl); err != nil {
		return nil, err
	}
	if err := q.ef.check(usesReference(pl)); err != nil {
		return nil, err
	}
	if q.ef.kind == "local" {
		// The exploration may reach its max concurrency in this process.
		for _, t := range pl.Tests {
			if err := checkCapacity(t.Engine, pl.Method.Explore.Concurrency.Max); err != nil {
				return nil, usagef("method explore.concurrency.max: %v", err)
			}
		}
	}
	dir := cmp.Or(q.resume, q.out, filepath.Join("results", time.Now().Format("2006-01-02")+"-"+pl.Name))
	if q.resume == "" {
		if _, err := os.Stat(filepath.Join(dir, method.LedgerFile)); err == nil {
			return nil, usagef("%s already holds a campaign; --resume %s continues it", dir, dir)
		}
		if err := outfile.CheckDir(dir); err != nil && q.out != "" {
			return nil, usagef("--out: %v", err)
		}
	}
	return &qualifyCmd{
		plan: pl, set: set, dir: dir, resume: q.resume != "", files: q.files, ef: q.ef,
		allowDiff: q.allowDiff, quiet: q.quiet, live: q.live, sources: sources,
	}, nil
}

// qualifyFlags are qualify's flags.
type qualifyFlags struct {
	live                               liveFlags
	planFile, caFile, out, resume, h   string
	duts, files, names, srcs, resolves []string
	insecure, quick, allowDiff, quiet  bool
	tests                              engineList
	repeat                             int
	ef                                 *executorFlags
	sf                                 *suiteFlags
}

// define defines qualify's flags into q.
func (q *qualifyFlags) define() *pflag.FlagSet {
	fs := newFlags("qualify")
	q.live.add(fs)
	fs.StringVar(&q.planFile, "plan", "", "campaign plan `FILE` (YAML)")
	fs.StringArrayVar(&q.duts, "dut", nil, "`NAME=URL` of a DUT for the default plan (repeatable)")
	fs.StringVar(&q.caFile, "cacert", "", "CA certificates `FILE` for the --dut DUTs")
	fs.StringArrayVar(&q.resolves, "resolve", nil, "`HOST:PORT:ADDR`: the --dut DUTs whose URL is HOST:PORT dial ADDR, "+
		"keeping SNI and Host (repeatable)")
	fs.BoolVarP(&q.insecure, "insecure", "k", false, "skip chain verification for the --dut DUTs (recorded)")
	fs.BoolVar(&q.quick, "quick", false, "short durations: the default plan ends in about a minute (weak statistics)")
	fs.StringVar(&q.out, "out", "", "campaign `DIR` (default results/<date>-<name>)")
	fs.StringVar(&q.resume, "resume", "", "continue the interrupted campaign in `DIR`")
	fs.BoolVar(&q.allowDiff, "allow-differences", false, "go on when the DUTs negotiate or serve different things")
	fs.StringArrayVar(&q.files, "profile-file", nil, "add the profiles of a YAML `FILE` (repeatable)")
	fs.StringArrayVar(&q.names, "profile", nil, "without --plan: qualify this profile `NAME` (repeatable; default: the "+
		"three seed profiles; --http 3: the TLS 1.3 built-ins)")
	fs.Var(&q.tests, "test", "without --plan: run this `TEST`, cps or throughput (repeatable; default: both)")
	addHTTPFlag(fs, &q.h)
	fs.BoolVarP(&q.quiet, "quiet", "q", false, "no per-second status line inside runs")
	fs.IntVar(&q.repeat, "repeat", 0, "make the final phase `N` times, interleaved, and report each cell's spread "+
		"between repeats (default: the plan's final.repeat, else once)")
	q.ef = addExecutorFlags(fs)
	q.sf = addSuiteFlags(fs) // suite.go
	fs.StringArrayVar(&q.srcs, "source", nil, "local `ADDR[,ADDR…]`, range A-B or CIDR the runs dial from, in turn "+
		"(repeatable; e.g. 127.0.0.0/16 on loopback: more connections than one address's ports)")
	return fs
}

// readPlan reads the campaign's plan: the interrupted campaign's (--resume),
// --plan, or the default plan made from the flags.
func (q *qualifyFlags) readPlan(set *profiles.Set, repeat bool) (*plan.Plan, error) {
	switch {
	case q.resume != "":
		if q.planFile != "" || len(q.duts) > 0 || q.quick || q.out != "" || len(q.names) > 0 ||
			len(q.tests.engines) > 0 || repeat || q.sf.set() || len(q.resolves) > 0 || q.h != "" {
			return nil, usagef("--resume takes the plan and directory of the campaign: no --plan, --dut, --resolve, " +
				"--profile, --test, --suite, --tests, --quick, --repeat, --http or --out")
		}
		pl, err := plan.ReadPlan(filepath.Join(q.resume, "plan.yaml"), set)
		if err != nil {
			return nil, usagef("--resume %s: %v", q.resume, err)
		}
		// A ledger line that is not an entry (a torn last line aside) is
		// refused here, before anything is started or the ledger touched.
		ledger := filepath.Join(q.resume, method.LedgerFile)
		if _, err := os.Stat(ledger); !errors.Is(err, os.ErrNotExist) {
			if _, err := readLedger(ledger); err != nil {
				return nil, err
			}
		}
		return pl, nil
	case q.planFile != "":
		if len(q.duts) > 0 || q.quick || len(q.names) > 0 || len(q.tests.engines) > 0 || q.sf.set() ||
			len(q.resolves) > 0 || q.h != "" {
			return nil, usagef("--plan holds the DUTs, tests, profiles and the method: no --dut, --profile, --test, " +
				"--suite, --tests, --resolve, --quick or --http (its tests' http)")
		}
		pl, err := plan.ReadPlan(q.planFile, set)
		if err != nil {
			return nil, usagef("%v", err)
		}
		return pl, nil
	}
	var list []plan.DUT
	for _, d := range q.duts {
		name, u, ok := strings.Cut(d, "=")
		if !ok || name == "" || u == "" {
			return nil, usagef("bad --dut %q: want NAME=URL", d)
		}
		list = append(list, plan.DUT{Name: name, URL: u, CACert: q.caFile, Insecure: q.insecure})
	}
	if err := resolveDUTs(list, q.resolves); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		list = []plan.DUT{{Name: "reference", URL: plan.Reference}}
	}
	names := q.names
	if len(names) == 0 && q.h == "http/3" { // the seed profiles are TLS 1.2: HTTP/3's are the TLS 1.3 built-ins
		for _, p := range profiles.Builtin().All() {
			if p.ExpectedVersion() == tls.VersionTLS13 {
				names = append(names, p.Name)
			}
		}
	}
	var pl *plan.Plan
	if q.sf.set() {
		var err error
		if pl, err = q.sf.plan(q.quick, list, names, q.tests.engines); err != nil {
			return nil, err
		}
	} else if q.quick {
		pl = plan.DefaultPlan(list, plan.QuickMethod())
	} else {
		pl = plan.DefaultPlan(list, plan.DefaultMethod())
	}
	if err := narrowPlan(pl, names, q.tests.engines); err != nil {
		return nil, err
	}
	for i := range pl.Tests {
		pl.Tests[i].HTTP = strings.TrimPrefix(q.h, "http/") // --http: every test's
	}
	if err := pl.Check(set); err != nil {
		return nil, usagef("%v", err)
	}
	return pl, nil
}

// run makes (or resumes) the campaign and writes its summary and report.
func (q *qualifyCmd) run(ctx context.Context, stdout, stderr io.Writer) (err error) {
	pl, set, dir, ef := q.plan, q.set, q.dir, q.ef
	if !q.resume {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usagef("--out %s: %v", dir, pathErr(err))
		}
		data, err := pl.Marshal()
		if err != nil {
			return err
		}
		file := filepath.Join(dir, "plan.yaml")
		if err := outfile.WriteContext(ctx, file, data, 0o644, outfile.ReaderNote(stderr, file)); err != nil {
			return err
		}
	}
	ledger, err := method.OpenLedger(dir)
	if err != nil {
		return err
	}
	defer ledger.Close()
	kept := len(ledger.Entries())
	if n := ledger.Dropped(); n > 0 {
		fmt.Fprintf(stderr, "tlsbench qualify: %s: dropped its last line, %d bytes torn by a crash (no newline at its end); "+
			"its run will be made again\n", filepath.Join(dir, method.LedgerFile), n)
	}
	// A second signal, even while qualify stops: the reference target killed, no ledger line cut short.
	var refProc atomic.Pointer[os.Process]
	words := func() string {
		if p := refProc.Load(); p != nil {
			_ = p.Kill() // a pidfd: never another process
		}
		if !method.HoldLedgers(500 * time.Millisecond) {
			return "a ledger line was being written (--resume drops it if torn): tlsbench qualify --resume " + dir
		}
		return fmt.Sprintf("the ledger keeps the %d runs finished: tlsbench qualify --resume %s", len(ledger.Entries()), dir)
	}
	lastWords.Store(&words)
	defer lastWords.Store(nil)

	local := &method.Local{Tool: toolInfo(), UserAgent: "tlsbench/" + version, Profiles: set, Sources: q.sources}
	refCA := ""
	if usesReference(pl) {
		var names, resume []string // resume: the modes of the tests that ask for session reuse
		for _, t := range pl.Tests {
			names = append(names, t.Profiles...)
			for _, name := range t.Profiles {
				if p, _ := set.Get(name); p != nil && t.Resume > 0 {
					resume = append(resume, map[bool]string{true: "psk", false: "tickets"}[p.ExpectedVersion() == tls.VersionTLS13])
				}
			}
		}
		ref, err := startReference(ctx, dir, q.files, names, resume)
		if err != nil {
			return err
		}
		defer ref.stop()
		refProc.Store(ref.cmd.Process)
		local.Reference, refCA = ref.lookup, ref.caFile
		local.ReferenceProcesses = []int{ref.cmd.Process.Pid}
		fmt.Fprintf(stderr, "tlsbench qualify: reference target started as process %d\n", ref.cmd.Process.Pid)
	}
	pool, err := startPlanBackends(pl, dir, stderr) // the plan's pool of backends, if any (qualify_backends.go)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, pool.stop()) }()
	exec, stopExec, err := ef.build(local, q.files, refCA)
	if err != nil {
		return err
	}
	defer stopExec()
	var prelimErr error // writing the preliminary table, passed on once the campaign ends
	prog := newCampaignProgress(stderr, q.quiet)
	c := &method.Campaign{
		Plan: pl, Profiles: set, Exec: pool.wrap(exec), Ledger: ledger, AllowDifferences: q.allowDiff,
		Events: prog.event, Watch: prog.watch, Progress: prog.second, Sources: len(q.sources), Agents: q.ef.agents,
		Preliminary: func(ps []method.Prelim) {
			prog.done()
			if err := reports.PreliminaryTable(ps).Text(stdout); err != nil && prelimErr == nil {
				prelimErr = fmt.Errorf("writing the preliminary table: %w", err)
			}
		},
	}
	if q.ef.kind == "kubernetes" { // §7.9: the pods' limits are not known here
		c.HoldLimit = func() (int, string) { return 0, "" }
	}
	live, err := q.live.open(ctx, stdout, stderr)
	defer live.close()
	if err != nil {
		return err
	}
	live.campaignHooks(c, local)
	stopProgress := prog.follow(c.Status)
	fmt.Fprintf(stderr, "tlsbench qualify: campaign %s in %s; runs made %s\n", pl.Name, dir, describeExecutor(ef))
	summary, err := c.Run(ctx)
	stopProgress() // the live line cleared
	var de *method.DifferencesError
	if errors.As(err, &de) {
		if werr := reports.DifferencesTable(de.Table).Text(stdout); werr != nil {
			return errors.Join(err, fmt.Errorf("writing the differences: %w", werr))
		}
		return errors.New(differencesText(err))
	}
	if errors.Is(err, method.ErrInterrupted) {
		n := len(ledger.Entries())
		return fmt.Errorf("%v; the ledger keeps the %d runs finished (%d made now): tlsbench qualify --resume %s "+
			"makes the rest", err, n, n-kept, dir)
	}
	if err != nil {
		return err
	}
	if prelimErr != nil {
		return prelimErr
	}
	if err := pool.stop(); err != nil { // backends.json, for the report
		return err
	}
	if err := method.WriteSummary(dir, summary); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := reports.QualifyTable(&reports.Campaign{Dir: dir, Plan: pl, Summary: summary,
		Ledger: ledger.Entries()}).Text(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nledger: %s  summary: "+
		"%s\n", filepath.Join(dir, method.LedgerFile), filepath.Join(dir, method.SummaryFile))
	html, err := writeCampaignHTML(ctx, dir, stderr)
	if err != nil {
		return fmt.Errorf("the report of %s: %w", dir, err)
	}
	fmt.Fprintf(stdout, "report: %s (open it in a browser; tlsbench report %s renders other formats)\n", html, dir)
	return nil
}

// writeCampaignHTML renders the finished campaign in dir as dir/report.html
// and returns its path.
func writeCampaignHTML(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	c, err := readCampaign(dir)
	if err != nil {
		return "", err
	}
	r, err := reports.Build([]reports.Input{{Name: dir, Campaign: c}})
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "report.html")
	return file, writeOutput(ctx, file, nil, stderr, func(w io.Writer) error { return reports.ReportDoc(r).HTML(w) })
}

// narrowPlan keeps, in the default plan, the profiles and tests named by
// --profile and --test (all when none is named).
func narrowPlan(pl *plan.Plan, names, tests []string) error {
	for _, t := range tests {
		if _, err := vocab.ParseEngine(t); err != nil {
			return usagef("bad --test %q: want cps or throughput", t)
		}
	}
	var kept []plan.Test
	for _, t := range pl.Tests {
		if len(tests) > 0 && !slices.Contains(tests, t.Engine.String()) {
			continue
		}
		if len(names) > 0 {
			t.Profiles = slices.Compact(slices.Clone(names))
		}
		kept = append(kept, t)
	}
	pl.Tests = kept
	return nil
}

// checkPlanFiles checks the files a plan names (the DUTs' CA certificates)
// before the campaign directory is created.
func checkPlanFiles(pl *plan.Plan) error {
	for _, d := range pl.DUTs {
		if d.CACert == "" {
			continue
		}
		if _, err := profiles.LoadRoots(d.CACert); err != nil {
			if re := (*profiles.RootsError)(nil); errors.As(err, &re) && re.Err != nil {
				return usagef("DUT %s: cacert %s: %v", d.Name, d.CACert, pathErr(re.Err))
			}
			return usagef("DUT %s: %v", d.Name, err)
		}
	}
	return nil
}

func eventLine(e method.Event) string {
	name, unit, rfc, note := e.Engine.String(), "cps", "", ""
	if e.Engine == vocab.EngineThroughput {
		unit = "Gbps"
	}
	if e.Note != "" {
		note = "; " + e.Note
	}
	if e.Test != "" { // a suite's test: its name, its value's unit, its verdict
		name, unit, note = e.Test, e.Unit, ""
		if e.Verdict != "" {
			rfc = ", RFC 9411 " + e.Verdict
		}
	}
	name += vocab.OverProtocol(e.Protocol)
	if e.SR > 0 {
		name += fmt.Sprintf(" SR=%g", e.SR)
	}
	run := ""
	if e.Phase == vocab.Final {
		run = fmt.Sprintf(" run %d/%d", e.Seq, e.Of)
	}
	run += roundText(e)
	verdict := "accepted"
	if !e.Accepted {
		verdict = "rejected: " + strings.Join(e.Reasons, "; ")
	}
	cached := ""
	if e.Cached {
		cached = " (from the ledger)"
	}
	return fmt.Sprintf("%-11s %s %s %s%s c=%d: %.4g %s%s, %s%s%s", e.Phase, e.DUT, name, e.Profile, run, e.Level,
		e.Value, unit, rfc, verdict, note, cached)
}

func usesReference(p *plan.Plan) bool {
	for _, d := range p.DUTs {
		if d.URL == plan.Reference {
			return true
		}
		for _, u := range d.Endpoints {
			if u == plan.Reference {
				return true
			}
		}
	}
	return false
}

// reference is the reference target running as a child process, so that
// its CPU is not the generator's.
type reference struct {
	cmd    *exec.Cmd
	addrs  map[string]string // profile → host:port
	pool   *x509.CertPool
	caFile string // the CA certificate, for agents
}

// startReference starts `tlsbench serve` for the named profiles and reads
// its addresses from its ready line (target.Ready); its CA certificate goes
// into dir.
func startReference(ctx context.Context, dir string, files, names, resume []string) (*reference, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ca, err := filepath.Abs(filepath.Join(dir, "reference-ca.pem"))
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--port", "0", "--ca-out", ca}
	for _, f := range files {
		args = append(args, "--profile-file", f)
	}
	seen := map[string]bool{}
	for _, p := range names {
		if !seen[p] {
			seen[p] = true
			args = append(args, "--profile", p)
		}
	}
	for _, m := range resume {
		if !seen["--resumption "+m] {
			seen["--resumption "+m] = true
			args = append(args, "--resumption", m)
		}
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // Ctrl-C: qualify stops it
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the reference target: %w", err)
	}
	r := &reference{cmd: cmd, addrs: map[string]string{}, caFile: ca}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for ready := false; !ready; {
		select {
		case line, ok := <-lines:
			if !ok {
				r.stop()
				return nil, errors.New("the reference target exited before it was ready")
			}
			rl, isReady, err := target.ParseReady(line) // serve's ready line, after its table
			if err != nil {
				r.stop()
				return nil, fmt.Errorf("the reference target: %w", err)
			}
			for _, l := range rl.Listeners {
				r.addrs[l.Profile] = l.Addr
			}
			ready = isReady
		case <-deadline:
			r.stop()
			return nil, errors.New("the reference target did not start within 30 s")
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		}
	}
	go func() {
		for range lines { // drain the rest of its output
		}
	}()
	if r.pool, err = profiles.LoadRoots(ca); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

func (r *reference) lookup(profile string) (string, *x509.CertPool, error) {
	addr, ok := r.addrs[profile]
	if !ok {
		return "", nil, fmt.Errorf("the reference target serves no %s", profile)
	}
	return "https://localhost:" + portOf(addr) + "/", r.pool, nil
}

// stop ends the reference target: SIGTERM, and SIGKILL to its process
// group if it has not exited within 3 s.
func (r *reference) stop() {
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { r.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// roundText says which pass of the method a run belongs to: a
// re-exploration (and the finals after it), a repeat of the final phase.
func roundText(e method.Event) string {
	out := ""
	if e.Round > 0 {
		out = " (re-explored)"
		if e.Phase != vocab.Final {
			out = " (re-exploration)"
		}
	}
	if e.Repeat > 1 {
		out += fmt.Sprintf(" repeat %d", e.Repeat)
	}
	return out
}
