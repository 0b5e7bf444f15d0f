package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/cipher"
)

// The library does not know the CLI: its errors are typed and name no flag.
// Where the CLI calls the library it words them with the flags that remedy
// them; these are the words.

// descriptorText words tlsconn.CheckDescriptors' error.
func descriptorText(e *tlsconn.DescriptorLimitError) string {
	return fmt.Sprintf("%d connections need about %d file descriptors and RLIMIT_NOFILE is %d (hard limit %d): "+
		"connections beyond it fail; raise the hard limit (as root with CAP_SYS_RESOURCE: prlimit --nofile) or split "+
		"the load over agents (--shard)", e.Conns, e.Need, e.Cur, e.Max)
}

// mergeText words metrics.Merge's error (its "metrics: " prefix kept).
func mergeText(err error) string {
	var e *metrics.UnshardedError
	if errors.As(err, &e) {
		return fmt.Sprintf("metrics: cannot merge: %s has a shard identity, %s none (it ran without --shard)",
			e.With, e.Without)
	}
	return err.Error()
}

// differencesText words the preliminary phase's *method.DifferencesError.
func differencesText(err error) string { return err.Error() + "; --allow-differences goes on" }

// mixedDUTText words reports.CheckDUTs' *reports.MixedDUTError.
func mixedDUTText(err error) string {
	return err.Error() + " (--allow-mixed-dut reports them as one)"
}

// profileText words a profile file's error: an unknown suite (the last
// words of its message) names the command that lists them.
func profileText(err error) string {
	var e *cipher.UnknownSuiteError
	if msg := err.Error(); errors.As(err, &e) && strings.HasSuffix(msg, e.Error()) {
		return strings.TrimSuffix(msg, e.Error()) + suiteText(e)
	}
	return err.Error()
}

// suiteText words cipher.SuiteByName's *cipher.UnknownSuiteError.
func suiteText(e *cipher.UnknownSuiteError) string {
	return fmt.Sprintf("unknown cipher suite %q (IANA or OpenSSL name, e.g. ECDHE-ECDSA-AES128-SHA256; "+
		"`tlsbench profiles suites` lists them)", e.Name)
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
