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
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/tlsbench/tlsbench/bench/devcount"
)

// version is set by the Makefile (-ldflags "-X main.version=…").
var version = "dev"

// childEnv is set in the environment of child processes tlsbench starts
// (the reference target of qualify), so that a test binary acts as tlsbench.
const childEnv = "TLSBENCH_CHILD"

// lastWords, if set, is called when a second signal ends the process: it makes
// what the command keeps whole (within the second the exit may take) and says what.
var lastWords atomic.Pointer[func() string]

func main() {
	// Caught from the start: a second signal, however soon, takes the path below.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sig
		cancel() // the command stops, cuts short what it was doing and says what it kept
		<-sig
		msg := "tlsbench: interrupted twice, exiting"
		if words := lastWords.Load(); words != nil {
			msg += "; " + (*words)()
		}
		fmt.Fprintln(os.Stderr, msg)
		devcount.KillCommands() // no counter command outlives the process
		os.Exit(exitFailed)
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

// usagef formats a usage error.
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
		{"impact", "A/B study: what a change (a WAF, a firmware) costs, interleaved rounds", runParsed(parseImpact)},
		{"merge", "merge the records of agents that ran one distributed run, exactly", runMerge},
		{"collect", "receive agents' pushed records and merge them when all have arrived", runCollect},
		{"k8s", "print the Kubernetes Indexed Job that runs an engine command as N agents", runK8s},
		{"agent", "run one agent of a distributed run, read from the environment", runAgent},
		{"calibrate", "measure the generator's cost per handshake and per GB; size a goal in cores",
			runParsed(parseCalibrate)},
		{"serve", "run the reference TLS target", runParsed(parseServe)},
		{"profiles", "list cipher profiles, show one, list suites or groups", runProfiles},
		{"schema", "list the JSON Schemas of the records and outputs, or print one", runSchema},
		{"completion", "print the shell completion script: bash, zsh or fish", runCompletion},
		{"man", "print the man page (roff, section 1)", runMan},
		{"version", "print the version", runVersion},
		{"help", "print a command's help: tlsbench help COMMAND", nil},
	}
}

// runParsed makes the run function of a command that parse parses (and
// checks) before it runs.
func runParsed[C interface {
	run(ctx context.Context, stdout, stderr io.Writer) error
}](parse func([]string, io.Writer) (C, error)) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		c, err := parse(args, stdout)
		if err != nil {
			return helpOK(err)
		}
		return c.run(ctx, stdout, stderr)
	}
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		// Bad usage: the usage goes to stderr.
		printUsage(stderr)
		return exitBadUsage
	case isHelpRequest(args):
		printUsage(stdout)
		return exitOK
	case args[0] == "--version" || args[0] == "-V":
		args = append([]string{"version"}, args[1:]...)
	case args[0] == "help":
		// tlsbench help CMD [SUB…] is tlsbench CMD [SUB…] --help.
		if err := checkHelpTopic(args[1:]); err != nil {
			fmt.Fprintf(stderr, "tlsbench help: %v\n", err)
			return exitBadUsage
		}
		args = append(slices.Clone(args[1:]), "--help")
	}
	for _, c := range commands() {
		if c.name != args[0] || c.run == nil {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		return report(stderr, "tlsbench "+c.name, err)
	}
	fmt.Fprintf(stderr, "tlsbench: unknown command %q (commands: %s)\n", args[0], commandNames())
	return exitBadUsage
}

// checkHelpTopic checks the words after help: a command, then each word
// a subcommand of those before it (subcommands, keyed by the path).
func checkHelpTopic(words []string) error {
	if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == words[0] }) {
		return fmt.Errorf("unknown topic %q (commands: %s)", words[0], commandNames())
	}
	for i := 1; i < len(words); i++ {
		parent := strings.Join(words[:i], " ")
		subs := subcommands[parent]
		switch {
		case len(subs) == 0:
			return fmt.Errorf("one topic at most after %q (it has no subcommands), got %q", parent, strings.Join(words, " "))
		case !slices.Contains(subs, words[i]):
			return fmt.Errorf("unknown topic %q (subcommands of %s: %s)", parent+" "+words[i], parent, strings.Join(subs, ", "))
		}
	}
	return nil
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

func commandNames() string { return strings.Join(commandNameList(), ", ") }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "tlsbench benchmarks devices that terminate TLS.")
	fmt.Fprintln(w, "\nUsage: tlsbench COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'tlsbench help COMMAND' (or 'tlsbench COMMAND --help') for a command's flags; "+
		"'tlsbench --version' for the version.")
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "Usage: tlsbench version (or tlsbench --version)\n\nPrints the version of tlsbench.")
		return nil
	}
	if len(args) > 0 {
		return usagef("takes no arguments")
	}
	fmt.Fprintf(stdout, "tlsbench %s\n", toolInfo().Version)
	return nil
}

// isHelpRequest reports whether args ask for the general help: -h, --help,
// help, or help followed by one of those.
func isHelpRequest(args []string) bool {
	switch {
	case args[0] == "-h" || args[0] == "--help":
		return true
	case args[0] != "help":
		return false
	}
	return len(args) == 1 || len(args) == 2 && slices.Contains([]string{"help", "-h", "--help"}, args[1])
}
