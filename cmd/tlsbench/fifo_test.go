package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile/outfiletest"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// realBinary builds tlsbench (main's signal handling included) into dir.
func realBinary(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(dir, "tlsbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// realProc is the real binary running in its own process group.
type realProc struct {
	cmd            *exec.Cmd
	stdout, stderr testdut.SyncBuffer
	done           chan struct{}
}

func startReal(t *testing.T, bin, dir string, args ...string) *realProc {
	t.Helper()
	p := &realProc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = dir, &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// waitFor waits (30 s at most) until ok says yes, failing if the process
// ends first.
func (p *realProc) waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("ended before %s: stdout %q, stderr %q", what, p.stdout.String(), p.stderr.String())
		default:
		}
	}
	t.Fatalf("no %s within 30 s: stderr %q", what, p.stderr.String())
}

// interruptOnce sends one SIGINT and asserts that the process and its
// group are gone within a second; it returns the exit code and the last
// line on stderr.
func (p *realProc) interruptOnce(t *testing.T) (int, string) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Second):
		t.Fatalf("still running a second after one SIGINT: stderr %q", p.stderr.String())
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("processes of its group are left after it ended (kill -0: %v)", err)
	}
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	return p.cmd.ProcessState.ExitCode(), lines[len(lines)-1]
}

func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := syscall.Mkfifo(f, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return f
}

// TestFIFONoReaderFirstSignal: an output flag naming a FIFO that nobody
// reads neither blocks the run nor outlives the first signal: the wait is
// said, one SIGINT ends it on one line, nothing is left running. With a
// reader, the data arrives whole.
func TestFIFONoReaderFirstSignal(t *testing.T) {
	dir := t.TempDir()
	bin := realBinary(t, dir)
	const waiting = "waiting up to 1m0s for a reader of the FIFO"
	run := []string{"cps", "-d", "1s", "--warmup", "0s", "-c", "2", "-q"}

	t.Run("stream", func(t *testing.T) {
		fifo := mkfifo(t, t.TempDir(), "s.fifo")
		p := startReal(t, bin, dir, append(run, "--stream", fifo)...)
		// The run is made while the FIFO waits for its reader.
		p.waitFor(t, "the run's summary", func() bool { return strings.Contains(p.stdout.String(), "transactions in") })
		p.waitFor(t, "the wait's note", func() bool { return strings.Contains(p.stderr.String(), waiting) })
		code, last := p.interruptOnce(t)
		if code != exitFailed || !strings.Contains(last, "--stream: "+fifo+": interrupted while waiting for a reader") {
			t.Errorf("exit %d, last line %q", code, last)
		}
	})
	t.Run("json", func(t *testing.T) {
		fifo := mkfifo(t, t.TempDir(), "j.fifo")
		p := startReal(t, bin, dir, append(run, "--json", fifo)...)
		p.waitFor(t, "the wait's note", func() bool { return strings.Contains(p.stderr.String(), waiting) })
		if !strings.Contains(p.stdout.String(), "transactions in") {
			t.Errorf("waiting for the reader before the summary: %q", p.stdout.String())
		}
		code, last := p.interruptOnce(t)
		if code != exitFailed || last != "tlsbench cps: writing the run record: "+fifo+
			": interrupted while waiting for a reader of the FIFO: nothing written" {
			t.Errorf("exit %d, last line %q", code, last)
		}
	})
	t.Run("keylog", func(t *testing.T) {
		fifo := mkfifo(t, t.TempDir(), "k.fifo")
		p := startReal(t, bin, dir, append(run, "--keylog", fifo)...)
		p.waitFor(t, "the wait's note", func() bool { return strings.Contains(p.stderr.String(), waiting) })
		code, last := p.interruptOnce(t)
		if code != exitFailed || !strings.Contains(last, "--keylog: "+fifo+": interrupted while waiting") {
			t.Errorf("exit %d, last line %q", code, last)
		}
	})
	rec := filepath.Join(dir, "rec.json")
	if out, err := exec.Command(bin, append(run, "--json", rec)...).CombinedOutput(); err != nil {
		t.Fatalf("cps --json: %v: %s", err, out)
	}
	t.Run("report", func(t *testing.T) {
		fifo := mkfifo(t, t.TempDir(), "r.fifo")
		p := startReal(t, bin, dir, "report", rec, "--format", "hlog", "-o", fifo)
		p.waitFor(t, "the wait's note", func() bool { return strings.Contains(p.stderr.String(), waiting) })
		code, last := p.interruptOnce(t)
		if code != exitFailed || !strings.Contains(last, "-o: "+fifo+": interrupted while waiting") {
			t.Errorf("exit %d, last line %q", code, last)
		}
	})
	t.Run("readers", func(t *testing.T) { fifoReaders(t, bin, dir, rec, run) })
}

// fifoReaders: with a reader, --json, --stream and report -o write their
// data through the FIFO, whole.
func fifoReaders(t *testing.T, bin, dir, rec string, run []string) {
	fdir := t.TempDir()
	endsWithRecord := func(b []byte) bool {
		return bytes.Contains(b, []byte(`"type":"record"`)) && bytes.HasSuffix(b, []byte("}\n"))
	}
	sfifo, sgot := outfiletest.FIFO(t, fdir, "s.fifo", endsWithRecord, 60*time.Second)
	jfifo, jgot := outfiletest.FIFO(t, fdir, "j.fifo", func(b []byte) bool { return json.Valid(b) }, 60*time.Second)
	cmd := exec.Command(bin, append(run, "--stream", sfifo, "--json", jfifo)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cps --stream --json through FIFOs: %v: %s", err, out)
	}
	var r metrics.Run
	if err := json.Unmarshal(<-jgot, &r); err != nil || r.Whole.Transactions == 0 {
		t.Errorf("--json FIFO: %v, %d transactions", err, r.Whole.Transactions)
	}
	sc := bufio.NewScanner(bytes.NewReader(<-sgot))
	sc.Buffer(nil, 16<<20)
	var types []string
	for sc.Scan() {
		var line struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("--stream FIFO: a line is not JSON: %v", err)
		}
		types = append(types, line.Type)
	}
	if len(types) < 2 || types[0] != "second" || types[len(types)-1] != "record" {
		t.Errorf("--stream FIFO: lines %v, want seconds then the record", types)
	}
	want, err := exec.Command(bin, "report", rec, "--format", "hlog").Output()
	if err != nil {
		t.Fatal(err)
	}
	rfifo, rgot := outfiletest.FIFO(t, fdir, "r.fifo", func(b []byte) bool { return len(b) >= len(want) }, 60*time.Second)
	if out, err := exec.Command(bin, "report", rec, "--format", "hlog", "-o", rfifo).CombinedOutput(); err != nil {
		t.Fatalf("report -o FIFO: %v: %s", err, out)
	}
	if got := <-rgot; !bytes.Equal(got, want) {
		t.Errorf("report -o FIFO: %d bytes, want the %d of stdout", len(got), len(want))
	}
}
