package testdut

import (
	"bufio"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ServeChild serves a benchmark's server in a child process (StartChild's)
// so that the benchmark's CPU is the client's alone: it writes caPEM to a
// temporary file, prints lines, "ca FILE" and "ready", and waits for
// SIGTERM (at most ten minutes).
func ServeChild(caPEM []byte, lines ...string) {
	f, _ := os.CreateTemp("", "bench-ca*.pem")
	_, _ = f.Write(caPEM)
	f.Close()
	defer os.Remove(f.Name())
	fmt.Println(strings.Join(append(lines, "ca "+f.Name(), "ready"), "\n"))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case <-time.After(10 * time.Minute):
	}
}

// StartChild starts the test binary again with env=1 (its TestMain then
// calls ServeChild; stopped at tb's cleanup) and returns what it printed
// before "ready", each line split at its first space, and its CA's pool.
func StartChild(tb testing.TB, env string) (map[string]string, *x509.CertPool) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	stuck := time.AfterFunc(startTimeout, func() { _ = cmd.Process.Kill() })
	defer stuck.Stop()
	said := map[string]string{}
	for sc := bufio.NewScanner(out); sc.Scan() && sc.Text() != "ready"; {
		k, v, _ := strings.Cut(sc.Text(), " ")
		said[k] = v
	}
	return said, ReadPool(tb, said["ca"])
}

// ReadPool is the pool of the certificates of the PEM file.
func ReadPool(tb testing.TB, file string) *x509.CertPool {
	tb.Helper()
	pem, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("the CA: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}

// ProcessCPU is the process's CPU time so far, user and system.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
