package main

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// interruptArgs is a small campaign against the reference target.
var interruptArgs = []string{"qualify", "--quick", "-q", "--profile", "rsa2048-aes128-gcm-sha256", "--test", "cps"}

// startInterruptible starts the campaign in out as a terminal would (its own
// process group) and returns it once its first exploratory run is in the
// ledger and kids processes run under it (the reference target, agents),
// with their PIDs.
func startInterruptible(t *testing.T, bin, dir, out string, kids int, args ...string) (*realProc, []int) {
	t.Helper()
	p := startReal(t, bin, dir, append(append(interruptArgs, "--out", out), args...)...)
	explored := regexp.MustCompile(`(?m)^exploratory `)
	var pids []int
	p.waitFor(t, "an exploratory run", func() bool {
		if pids = slices.Collect(maps.Keys(testdut.Descendants(p.cmd.Process.Pid))); len(pids) < kids {
			return false
		}
		return explored.MatchString(p.stderr.String())
	})
	// Each in a process group of its own: the terminal's Ctrl-C does not
	// reach them.
	for _, pid := range pids {
		if _, f, ok := testdut.ProcStat(strconv.Itoa(pid)); ok && len(f) > 2 && f[2] == strconv.Itoa(p.cmd.Process.Pid) {
			t.Errorf("process %d under qualify is in its process group (stat %v)", pid, f)
		}
	}
	return p, pids
}

// checkKept checks the interrupted campaign's ledger: whole lines only,
// none of a run the interruption cut short (refused or reset connections
// of a dying target), as many as the runs printed and as the last line
// says were kept. It returns the ledger.
func checkKept(t *testing.T, p *realProc, out string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil || len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("ledger: %v, ends %q", err, data[max(0, len(data)-20):])
	}
	for _, e := range entries {
		for class, n := range e.Run.Errors.ByClass {
			if c := class.String(); n > 0 && (c == "refused" || c == "reset") {
				t.Errorf("the ledger holds %s, %s ×%d: a run cut short by the interruption", e.Key, c, n)
			}
		}
	}
	stderr := p.stderr.String()
	printed := len(regexp.MustCompile(`(?m)^(preliminary|exploratory|final) `).FindAllString(stderr, -1))
	kept := "the ledger keeps the " + strconv.Itoa(len(entries)) + " runs finished"
	if len(entries) == 0 || len(entries) != printed || !strings.Contains(stderr, kept) {
		t.Errorf("%d entries in the ledger, %d runs printed; stderr %q, want it to say %q", len(entries), printed,
			stderr, kept)
	}
	return data
}

// TestQualifyInterrupt: Ctrl-C in a terminal (SIGINT to the process group)
// while a campaign's run is under way: qualify ends at once with exit 1,
// the run cut short is not in the ledger and the message says so and what
// was kept; the reference target is stopped with it; --resume makes the
// rest and every cell publishes. A second signal during the shutdown ends
// the process within a second with the ledger whole, saying what it kept.
func TestQualifyInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := realBinary(t, dir)
	t.Run("once", func(t *testing.T) {
		out := filepath.Join(dir, "once")
		p, kids := startInterruptible(t, bin, dir, out, 1)
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("still running 10 s after the SIGINT: stderr %q", p.stderr.String())
		}
		t.Logf("qualify exited %s after the SIGINT", time.Since(sent).Round(time.Millisecond))
		lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
		if code, last := p.cmd.ProcessState.ExitCode(), lines[len(lines)-1]; code != exitFailed ||
			!strings.Contains(last, "was cut short and is not recorded") || !strings.Contains(last, "--resume "+out) {
			t.Errorf("exit %d, last line %q", code, last)
		}
		if live := testdut.Running(kids, time.Second); len(live) > 0 {
			t.Errorf("the reference target %v still runs after qualify ended", live)
		}
		kept := checkKept(t, p, out)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		res, err := exec.CommandContext(ctx, bin, "qualify", "-q", "--resume", out).CombinedOutput()
		if err != nil {
			t.Fatalf("--resume: %v: %s", err, res)
		}
		if all, _ := os.ReadFile(filepath.Join(out, method.LedgerFile)); !strings.HasPrefix(string(all), string(kept)) {
			t.Error("--resume changed the runs kept")
		}
		data, _ := os.ReadFile(filepath.Join(out, method.SummaryFile))
		s, err := method.DecodeSummary(data)
		if err != nil || len(s.Cells) == 0 {
			t.Fatalf("summary: %v", err)
		}
		for _, c := range s.Cells {
			if c.Failed != "" || c.Value <= 0 {
				t.Errorf("cell %s %s %s: value %v, failed %q", c.DUT, c.Engine, c.Profile, c.Value, c.Failed)
			}
		}
	})
	t.Run("twice", func(t *testing.T) {
		out := filepath.Join(dir, "twice")
		p, kids := startInterruptible(t, bin, dir, out, 1)
		// Ctrl-C, then a SIGTERM while qualify stops.
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		select {
		case <-p.done:
		case <-time.After(time.Second):
			t.Fatalf("still running a second after the second signal: stderr %q", p.stderr.String())
		}
		t.Logf("qualify exited %s after the second signal", time.Since(sent).Round(time.Millisecond))
		if code := p.cmd.ProcessState.ExitCode(); code != exitFailed ||
			!strings.Contains(p.stderr.String(), "tlsbench: interrupted twice, exiting; the ledger keeps the ") {
			t.Errorf("exit %d, stderr %q", code, p.stderr.String())
		}
		if live := testdut.Running(kids, time.Second-time.Since(sent)); len(live) > 0 {
			t.Errorf("the reference target %v still runs a second after the second signal", live)
		}
		checkKept(t, p, out)
	})
	t.Run("agents", func(t *testing.T) {
		out := filepath.Join(dir, "agents")
		p, kids := startInterruptible(t, bin, dir, out, 3, "--executor", "processes", "--agents", "2")
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("still running 10 s after the SIGINT: stderr %q", p.stderr.String())
		}
		if code := p.cmd.ProcessState.ExitCode(); code != exitFailed ||
			!strings.Contains(p.stderr.String(), "was cut short and is not recorded") {
			t.Errorf("exit %d, stderr %q", code, p.stderr.String())
		}
		if live := testdut.Running(kids, time.Second); len(live) > 0 {
			t.Errorf("the reference target or agents %v (of %v) still run after qualify ended", live, kids)
		}
		checkKept(t, p, out)
	})
}
