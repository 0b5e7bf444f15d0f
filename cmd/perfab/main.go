// Command perfab is the performance guard (`make perf-ab BASE=REV`): it
// builds tlsbench at a base revision and from the working tree, serves the
// reference target on CPU 0, and runs the two binaries alternately on CPU 1
// (rounds in ABBA order, so that a drift of the machine is shared): a CPS run
// of each seed profile and a throughput run of /1m per round. For each
// figure — generator CPU µs per CPS transaction, CPU seconds per GB of
// response bodies — it prints both means, their ratio, and the verdict of
// the rounds paired (bench/stats.PairedRatio: the geometric mean of the
// rounds' ratios and its 95% interval; significant when it excludes 1,
// equivalent when it lies within ±3 %, else inconclusive with the rounds
// that would settle it).
//
// CPU is the generator's own rusage as its record gives it (client.cpu_s,
// client.cpu_per_transaction_us). Results vary between machines: only the
// ratio of the two builds measured in one invocation means anything.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// usageError is bad input or a machine that cannot run the guard: one line,
// exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

type options struct {
	base        string
	rounds      int
	duration    time.Duration
	concurrency int
	profiles    []string
	throughput  bool
	bound       float64
	out         string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	var ue *usageError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "perf-ab:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "perf-ab:", err)
		os.Exit(1)
	}
}

func parse(args []string) (*options, error) {
	o := &options{}
	fs := pflag.NewFlagSet("perfab", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.base, "base", "", "the base `REV` (a commit, tag or branch) the working tree is compared with")
	fs.IntVar(&o.rounds, "rounds", 6, "rounds per binary (each round: every profile's CPS run and a throughput run)")
	fs.DurationVar(&o.duration, "duration", 4*time.Second, "each run's steady window")
	fs.IntVar(&o.concurrency, "concurrency", 32, "CPS workers")
	fs.StringSliceVar(&o.profiles, "profiles", nil, "CPS profiles (default: the seed study's three)")
	fs.BoolVar(&o.throughput, "throughput", true, "also compare CPU per GB of keep-alive /1m")
	fs.Float64Var(&o.bound, "bound", 3, "equivalence bound, percent of the base's mean")
	fs.StringVar(&o.out, "out", "", "write the comparison as JSON to `FILE`")
	if err := fs.Parse(args); err != nil {
		return nil, &usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return nil, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.base == "":
		return nil, &usageError{"no base revision: make perf-ab BASE=REV (e.g. BASE=HEAD~1)"}
	case o.rounds < 2:
		return nil, &usageError{fmt.Sprintf("--rounds %d: at least 2 rounds are needed for a verdict", o.rounds)}
	case o.bound <= 0 || o.bound >= 100:
		return nil, &usageError{fmt.Sprintf("--bound %g: an equivalence bound is above 0 and below 100 (%%)", o.bound)}
	case o.duration < time.Second:
		return nil, &usageError{fmt.Sprintf("--duration %s: at least 1s", o.duration)}
	case runtime.NumCPU() < 2:
		return nil, &usageError{fmt.Sprintf("this machine has %d core: the target and the generator need one each",
			runtime.NumCPU())}
	}
	if len(o.profiles) == 0 {
		o.profiles = profiles.SeedProfiles
	}
	for _, p := range o.profiles {
		if _, err := profiles.Builtin().Get(p); err != nil {
			return nil, &usageError{fmt.Sprintf("--profiles: %v", err)}
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, w io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return &usageError{"taskset not found (util-linux): the binaries are pinned to cores"}
	}
	tmp, err := os.MkdirTemp("", "perfab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	base, cand, err := build(ctx, o.base, tmp)
	if err != nil {
		return err
	}
	target, ca, err := startTarget(ctx, cand, o.profiles, tmp)
	if err != nil {
		return err
	}
	defer target.Close()
	figs := newFigures(o)
	for r := range o.rounds {
		order := [2]int{0, 1}
		if r%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, side := range order {
			bin := [2]string{base, cand}[side]
			for i, f := range figs {
				v, err := f.measure(ctx, bin, target, ca, tmp)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", r+1, [2]string{"base", "working tree"}[side], f.name, err)
				}
				figs[i].values[side] = append(figs[i].values[side], v)
			}
		}
		fmt.Fprintf(os.Stderr, "perf-ab: round %d of %d done\n", r+1, o.rounds)
	}
	return report(w, o, figs)
}

// build builds tlsbench at rev (in a detached worktree) and from the working
// tree.
func build(ctx context.Context, rev, tmp string) (base, cand string, err error) {
	src := filepath.Join(tmp, "base-src")
	if out, err := exec.CommandContext(ctx, "git", "worktree", "add", "-q", "--detach", src, rev).
		CombinedOutput(); err != nil {
		return "", "", &usageError{fmt.Sprintf("revision %q: %s", rev, firstLine(out))}
	}
	defer exec.Command("git", "worktree", "remove", "--force", src).Run() //nolint:errcheck // best effort
	base, cand = filepath.Join(tmp, "tlsbench-base"), filepath.Join(tmp, "tlsbench-cand")
	if out, err := goBuild(ctx, src, base); err != nil {
		return "", "", &usageError{fmt.Sprintf("revision %q does not build: %s", rev, firstLine(out))}
	}
	if out, err := goBuild(ctx, ".", cand); err != nil {
		return "", "", &usageError{fmt.Sprintf("the working tree does not build: %s", firstLine(out))}
	}
	return base, cand, nil
}

func goBuild(ctx context.Context, dir, out string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/tlsbench")
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(no output)"
	}
	return s
}

