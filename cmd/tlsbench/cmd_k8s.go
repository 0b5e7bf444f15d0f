package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/runner"
)

const k8sUsage = `tlsbench k8s manifest --agents N --image IMAGE --report-to URL [flags] -- ENGINE URL [engine flags]

Prints (for kubectl apply -f -) a headless Service and an Indexed Job that
run an engine command (cps or throughput) as N agents, one pod per node: each
takes share i/N of the load (--shard), all start the load at one time
(--start-at) and push their records to a collector (--report-to, required:
a pod keeps no file; tlsbench collect --expect N). The engine command is checked here as each agent will
check it.

The agents sign their records with the run's token, which the manifest holds
in a Secret (NAME-auth) referenced by the pods' environment: --token-file
FILE (created with a new token, mode 0600, if missing: give the same file to
tlsbench collect) or $TLSBENCH_TOKEN. A NetworkPolicy lets the pods reach
only the DUT and the collector. See docs/KUBERNETES.md.`

func runK8s(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: manifest (tlsbench k8s manifest --help)")
	}
	switch args[0] {
	case "manifest":
		return runK8sManifest(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintf(stdout, "Usage: %s\n", k8sUsage)
		return nil
	}
	return usagef("unknown subcommand %q: want manifest", args[0])
}

func runK8sManifest(args []string, stdout, stderr io.Writer) error {
	var tokenFile string // read (or created) once the rest is checked
	o, err := parseK8sManifest(args, stdout, &tokenFile)
	if err != nil {
		return helpOK(err)
	}
	// Last: a new token file is made only for a manifest that will print.
	if o.Token, err = readToken(tokenFile, true, stderr); err != nil {
		return err
	}
	b, err := agent.Manifest(o)
	if err != nil {
		return manifestError(err)
	}
	_, err = stdout.Write(b)
	return err
}

// parseK8sManifest parses and checks a k8s manifest command line into the
// manifest's options, the engine command into the run every agent takes
// its share of, and sets *tokenFileOut to --token-file.
func parseK8sManifest(args []string, stdout io.Writer, tokenFileOut *string) (agent.ManifestOptions, error) {
	o := agent.DefaultManifestOptions()
	var x k8sFlags
	fs := newK8sManifestFlags(&o, &x)
	// The first argument ends the flags: the engine's are not ours.
	fs.SetInterspersed(false)
	if err := parseFlags(fs, k8sUsage, args, stdout); err != nil {
		return o, err
	}
	*tokenFileOut = x.tokenFile

	switch {
	case fs.ArgsLenAtDash() < 0 && fs.NArg() > 0:
		return o, usagef("the engine command follows --: "+
			"tlsbench k8s manifest [flags] -- cps|throughput URL [engine flags]; got %q before --", fs.Arg(0))
	case fs.NArg() == 0:
		return o, usagef("nothing after --: want -- cps|throughput URL [engine flags]")
	case o.Agents < 1:
		return o, usagef("--agents N is required and at least 1, got %d", o.Agents)
	case o.Image == "":
		return o, usagef("--image is required: the agents' image (see the Dockerfile)")
	case o.ReportTo == "":
		return o, usagef("--report-to URL is required: a pod keeps no file, so every agent's record would be lost; " +
			"start tlsbench collect and give its URL as the pods reach it")
	case fs.Changed("start-at") && fs.Changed("start-in"):
		return o, usagef("--start-at and --start-in exclude each other")
	case o.StartTolerance <= 0:
		return o, usagef("--start-tolerance must be positive, got %s", o.StartTolerance)
	}

	now := time.Now()
	start := x.startAt
	if start.IsZero() {
		if x.startIn <= 0 {
			return o, usagef("--start-in must be positive, got %s", x.startIn)
		}
		// The next whole second after the margin: easier to read in logs.
		start = now.Add(x.startIn).Add(time.Second).Truncate(time.Second)
	}
	if !start.After(now) {
		return o, usagef("--start-at %s has passed: the agents would refuse to start late", start.Format(time.RFC3339Nano))
	}
	if wait := start.Sub(now); o.ActiveDeadline <= wait {
		return o, usagef("--active-deadline %s ends before the start, %s from now", o.ActiveDeadline, wait.Round(time.Second))
	}
	o.StartAt, o.NodeSelector = start, map[string]string{}
	for _, s := range x.selectors {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return o, usagef("bad --node-selector %q: want KEY=VALUE", s)
		}
		o.NodeSelector[k] = v
	}
	if err := k8sEngineRun(&o, fs.Args(), now); err != nil {
		return o, err
	}
	return o, k8sCollectorCA(&o, x.collectorCA)
}

// k8sFlags are k8s manifest's flags that are not ManifestOptions fields.
type k8sFlags struct {
	startAt                time.Time
	startIn                time.Duration
	selectors              []string
	tokenFile, collectorCA string
}

