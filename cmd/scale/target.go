package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// targets is the running target: the address and CA file for each
// generator process, and how to stop it.
type targets struct {
	describe string
	addrs    []string
	cas      []string
	procs    []*testdut.Process
	dir      string // removed when stopped
}

func (t *targets) close() {
	for _, p := range t.procs {
		p.Close()
	}
	if t.dir != "" {
		os.RemoveAll(t.dir)
	}
}

// startServe starts n reference targets (`tlsbench serve`'s code, in this
// program's target role), one per generator process: one process cannot
// hold more connections than it has descriptors. quic: their HTTP/3
// (UDP) addresses are the generators'.
func startServe(ctx context.Context, args []string, n int, quic bool, stderr io.Writer) (*targets, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	t := &targets{describe: fmt.Sprintf("tlsbench serve ×%d", n)}
	for range n {
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), roleEnv+"=target")
		cmd.Stderr = stderr
		s, err := testdut.StartServed(ctx, "target", cmd)
		if err != nil {
			return t, err
		}
		t.procs = append(t.procs, s.Process)
		addr := s.Listeners[0].Addr
		if quic {
			addr = s.Listeners[0].QUIC
		}
		t.addrs, t.cas = append(t.addrs, addr), append(t.cas, s.CA)
	}
	return t, nil
}

// startNginx starts nginx with n workers on one port (reuseport: the
// kernel spreads the connections over the workers, each within its
// descriptor limit nofile), serving the profile with session resumption
// off and keep-alive connections kept as long as the run lasts.
func startNginx(ctx context.Context, o *options, n int, nofile uint64) (*targets, error) {
	p, err := profiles.Builtin().Get(o.profile)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "scale-nginx")
	if err != nil {
		return nil, err
	}
	t := &targets{describe: fmt.Sprintf("nginx, %d workers", n), dir: dir}
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench scale CA", 24*time.Hour)
	if err != nil {
		return t, err
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		return t, err
	}
	cert, err := testdut.WriteLeaf(ca, dir, p.ServerCertKey())
	if err != nil {
		return t, err
	}
	var suites []string
	for _, s := range p.Suites() {
		suites = append(suites, s.OpenSSL)
	}
	srv := testdut.NginxServer{Cert: cert, Ciphers: strings.Join(suites, ":"),
		// A full accept queue drops SYNs (retried after 1 s, 3 s, …): the
		// kernel caps the backlog at net.core.somaxconn, per worker here.
		Listen: "reuseport backlog=65535",
		Extra:  []string{"keepalive_timeout 600s;", "keepalive_requests 1000000;"}}
	if g, ok := p.ExpectedGroup(); ok {
		srv.Curve = g.OpenSSL
	}
	nx, err := testdut.StartNginx(ctx, "nginx", testdut.NginxConfig{
		Dir:         dir,
		Workers:     n,
		NoFile:      int(nofile),
		MultiAccept: true,
		Servers:     []testdut.NginxServer{srv},
	})
	if err != nil {
		return t, err
	}
	t.procs = append(t.procs, nx.Process)
	t.addrs, t.cas = nx.Addrs, []string{caFile}
	return t, nil
}

// serveTarget is the target child: it serves the profile on 127.0.0.1 until
// SIGTERM (or an hour), ready once it prints its ready line.
func serveTarget(o *options, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "scale: target:", err)
		return 1
	}
	p, err := profiles.Builtin().Get(o.profile)
	if err != nil {
		return fail(err)
	}
	// The engines' deadlines are long at this scale; the target's
	// handshake deadline must not be the shorter one.
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, HandshakeTimeout: 2 * o.deadline})
	if err != nil {
		return fail(err)
	}
	defer tg.Close()
	f, err := os.CreateTemp("", "scale-ca*.pem")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(f.Name())
	_, _ = f.Write(tg.CA.CertPEM())
	f.Close()
	if err := target.WriteReady(stdout, tg, f.Name()); err != nil {
		return fail(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case <-time.After(time.Hour):
	}
	st := tg.Listener(p.Name).Stats()
	fmt.Fprintf(stderr, "scale: target: %d handshakes, %d requests, %d handshake errors\n",
		st.Handshakes, st.Requests, st.HandshakeErrors)
	return 0
}
