package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

const calibrateUsage = `tlsbench calibrate [--profile NAME]... [--cps GOAL] [--gbps GOAL] [flags]

Measures, on this machine, what the generator pays per full handshake and per
GB of payload for each profile, against the reference target running as a
separate process, and says how many generator cores a CPS or Gbps goal needs.`

// calibrateCmd is a calibrate command line, parsed and checked.
type calibrateCmd struct {
	set               *profiles.Set
	ps                []*profiles.Profile
	names, files      []string
	dur               time.Duration
	cpsGoal, gbpsGoal float64
}

// parseCalibrate parses and checks a calibrate command line.
func parseCalibrate(args []string, stdout io.Writer) (*calibrateCmd, error) {
	c := &calibrateCmd{}
	fs := newFlags("calibrate")
	fs.StringArrayVar(&c.names, "profile", nil, "profile `NAME` (repeatable; default the three seed profiles)")
	fs.StringArrayVar(&c.files, "profile-file", nil, "add the profiles of a YAML `FILE` (repeatable)")
	fs.DurationVarP(&c.dur, "duration", "d", 3*time.Second, "each measurement's `DURATION`")
	fs.Float64Var(&c.cpsGoal, "cps", 0, "a CPS `GOAL` to size (e.g. 105000)")
	fs.Float64Var(&c.gbpsGoal, "gbps", 0, "a throughput `GOAL` in Gbps to size (e.g. 53)")
	if err := parseFlags(fs, calibrateUsage, args, stdout); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	if c.dur <= 0 {
		return nil, usagef("--duration must be positive, got %s", c.dur)
	}
	var err error
	if c.set, err = loadProfiles(c.files); err != nil {
		return nil, err
	}
	if len(c.names) == 0 {
		c.names = slices.Clone(profiles.SeedProfiles)
	}
	for _, n := range c.names {
		p, err := c.set.Get(n)
		if err != nil {
			return nil, usagef("%s", err)
		}
		c.ps = append(c.ps, p)
	}
	return c, nil
}

// run measures the generator's costs against the reference target.
func (c *calibrateCmd) run(ctx context.Context, stdout, stderr io.Writer) error {
	set, ps := c.set, c.ps
	dir, err := os.MkdirTemp("", "tlsbench-calibrate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ref, err := startReference(ctx, dir, c.files, c.names, nil)
	if err != nil {
		return err
	}
	defer ref.stop()
	fmt.Fprintf(stderr, "tlsbench calibrate: reference target started as process %d; %s per measurement\n",
		ref.cmd.Process.Pid, c.dur)

	type row struct {
		p         *profiles.Profile
		usPerTxn  float64
		sPerGB    float64
		cps, gbps float64
		cpsBound  bool
		gbpsBound bool
	}
	var rows []row
	for _, p := range ps {
		base, roots, err := ref.lookup(p.Name)
		if err != nil {
			return err
		}
		ep, err := parseTarget(base, nil, "", "/")
		if err != nil {
			return err
		}
		r := row{p: p}
		for _, engine := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			spec := runner.Defaults(engine)
			spec.Profile, spec.Profiles, spec.Roots, spec.Tool = p.Name, set, roots, toolInfo()
			spec.Target = metrics.Target{Address: ep.Address, ServerName: ep.ServerName}
			spec.Host, spec.UserAgent = ep.HostHeader, "tlsbench/"+version
			spec.Concurrency = map[vocab.Engine]int{vocab.EngineCPS: 16, vocab.EngineThroughput: 8}[engine]
			spec.Duration = c.dur
			spec.Warmup = time.Second
			run, err := runner.Run(ctx, &spec)
			if err != nil {
				return err
			}
			if run.Whole.Transactions == 0 {
				return noSuccess(run, set)
			}
			if engine == vocab.EngineCPS {
				r.usPerTxn, r.cps, r.cpsBound = run.Client.CPUPerTxnUS, metrics.Value(run.CPS), run.Client.GeneratorBound
			} else {
				r.sPerGB, r.gbps, r.gbpsBound = analysis.CPUPerGB(run), metrics.Value(run.Gbps), run.Client.GeneratorBound
			}
			fmt.Fprintf(stderr, "  %s %s: %s\n", p.Name, engine, calibrateLine(run))
		}
		rows = append(rows, r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tCPU/HANDSHAKE\tHANDSHAKES/CORE-S\tCPU/GB\tGBPS/CORE\tMEASURED CPS\tMEASURED GBPS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f µs\t%.0f\t%.2f s\t%.2f\t%.0f%s\t%.2f%s\n",
			r.p.Name, r.usPerTxn, 1e6/r.usPerTxn, r.sPerGB, 8/r.sPerGB,
			r.cps, boundMark(r.cpsBound), r.gbps, boundMark(r.gbpsBound))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if c.cpsGoal > 0 {
			fmt.Fprintf(stdout, "%s CPS of %s needs ≈ %.0f cores of this machine\n",
				reports.FormatCPS(c.cpsGoal), r.p.Name, c.cpsGoal*r.usPerTxn/1e6)
		}
		if c.gbpsGoal > 0 {
			fmt.Fprintf(stdout, "%s of %s needs ≈ %.0f cores of this machine\n",
				reports.FormatGbps(c.gbpsGoal), r.p.Name, c.gbpsGoal*r.sPerGB/8)
		}
	}
	fmt.Fprintln(stdout, strings.TrimSpace(`
Costs are the generator's own CPU (getrusage) over the whole run divided by the work done;
the reference target ran in another process. A cost measured while the generator was
not busy is higher than when it is saturated (per-connection wake-ups); * marks runs that
were generator-bound.`))
	return nil
}

func calibrateLine(r *metrics.Run) string {
	if r.Engine == vocab.EngineCPS {
		return fmt.Sprintf("%.0f cps, %.0f µs CPU per transaction, generator %.0f%% of %d cores",
			metrics.Value(r.CPS), r.Client.CPUPerTxnUS, r.Client.Utilization*100, r.Client.Cores)
	}
	return fmt.Sprintf("%.2f Gbps, %.2f s CPU per GB, generator %.0f%% of %d cores",
		metrics.Value(r.Gbps), analysis.CPUPerGB(r), r.Client.Utilization*100, r.Client.Cores)
}

func boundMark(b bool) string {
	if b {
		return "*"
	}
	return ""
}
