package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

const impactUsage = `tlsbench impact --baseline URL --candidate URL [flags]

Measures what a change costs (a WAF in front of a load balancer, a firmware,
a cipher): the same Siege-like load against a baseline and a candidate,
interleaved round by round (baseline, candidate, baseline, …), then Siege's
metrics side by side with deltas, the latency split per phase, the spread
across rounds, and a verdict on the rounds' response times: significant
(Mann-Whitney p < 0.01 and a 95% interval excluding zero; p exact up to 400
rounds in all, 120 with tied values, else the normal approximation, labelled
so), equivalent (the 98% interval inside ±--equivalence-bound percent of the
baseline), or inconclusive, with the reason and the rounds a side that would
settle it.
Five rounds a side is the fewest that can be significant at 0.01.
Users open a new connection per request (Siege's default) or, with
--keepalive, keep it. --baseline-dut and --candidate-dut name the two
devices in the rounds' records (--json), as --dut does for cps.`

// impactCmd is an impact command line, parsed and checked.
type impactCmd struct {
	specs    []*runner.Spec // baseline, candidate
	lf       *loadFlags
	set      *profiles.Set
	rounds   int
	cooldown time.Duration
	format   string
	bound    float64
}

// parseImpact parses and checks an impact command line (its --urls file
// read, its --json path checked).
func parseImpact(args []string, stdout io.Writer) (*impactCmd, error) {
	c := &impactCmd{}
	fs := newFlags("impact")
	lf := addLoadFlags(fs, vocab.EngineCPS, 25, "requests")
	baseline := fs.String("baseline", "", "baseline `URL` (https)")
	candidate := fs.String("candidate", "", "candidate `URL` (https)")
	baselineDUT := fs.String("baseline-dut", "", "name the baseline's device `NAME` in its records "+
		"(report and compare group by it)")
	candidateDUT := fs.String("candidate-dut", "", "name the candidate's device `NAME` in its records")
	fs.IntVar(&c.rounds, "rounds", 3, "`N` rounds of each side, interleaved")
	fs.DurationVar(&c.cooldown, "cooldown", time.Second, "pause between runs")
	keepalive := fs.Bool("keepalive", false, "keep connections open between requests (Siege: connection = keep-alive)")
	urlsFile := fs.String("urls", "", "`FILE` of URLs (one a line; their paths are requested in turn on both sides)")
	random := fs.Bool("random", false, "with --urls: pick the URLs at random")
	fs.StringVar(&c.format, "format", "text", "output `FORMAT`: text, md, json or html")
	fs.Float64Var(&c.bound, "equivalence-bound", stats.DefaultEquivalencePct, "`PCT` of the baseline: a shift inside ± "+
		"this is no difference (equivalent)")
	if err := parseFlags(fs, impactUsage, args, stdout); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q (the URLs go with --baseline and --candidate)", fs.Args())
	}
	if *baseline == "" || *candidate == "" {
		return nil, usagef("--baseline URL and --candidate URL are both required")
	}
	for _, d := range []struct{ flag, name string }{{"--baseline-dut", *baselineDUT}, {"--candidate-dut", *candidateDUT}} {
		if err := checkDUTName(d.flag, d.name); err != nil {
			return nil, err
		}
	}
	if *baselineDUT != "" && *baselineDUT == *candidateDUT {
		return nil, usagef("--baseline-dut and --candidate-dut are both %q: "+
			"an impact study compares two devices (or two states of one: name them apart)", *baselineDUT)
	}
	if c.rounds < 1 {
		return nil, usagef("--rounds must be at least 1, got %d", c.rounds)
	}
	if !(c.bound > 0 && c.bound < 100) {
		return nil, usagef("--equivalence-bound must be a percentage above 0 and below 100, got %g", c.bound)
	}
	if lf.spec.Rate > 0 {
		return nil, usagef("--rate: an impact study runs Siege-like users (-c), not a rate")
	}
	if len(lf.names) > 1 {
		return nil, usagef("one --profile at most: an impact study compares two targets, not profiles")
	}
	switch c.format {
	case "text", "md", "json", "html":
	default:
		return nil, usagef("unknown --format %q (text, md, json or html)", c.format)
	}
	if err := lf.resolve(); err != nil {
		return nil, err
	}
	ls := lf.share()
	if err := checkOutputs([2]string{"--json", lf.jsonOut}); err != nil {
		return nil, err
	}
	engine := vocab.EngineCPS
	if *keepalive {
		engine = vocab.EngineThroughput
	}
	if err := checkCapacity(engine, ls.Concurrency); err != nil {
		return nil, err
	}
	var paths []string
	if *urlsFile != "" {
		var err error
		if paths, err = readURLs(*urlsFile); err != nil {
			return nil, err
		}
	}
	p := lf.profiles[0]
	c.lf = lf
	c.set = lf.set
	c.specs = make([]*runner.Spec, 2)
	for i, raw := range []string{*baseline, *candidate} {
		ep, err := parseTarget(raw, lf.resolves, lf.plainSNI(), "/")
		if err != nil {
			return nil, err
		}
		spec := ls
		spec.Engine, spec.Profile, spec.Paths, spec.RandomPath = engine, p.Name, paths, *random
		spec.Host, spec.Path = ep.HostHeader, ep.Path
		spec.Target.DUT, spec.Target.URL = []string{*baselineDUT, *candidateDUT}[i], ep.URL.String()
		spec.Target.Address, spec.Target.ServerName = ep.Address, ep.ServerName
		spec.Config = runner.Echo(struct {
			Side      string   `json:"side"`
			Rounds    int      `json:"rounds"`
			Keepalive bool     `json:"keepalive"`
			Headers   []string `json:"headers,omitempty"`
			URLs      []string `json:"urls,omitempty"`
			Random    bool     `json:"random,omitempty"`
		}{[]string{impact.BaselineSide, impact.CandidateSide}[i], c.rounds, *keepalive, lf.headers, paths, *random})
		c.specs[i] = &spec
		if _, err := runner.NewOp(c.specs[i]); err != nil {
			return nil, usagef("%v", err)
		}
	}
	return c, nil
}

