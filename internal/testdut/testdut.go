// Package testdut starts devices under test on loopback for the tests and
// the development harnesses (cmd/peerbench, cmd/scale): HAProxy and nginx
// terminating TLS, and the reference target, in process (bench/target) or as
// a `tlsbench serve` child read through its ready line. Every start is
// bounded (StartTimeout) and every process is stopped by Close or, in tests,
// by t.Cleanup. It is imported by tests and cmd/ only.
package testdut

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

const (
	// startTimeout bounds a device's start: it must accept on every
	// address by then.
	startTimeout = 15 * time.Second
	// stopTimeout is how long Close waits after SIGTERM before SIGKILL.
	stopTimeout = 5 * time.Second
)

// FreePorts returns n distinct TCP ports free on 127.0.0.1 now. They are
// held until all are chosen so that none is returned twice; another process
// may still take one before the caller binds it.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// NewCA returns a new in-memory ECDSA P-256 CA.
func NewCA(t testing.TB) *cipher.CA {
	t.Helper()
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Leaf issues a leaf of key type kt for localhost and 127.0.0.1 and writes
// it as one PEM file (chain, then key), mode 0600, into dir.
func Leaf(t testing.TB, ca *cipher.CA, dir string, kt cipher.KeyType) string {
	t.Helper()
	file, err := WriteLeaf(ca, dir, kt)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// WriteLeaf is Leaf for programs: it returns the file or an error.
func WriteLeaf(ca *cipher.CA, dir string, kt cipher.KeyType) (string, error) {
	leaf, err := ca.Leaf(kt, []string{"localhost", "127.0.0.1"}, 24*time.Hour)
	if err != nil {
		return "", err
	}
	key, err := cipher.KeyPEM(leaf.PrivateKey)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, strings.ReplaceAll(kt.String(), " ", "-")+".pem")
	return file, os.WriteFile(file, append(cipher.ChainPEM(leaf), key...), 0o600)
}

// Process is a running child: a device under test in its own process group
// (a terminal's SIGINT reaches the parent only; Close stops the group).
type Process struct {
	Name string
	Cmd  *exec.Cmd
	out  *SyncBuffer // the child's stdout and stderr, when not redirected
	logf string      // a log file to quote on failure

	done    chan struct{} // closed when the child has exited
	waitErr error
	once    sync.Once
}

// start runs p.Cmd; stdout and stderr not set go to p's buffer.
func (p *Process) start() error {
	p.out = &SyncBuffer{}
	if p.Cmd.Stdout == nil {
		p.Cmd.Stdout = p.out
	}
	if p.Cmd.Stderr == nil {
		p.Cmd.Stderr = p.out
	}
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.Cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.Name, err)
	}
	p.done = make(chan struct{})
	go func() {
		p.waitErr = p.Cmd.Wait()
		close(p.done)
	}()
	return nil
}

// Pid is the child's process id (its process group's too).
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Alive returns an error, with the end of the child's output, if it has
// exited.
func (p *Process) Alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v): %s", p.Name, p.waitErr, p.Tail())
	default:
		return nil
	}
}

// Tail is the end of the child's output and log, for error messages.
func (p *Process) Tail() string {
	s := p.out.String()
	if p.logf != "" {
		if b, err := os.ReadFile(p.logf); err == nil {
			s += string(b)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}

// Close sends SIGTERM to the child's process group (nginx's master and
// workers), then SIGKILL after 5 s, and waits for the child.
func (p *Process) Close() error {
	p.once.Do(func() {
		pgid := p.Cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
		// Leftovers of the group (a worker whose master died first).
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
	return nil
}

// waitListening waits until every address accepts TCP connections, the
// child exits, ctx ends or StartTimeout passes. The probes close with a
// reset: they leave no TIME_WAIT socket.
func (p *Process) waitListening(ctx context.Context, addrs []string) error {
	deadline := time.Now().Add(startTimeout)
	for _, addr := range addrs {
		err := p.waitUntil(ctx, deadline, "listen on "+addr, func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// waitUntil polls ready every 50 ms until it holds, the child exits, ctx
// ends or deadline passes (an error naming what the child does not do).
func (p *Process) waitUntil(ctx context.Context, deadline time.Time, what string, ready func() bool) error {
	for !ready() {
		if err := p.Alive(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not %s after %s: %s", p.Name, what, startTimeout, p.Tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// SyncBuffer is a bytes.Buffer safe for a child's (or a command's) writes
// and our reads. It keeps the first MiB.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 { // a chatty child: keep the start, drop the rest
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// require skips the test when the program is missing, or fails it in CI,
// where it must be installed.
func require(t testing.TB, name string, err error) {
	t.Helper()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
}

var errNotReady = errors.New("ended before it was ready")

// RSS is the resident set of process pid (0: this process), in bytes; 0
// when it cannot be read.
func RSS(pid int) int64 {
	data, err := os.ReadFile(procFile(pid, "statm"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// FDs is the number of open descriptors of process pid (0: this process).
func FDs(pid int) int {
	ents, err := os.ReadDir(procFile(pid, "fd"))
	if err != nil {
		return 0
	}
	return len(ents)
}

func procFile(pid int, name string) string {
	if pid == 0 {
		return "/proc/self/" + name
	}
	return "/proc/" + strconv.Itoa(pid) + "/" + name
}
