// Command tlsbench benchmarks devices that terminate TLS: connections per
// second with full handshakes, verified against cipher profiles, and the
// reference target they can be tested against.
//
// This package is the only composition root: it parses flags, opens files,
// turns signals into a context and calls the library.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set by the Makefile (-ldflags "-X main.version=…").
var version = "dev"

// childEnv is set in the environment of child processes tlsbench starts
// (the reference target of qualify), so that a test binary acts as tlsbench.
const childEnv = "TLSBENCH_CHILD"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// A second signal ends the process at once.
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		fmt.Fprintln(os.Stderr, "tlsbench: interrupted twice, exiting")
		os.Exit(130)
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK       = 0 // the work was done (a run's errors are data in its record)
	exitFailed   = 1 // it could not be done: target unreachable, no transaction succeeded
	exitBadUsage = 2 // bad usage or input
)

// usageError is bad usage or input: exit 2 with one line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"cps", "measure full-handshake connections per second (SR=0)", runCPS},
		{"throughput", "measure encrypted bandwidth over keep-alive connections (Gbps)", runThroughput},
		{"qualify", "run the qualification method and print the published table", runQualify},
		{"report", "render campaigns and run records: published table, appendix, charts", runReport},
		{"compare", "set every metric of two runs or campaigns side by side, with deltas", runCompare},
		{"impact", "A/B study: what a change (a WAF, a firmware) costs, interleaved rounds", runImpact},
		{"merge", "merge the records of agents that ran one distributed run, exactly", runMerge},
		{"collect", "receive agents' pushed records and merge them when all have arrived", runCollect},
		{"k8s", "print the Kubernetes Indexed Job that runs an engine command as N agents", runK8s},
		{"calibrate", "measure the generator's cost per handshake and per GB; size a goal in cores", runCalibrate},
		{"serve", "run the reference TLS target", runServe},
		{"profiles", "list cipher profiles, show one, list suites or groups", runProfiles},
		{"schema", "list the JSON Schemas of the records and outputs, or print one", runSchema},
		{"version", "print the version", runVersion},
	}
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return exitBadUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		return report(stderr, "tlsbench "+c.name, err)
	}
	fmt.Fprintf(stderr, "tlsbench: unknown command %q (commands: %s)\n", args[0], commandNames())
	return exitBadUsage
}

// report prints err on one line and returns the exit code it deserves.
func report(stderr io.Writer, prefix string, err error) int {
	if err == nil {
		return exitOK
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
	fmt.Fprintf(stderr, "%s: %s\n", prefix, msg)
	var ue *usageError
	if errors.As(err, &ue) {
		return exitBadUsage
	}
	return exitFailed
}

func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "tlsbench benchmarks devices that terminate TLS.")
	fmt.Fprintln(w, "\nUsage: tlsbench COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'tlsbench COMMAND --help' for a command's flags.")
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		return usagef("takes no arguments")
	}
	fmt.Fprintf(stdout, "tlsbench %s\n", toolInfo().Version)
	return nil
}