// startTarget serves every profile on CPU 0 with the working tree's binary
// (the same target for both sides).
func startTarget(ctx context.Context, bin string, profs []string, tmp string) (*served, string, error) {
	ca := filepath.Join(tmp, "ca.pem")
	args := []string{"-c", "0", bin, "serve", "--listen", "127.0.0.1", "--port", "0", "--ca-out", ca}
	for _, p := range profs {
		args = append(args, "--profile", p)
	}
	s, err := testdut.StartServed(ctx, "target", exec.Command("taskset", args...))
	if err != nil {
		return nil, "", fmt.Errorf("reference target: %w", err)
	}
	return &served{s: s}, ca, nil
}

// served is the running reference target.
type served struct {
	s interface {
		Close() error
		Addr(profile string) string
	}
}

func (t *served) Close() { _ = t.s.Close() }

func (t *served) addr(profile string) string { return t.s.Addr(profile) }

// figure is one compared figure: how it is measured, and its values per
// side (0 base, 1 working tree).
type figure struct {
	name, unit string
	measure    func(ctx context.Context, bin string, t *served, ca, tmp string) (float64, error)
	values     [2][]float64
}

func newFigures(o *options) []figure {
	var figs []figure
	for _, p := range o.profiles {
		figs = append(figs, figure{name: "CPS " + p, unit: "µs CPU per transaction",
			measure: func(ctx context.Context, bin string, t *served, ca, tmp string) (float64, error) {
				rec, err := loadRun(ctx, bin, tmp, "cps", "-c", fmt.Sprint(o.concurrency), "-d", o.duration.String(),
					"--warmup", "1s", "--profile", p, "--cacert", ca, "https://"+t.addr(p)+"/1k")
				if err != nil {
					return 0, err
				}
				return rec.Client.CPUPerTxnUS, nil
			}})
	}
	if o.throughput {
		p := profiles.SeedProfiles[len(profiles.SeedProfiles)-1] // AES128-GCM
		figs = append(figs, figure{name: "throughput " + p, unit: "CPU s per GB",
			measure: func(ctx context.Context, bin string, t *served, ca, tmp string) (float64, error) {
				rec, err := loadRun(ctx, bin, tmp, "throughput", "-c", "8", "-d", o.duration.String(),
					"--warmup", "1s", "--profile", p, "--cacert", ca, "https://"+t.addr(p)+"/1m")
				if err != nil {
					return 0, err
				}
				if rec.Bytes.Payload <= 0 {
					return 0, errors.New("no response bodies")
				}
				return analysis.CPUPerGB(rec), nil
			}})
	}
	return figs
}

// loadRun runs bin's engine pinned to CPU 1 and reads its record.
func loadRun(ctx context.Context, bin, tmp, engine string, args ...string) (*metrics.Run, error) {
	out := filepath.Join(tmp, "run.json")
	full := append([]string{"-c", "1", bin, engine, "-q", "--json", out}, args...)
	cmd := exec.CommandContext(ctx, "taskset", full...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), engine, err, firstLine(b))
	}
	return metrics.ReadRun(out)
}

// comparison is one figure's result, as printed and as JSON: the values by
// round, the ratio of their means and the verdict of the rounds paired.
type comparison struct {
	Figure string       `json:"figure"`
	Unit   string       `json:"unit"`
	Base   []float64    `json:"base"`
	Work   []float64    `json:"working_tree"`
	Ratio  float64      `json:"ratio"`
	Paired stats.Paired `json:"paired"`
}

func report(w io.Writer, o *options, figs []figure) error {
	fmt.Fprintf(w, "perf-ab: %s (base) vs the working tree, %d rounds each, ABBA; lower is better\n", o.base, o.rounds)
	fmt.Fprintf(w, "verdict: the rounds paired (geometric mean of each round's working tree ÷ base, 95%% t interval); "+
		"equivalent within ±%g%%\n\n", o.bound)
	fmt.Fprintf(w, "%-62s %10s %10s %7s  %-22s %s\n", "FIGURE", "BASE", "WORK", "RATIO", "PAIRED [95%]", "VERDICT")
	var all []comparison
	for _, f := range figs {
		b, c := mean(f.values[0]), mean(f.values[1])
		cmp := comparison{Figure: f.name, Unit: f.unit, Base: f.values[0], Work: f.values[1],
			Paired: stats.PairedRatio(f.values[0], f.values[1], o.bound)}
		if b > 0 {
			cmp.Ratio = c / b
		}
		p := cmp.Paired
		fmt.Fprintf(w, "%-62s %10.2f %10.2f %7.3f  %-22s %s\n", f.name+" ("+f.unit+")", b, c, cmp.Ratio,
			fmt.Sprintf("%.3f [%.3f, %.3f]", p.Ratio, p.Lo, p.Hi), verdict(p, o.bound))
		all = append(all, cmp)
	}
	if o.out == "" {
		return nil
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.out, append(b, '\n'), 0o644)
}

// verdict is the paired verdict as printed: with its direction, or the
// rounds that would settle it.
func verdict(p stats.Paired, bound float64) string {
	switch dir := map[bool]string{true: "higher", false: "lower"}[p.Ratio > 1]; {
	case p.Verdict == stats.VerdictSignificant:
		return fmt.Sprintf("significant: the working tree %s by %.1f%%", dir, math.Abs(p.Ratio-1)*100)
	case p.Verdict == stats.VerdictEquivalent:
		return fmt.Sprintf("equivalent: within ±%g%%", bound)
	case p.RoundsNeeded > 0:
		return fmt.Sprintf("inconclusive: about %d rounds would settle it", p.RoundsNeeded)
	}
	return fmt.Sprintf("inconclusive: no number of rounds would settle it (%d usable)", p.N)
}

func mean(xs []float64) (m float64) {
	for _, x := range xs {
		m += x / float64(len(xs))
	}
	return m
}