// run makes the study and writes its report.
func (c *impactCmd) run(ctx context.Context, stdout, stderr io.Writer) error {
	specs, lf := c.specs, c.lf
	reportW := stdout // with --json -, the record is stdout and the report goes to stderr
	if lf.jsonOut == stdoutName {
		reportW = stderr
	}
	if err := lf.mtls.write(ctx, &lf.spec, stdout, stderr); err != nil { // mtlsflags.go: before any load
		return err
	}
	// One transaction per side, exactly as the load makes them, before
	// any round: a mistake on either side costs one connection.
	for _, spec := range specs {
		pf, err := runner.Preflight(ctx, spec)
		if err != nil {
			return err
		}
		if !pf.OK {
			return noSuccess(&metrics.Run{Profile: spec.Profile, Target: spec.Target, Preflight: pf}, c.set)
		}
	}
	for i, side := range []string{impact.BaselineSide, impact.CandidateSide} {
		specs[i].Progress = statusLine(stderr, side, lf.quiet, lf.spec.Warmup, func(s metrics.Second) string {
			return fmt.Sprintf("%6d trans/s  %d errors  mean %s", s.Transactions, s.Errors, reports.Micros(s.TotalMean))
		})
	}
	im := &impact.Study{
		Baseline: specs[0], Candidate: specs[1], Rounds: c.rounds, Cooldown: c.cooldown,
		Events: func(side string, round int, r *metrics.Run) {
			endStatus(stderr, lf.quiet)
			fmt.Fprintf(stderr, "round %d/%d %-9s %.1f trans/s, mean %s, %d errors\n", round, c.rounds, side,
				float64(r.Transactions)/max(r.DurationS, 1e-9), reports.Micros(r.Percentiles(vocab.PhaseTotal).Mean),
				r.Errors.Total)
		},
	}
	live, lerr := lf.live.open(ctx, stdout, stderr)
	defer live.close()
	if lerr != nil {
		return lerr
	}
	live.impactHooks(specs, im)
	runs, err := im.Do(ctx)
	if lf.jsonOut != "" && runs != nil {
		data, jerr := json.MarshalIndent(struct {
			Schema string `json:"schema"`
			*impact.Runs
		}{impact.RunsSchema, runs}, "", "  ")
		if jerr == nil {
			jerr = outfile.WriteOut(ctx, lf.jsonOut, append(data, '\n'), 0o644, stdout, stderr)
		}
		if jerr != nil {
			return fmt.Errorf("writing --json: %w", jerr)
		}
	}
	var failed *impact.FailedRunError
	if errors.As(err, &failed) {
		return fmt.Errorf("%s, round %d: %w", failed.Side, failed.Round, noSuccess(failed.Run, c.set))
	}
	if errors.Is(err, impact.ErrInterrupted) {
		return errors.New("interrupted; the rounds made are in --json if given")
	}
	if err != nil {
		return err
	}
	for _, side := range [][]*metrics.Run{runs.Baseline, runs.Candidate} {
		for _, r := range side {
			if r.Whole.Transactions == 0 {
				return noSuccess(r, c.set)
			}
		}
	}
	rep, err := impact.AnalyzeWithin(runs, c.bound)
	if err != nil {
		return err
	}
	switch c.format {
	case "json":
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = reportW.Write(append(data, '\n'))
		return err
	case "md":
		return reports.ImpactDoc(rep).Markdown(reportW, "", nil)
	case "html":
		return reports.ImpactDoc(rep).HTML(reportW)
	}
	return reports.ImpactDoc(rep).Text(reportW)
}

// readURLs reads a --urls file: one URL (or path) a line; blank lines and
// lines starting with # are skipped. It returns the paths (with queries).
func readURLs(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, usagef("--urls: %v", err)
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := url.Parse(line)
		if err != nil || (u.Scheme != "" && u.Scheme != "https") || (u.Scheme == "" && !strings.HasPrefix(line, "/")) {
			return nil, usagef("--urls %s:%d: %q is not an https URL or a path", file, n, line)
		}
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		paths = append(paths, p)
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("--urls: %v", err)
	}
	if len(paths) == 0 {
		return nil, usagef("--urls %s: no URL in it", file)
	}
	return paths, nil
}