// newK8sManifestFlags defines k8s manifest's flags, into o and x.
func newK8sManifestFlags(o *agent.ManifestOptions, x *k8sFlags) *pflag.FlagSet {
	fs := newFlags("k8s manifest")
	fs.IntVar(&o.Agents, "agents", 0, "`N` agents, one pod per node (required)")
	fs.StringVar(&o.Image, "image", "", "the agents' `IMAGE` (see the Dockerfile; required)")
	fs.StringVar(&o.Name, "name", o.Name, "`NAME` of the Job and of its headless Service (a DNS-1123 label)")
	fs.StringVar(&o.Namespace, "namespace", "", "`NAMESPACE` of both (default: kubectl's current one)")
	fs.StringVar(&o.CPU, "cpu", o.CPU, "CPUs of each agent, requests = limits: a `QUANTITY` such as 500m or 2")
	fs.StringVar(&o.Memory, "memory", o.Memory, "memory of each agent, requests = limits: "+
		"a `QUANTITY` such as 512Mi or 1Gi")
	fs.Var(timeValue{"--start-at", &x.startAt}, "start-at",
		"the agreed start `TIME` (RFC 3339; default: now + --start-in)")
	fs.DurationVar(&x.startIn, "start-in", 2*time.Minute, "start the load `DURATION` from now: "+
		"a margin for scheduling and image pulls")
	fs.DurationVar(&o.StartTolerance, "start-tolerance", o.StartTolerance, "an agent may still start this `DURATION` late")
	fs.StringVar(&o.ReportTo, "report-to", "", "`URL` of the collector as the agents reach it (tlsbench collect; "+
		"required)")
	fs.DurationVar(&o.ActiveDeadline, "active-deadline", o.ActiveDeadline, "end the Job `DURATION` after its creation "+
		"(the wait for the start included)")
	fs.StringArrayVar(&x.selectors, "node-selector", nil, "run only on nodes labelled `KEY=VALUE` (repeatable)")
	fs.StringVar(&x.tokenFile, "token-file", "", "the run's token, for the agents' Secret, from `FILE` "+
		"(created with a new token if missing; default $"+agent.EnvToken+")")
	fs.StringVar(&x.collectorCA, "collector-cacert", "", "for an https --report-to: the collector's CA certificate "+
		"`FILE` (tlsbench collect --tls-ca-out), for the agents' Secret")
	return fs
}

// k8sEngineRun parses the engine command after -- as the engine parses it
// into o.Run, the run every agent takes its share of, and checks it as the
// agents will.
func k8sEngineRun(o *agent.ManifestOptions, args []string, now time.Time) error {
	c, err := parseEngineArgs(args)
	if err != nil {
		return err
	}
	switch lf := c; {
	case c.ep == nil:
		return usagef("the agents need a URL: the agents of one run share one target")
	case len(c.profiles) > 1:
		return usagef("the engine command takes one --profile: one distributed run is one profile")
	case lf.shard.set || !lf.startAt.IsZero() || lf.agentName != "" || lf.reportTo != "" ||
		lf.startTolerance != runner.DefaultStartTolerance:
		return usagef("the engine command sets an agent flag (--shard, --start-at, --start-tolerance, --agent, " +
			"--report-to), which the manifest sets for each agent")
	case lf.pushAuth.tokenFile != "" || lf.pushAuth.caFile != "":
		return usagef("the engine command sets --token-file or --report-cacert: give them to k8s manifest " +
			"(--token-file, --collector-cacert), which puts them in the agents' Secret")
	case lf.spec.Device != nil:
		return usagef("%s", errAgentDeviceCounters)
	case lf.jsonOut != "" || lf.keylog != "" || lf.cpuProf != "":
		return usagef("the engine command sets --json, --keylog or --cpuprofile: a file in the pod is lost with it; " +
			"agents push their record (--report-to)")
	}
	o.Run = c.runSpec(c.profiles[0], nil)
	if wait, span := o.StartAt.Sub(now), o.Run.Span(); o.ActiveDeadline <= wait+span {
		return usagef("--active-deadline %s ends before the load does: it starts in %s and goes %s (ramps, "+
			"warm-up and duration)", o.ActiveDeadline, wait.Round(time.Second), span)
	}
	o.Run.Roots, o.Run.Profiles, o.Run.KeyLog = nil, nil, nil // files, read in the pods
	// The first and the last agent's share, checked as the agents will
	// check them (their shares of the load differ only by one), with the
	// files they will be shipped still read from here.
	for _, i := range []int{0, o.Agents - 1} {
		run, err := agent.ManifestAgentSpec(*o, i)
		if err == nil {
			err = run.Validate()
		}
		if err != nil {
			return usagef("the engine command, as agent %d runs it: %s", i, specError(err))
		}
	}
	if o.Files, err = agent.ShipFiles(&o.Run); err != nil {
		return usagef("%s", err)
	}
	return nil
}

// k8sCollectorCA reads --collector-cacert into o, checked as the agents
// will read it from their environment.
func k8sCollectorCA(o *agent.ManifestOptions, file string) error {
	if file == "" {
		return nil
	}
	if !strings.HasPrefix(o.ReportTo, "https://") {
		return usagef("--collector-cacert is for an https --report-to, got %q", o.ReportTo)
	}
	var err error
	if o.CollectorCA, err = os.ReadFile(file); err != nil {
		return usagef("--collector-cacert: %v", pathErr(err))
	}
	if _, err := agent.CredentialsFromEnv(func(v string) string {
		return map[string]string{
			agent.EnvToken:       strings.Repeat("x", agent.MinTokenLen),
			agent.EnvCollectorCA: string(o.CollectorCA),
		}[v]
	}); err != nil {
		return usagef("--collector-cacert %s: %v", file, errors.Unwrap(err))
	}
	return nil
}

// manifestError words an error of agent.Manifest.
func manifestError(err error) error {
	if errors.Is(err, agent.ErrNoReportURL) {
		return usagef("%s (--report-to)", err)
	}
	return usagef("%s", err)
}
