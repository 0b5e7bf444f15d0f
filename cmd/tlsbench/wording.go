package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/reports"
)

// The library does not know the CLI: its errors are typed and name no flag.
// This file words them with the flags that remedy them.

// worded returns err's text with each typed library error it wraps worded
// for the command line, or err's own text when it wraps none.
func worded(err error) string {
	msg := err.Error()
	for _, w := range []func(error) (lib, cli string, ok bool){
		func(err error) (string, string, bool) {
			var e *tlsconn.DescriptorLimitError
			if !errors.As(err, &e) {
				return "", "", false
			}
			return e.Error(), fmt.Sprintf("%d connections need about %d file descriptors and RLIMIT_NOFILE is %d (hard limit "+
				"%d): connections beyond it fail; "+
				"raise the hard limit (as root with CAP_SYS_RESOURCE: prlimit --nofile) or split the load over agents "+
				"(--shard)", e.Conns, e.Need, e.Cur, e.Max), true
		},
		func(err error) (string, string, bool) {
			var e *metrics.UnshardedError
			if !errors.As(err, &e) {
				return "", "", false
			}
			return e.Error(), fmt.Sprintf("metrics: cannot merge: %s has a shard identity, %s none (it ran without "+
				"--shard)", e.With, e.Without), true
		},
		func(err error) (string, string, bool) {
			var e *method.DifferencesError
			if !errors.As(err, &e) {
				return "", "", false
			}
			return e.Error(), e.Error() + "; --allow-differences goes on", true
		},
		func(err error) (string, string, bool) {
			var e *reports.MixedDUTError
			if !errors.As(err, &e) {
				return "", "", false
			}
			return e.Error(), e.Error() + " (--allow-mixed-dut reports them as one)", true
		},
		func(err error) (string, string, bool) {
			var e *cipher.UnknownSuiteError
			if !errors.As(err, &e) {
				return "", "", false
			}
			return e.Error(), fmt.Sprintf("unknown cipher suite %q (IANA or OpenSSL name, e.g. ECDHE-ECDSA-AES128-SHA256; "+
				"`tlsbench profiles suites` lists them)", e.Name), true
		},
		func(err error) (string, string, bool) {
			if !errors.Is(err, method.ErrInterrupted) {
				return "", "", false
			}
			return method.ErrInterrupted.Error(), "campaign interrupted; resume it with --resume", true
		},
	} {
		if lib, cli, ok := w(err); ok {
			msg = strings.Replace(msg, lib, cli, 1)
		}
	}
	return msg
}

// deadlineWarning words cps.DeadlineAdvice's warning with cps's flags.
func deadlineWarning(w *cps.DeadlineWarning) string {
	return fmt.Sprintf("at -c %d each handshake queues behind thousands of others: at %d handshakes per second on each "+
		"of %d cores that is about %s, "+
		"against --handshake-timeout %s and --read-timeout %s; pass both of at least %s, or expect handshake_timeout and "+
		"read_timeout errors",
		w.Conc, w.PerCore, w.Cores, w.Queue, w.Handshake, w.Read, w.Suggest)
}

// timeoutNote words cps.TimeoutAdvice's note with cps's flags.
func timeoutNote(n *cps.TimeoutNote) string {
	return fmt.Sprintf("%d transactions timed out; at -c %d and %.0f CPS each transaction took about %s (concurrency ÷ "+
		"CPS), near the deadlines "+
		"(--handshake-timeout %s, --read-timeout %s): pass at least %s, or lower "+
		"-c", n.Timeouts, n.Conc, n.CPS, n.Each, n.Handshake, n.Read, n.Suggest)
}
