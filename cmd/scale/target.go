package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// targets is the running target: the address and CA file for each
// generator process, and how to wait for its processes once the context
// that started them is cancelled.
type targets struct {
	describe string
	addrs    []string
	cas      []string
	cmds     []*exec.Cmd
	cleanup  func()
}

func (t *targets) wait() {
	for _, c := range t.cmds {
		_ = c.Wait()
	}
	if t.cleanup != nil {
		t.cleanup()
	}
}

// child prepares a child process that SIGTERM stops when ctx is done.
func child(ctx context.Context, stderr io.Writer, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// startServe starts n reference targets (`tlsbench serve`'s code, in this
// program's target role), one per generator process: one process cannot
// hold more connections than it has descriptors.
func startServe(ctx context.Context, o *options, args []string, n int, stderr io.Writer) (*targets, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	t := &targets{describe: fmt.Sprintf("tlsbench serve ×%d", n)}
	for range n {
		cmd := child(ctx, stderr, self, args...)
		cmd.Env = append(os.Environ(), roleEnv+"=target")
		out, err := cmd.StdoutPipe()
		if err != nil {
			return t, err
		}
		if err := cmd.Start(); err != nil {
			return t, err
		}
		t.cmds = append(t.cmds, cmd)
		addr, ca, err := readTarget(out)
		if err != nil {
			return t, err
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		t.addrs, t.cas = append(t.addrs, addr), append(t.cas, ca)
	}
	return t, nil
}

// startNginx starts nginx with n workers on one port (reuseport: the
// kernel spreads the connections over the workers, each within its
// descriptor limit nofile), serving the profile with session resumption
// off.
func startNginx(ctx context.Context, o *options, n int, nofile uint64, stderr io.Writer) (*targets, error) {
	p, err := profiles.Builtin().Get(o.profile)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "scale-nginx")
	if err != nil {
		return nil, err
	}
	t := &targets{describe: fmt.Sprintf("nginx, %d workers", n), cleanup: func() { os.RemoveAll(dir) }}
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench scale CA", 24*time.Hour)
	if err != nil {
		return t, err
	}
	leaf, err := ca.Leaf(p.ServerCertKey(), []string{"localhost", "127.0.0.1"}, 24*time.Hour)
	if err != nil {
		return t, err
	}
	keyPEM, err := cipher.KeyPEM(leaf.PrivateKey)
	if err != nil {
		return t, err
	}
	www := filepath.Join(dir, "www")
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	files := map[string][]byte{
		"ca.pem": ca.CertPEM(), "leaf.crt": cipher.ChainPEM(leaf), "leaf.key": keyPEM,
		"www/1k": body[:1024], "www/1m": body,
	}
	if err := os.Mkdir(www, 0o755); err != nil {
		return t, err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return t, err
		}
	}
	// The workers run as nobody: they read the objects.
	if err := os.Chmod(dir, 0o755); err != nil {
		return t, err
	}
	port, err := freePort()
	if err != nil {
		return t, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, p, n, nofile, port)), 0o644); err != nil {
		return t, err
	}
	cmd := child(ctx, stderr, "nginx", "-p", dir, "-c", conf)
	if err := cmd.Start(); err != nil {
		return t, err
	}
	t.cmds = append(t.cmds, cmd)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			return t, fmt.Errorf("nginx did not listen on %s: %v\n%s", addr, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.addrs, t.cas = []string{addr}, []string{filepath.Join(dir, "ca.pem")}
	return t, nil
}

// nginxConf is the scale target's configuration: TLS 1.2 with the
// profile's suites and group, no session cache or tickets, keep-alive
// connections kept as long as the run lasts.
func nginxConf(dir string, p *profiles.Profile, workers int, nofile uint64, port int) string {
	var suites []string
	for _, s := range p.Suites() {
		suites = append(suites, s.OpenSSL)
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if os.Geteuid() == 0 {
		w("user nobody nogroup;")
	}
	w("daemon off;")
	w("pid %s;", filepath.Join(dir, "nginx.pid"))
	w("error_log %s warn;", filepath.Join(dir, "error.log"))
	w("worker_processes %d;", workers)
	w("worker_rlimit_nofile %d;", nofile)
	w("events { worker_connections %d; multi_accept on; }", nofile-fdOverhead)
	w("http {")
	w("  access_log off;")
	w("  default_type application/octet-stream;")
	w("  keepalive_timeout 600s;")
	w("  keepalive_requests 1000000;")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("  %s_temp_path %s;", t, filepath.Join(dir, t+"_temp"))
	}
	w("  server {")
	// A full accept queue drops SYNs (retried after 1 s, 3 s, …): the
	// kernel caps the backlog at net.core.somaxconn, per worker here.
	w("    listen 127.0.0.1:%d ssl reuseport backlog=65535;", port)
	w("    server_name localhost;")
	w("    root %s;", filepath.Join(dir, "www"))
	w("    ssl_certificate %s;", filepath.Join(dir, "leaf.crt"))
	w("    ssl_certificate_key %s;", filepath.Join(dir, "leaf.key"))
	w("    ssl_protocols TLSv1.2;")
	if len(suites) > 0 {
		w("    ssl_ciphers %s;", strings.Join(suites, ":"))
	}
	if g, ok := p.ExpectedGroup(); ok {
		w("    ssl_ecdh_curve %s;", g.OpenSSL)
	}
	w("    ssl_session_cache off;")
	w("    ssl_session_tickets off;")
	w("  }")
	w("}")
	return b.String()
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// readTarget reads the target child's "addr", "ca" and "ready" lines.
func readTarget(out io.Reader) (addr, ca string, err error) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "addr":
			addr = v
		case "ca":
			ca = v
		case "ready":
			return addr, ca, nil
		case "error":
			return "", "", errors.New("target: " + v)
		}
	}
	return "", "", errors.New("the target process ended before it was ready")
}

// serveTarget is the target child: it serves the profile on 127.0.0.1 until
// SIGTERM (or an hour).
func serveTarget(o *options, stdout, stderr io.Writer) int {
	p, err := profiles.Builtin().Get(o.profile)
	if err != nil {
		fmt.Fprintln(stdout, "error", err)
		return 1
	}
	// The engines' deadlines are long at this scale; the target's
	// handshake deadline must not be the shorter one.
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, HandshakeTimeout: 2 * o.deadline})
	if err != nil {
		fmt.Fprintln(stdout, "error", err)
		return 1
	}
	defer tg.Close()
	f, err := os.CreateTemp("", "scale-ca*.pem")
	if err != nil {
		fmt.Fprintln(stdout, "error", err)
		return 1
	}
	defer os.Remove(f.Name())
	_, _ = f.Write(tg.CA.CertPEM())
	f.Close()
	fmt.Fprintln(stdout, "addr", tg.Listener(p.Name).Addr)
	fmt.Fprintln(stdout, "ca", f.Name())
	fmt.Fprintln(stdout, "ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case <-time.After(time.Hour):
	}
	st := tg.Listener(p.Name).Stats()
	fmt.Fprintf(stderr, "scale: target: %d handshakes, %d requests, %d handshake errors\n", st.Handshakes, st.Requests, st.HandshakeErrors)
	return 0
}
