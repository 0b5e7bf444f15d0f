package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

const (
	startTimeout = 15 * time.Second // a DUT must listen on every port by then
	stopTimeout  = 5 * time.Second  // SIGTERM, then SIGKILL
)

// certFiles are the PEM files written into the temporary directory.
type certFiles struct {
	CA         string            // CA certificate, for --cacert
	Chain, Key map[string]string // by profileSpec.CertKey
}

// writeCerts generates a CA and the leaves the profiles need, in memory, and
// writes them as PEM: certificates 0644, private keys 0600.
func writeCerts(dir string, ps []profileSpec) (*certFiles, error) {
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "peerbench CA", 24*time.Hour)
	if err != nil {
		return nil, err
	}
	f := &certFiles{CA: filepath.Join(dir, "ca.pem"), Chain: map[string]string{}, Key: map[string]string{}}
	if err := os.WriteFile(f.CA, ca.CertPEM(), 0o644); err != nil {
		return nil, err
	}
	kinds := map[string]cipher.KeyType{
		"ecdsa": {Alg: "ECDSA", Curve: "P-256"},
		"rsa":   {Alg: "RSA", Bits: 2048},
	}
	for _, p := range ps {
		if _, done := f.Chain[p.CertKey]; done {
			continue
		}
		leaf, err := ca.Leaf(kinds[p.CertKey], []string{"localhost", "127.0.0.1"}, 24*time.Hour)
		if err != nil {
			return nil, err
		}
		if err := writeLeaf(f, dir, p.CertKey, leaf); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func writeLeaf(f *certFiles, dir, kind string, leaf tls.Certificate) error {
	keyPEM, err := cipher.KeyPEM(leaf.PrivateKey)
	if err != nil {
		return err
	}
	chain, key := filepath.Join(dir, kind+".crt"), filepath.Join(dir, kind+".key")
	if err := os.WriteFile(chain, cipher.ChainPEM(leaf), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		return err
	}
	f.Chain[kind], f.Key[kind] = chain, key
	return nil
}

// dut is a running device under test: a child process (in its own process
// group) and one 127.0.0.1 address per profile and engine.
type dut struct {
	name    string
	cmd     *exec.Cmd
	addrs   map[string]string // profile → host:port (cps: no keep-alive on nginx)
	tpAddrs map[string]string // profile → host:port for the throughput engine (keep-alive)
	ca      string            // CA certificate (PEM) for --cacert
	logf    string            // a log file to quote on failure
	out     *syncBuffer       // the child's stdout and stderr
	// negLog (nginx) logs what each keep-alive connection negotiated, one
	// line per connection (its first request): see nginxConf.
	negLog string
	// probes is what a default OpenSSL client (openssl s_client, the library
	// and defaults wrk uses) negotiated with each throughput address.
	probes map[string]string

	done    chan struct{} // closed when the child has exited
	waitErr error
	once    sync.Once
}

func (d *dut) pid() int { return d.cmd.Process.Pid }

func (d *dut) describe() string {
	var parts []string
	for _, p := range seedProfiles {
		if a, ok := d.addrs[p.Name]; ok {
			s := p.Name + " " + a
			if t, ok := d.tpAddrs[p.Name]; ok && t != a {
				s += " (keep-alive " + t + ")"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// start runs cmd in its own process group, so that a terminal's SIGINT
// reaches peerbench only and the cleanup below is the one that runs.
func (d *dut) start() error {
	d.out = &syncBuffer{}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", d.name, err)
	}
	d.done = make(chan struct{})
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.done)
	}()
	return nil
}

// alive returns an error if the DUT has exited.
func (d *dut) alive() error {
	select {
	case <-d.done:
		return fmt.Errorf("%s exited (%v): %s", d.name, d.waitErr, d.tail())
	default:
		return nil
	}
}

// tail is the end of the DUT's output and log, for error messages.
func (d *dut) tail() string {
	s := d.out.String()
	if d.logf != "" {
		if b, err := os.ReadFile(d.logf); err == nil {
			s += string(b)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}

// stop sends SIGTERM to the DUT's process group (nginx's master and worker),
// then SIGKILL after stopTimeout.
func (d *dut) stop() {
	d.once.Do(func() {
		pgid := d.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-d.done
		}
		// Leftovers of the group (a worker whose master died first).
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
}

// waitListening waits until every address accepts TCP connections.
func (d *dut) waitListening(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	var all []string
	for _, m := range []map[string]string{d.addrs, d.tpAddrs} {
		for _, a := range m {
			all = append(all, a)
		}
	}
	for _, addr := range all {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if err := d.alive(); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s does not listen on %s after %s: %s", d.name, addr, startTimeout, d.tail())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// freePorts returns a first port such that n consecutive ports are free on
// 127.0.0.1, below the ephemeral range the generators dial from.
func freePorts(n int) (int, error) {
	for range 200 {
		base := 20000 + rand.IntN(12000-n)
		var lns []net.Listener
		ok := true
		for i := range n {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
			if err != nil {
				ok = false
				break
			}
			lns = append(lns, ln)
		}
		for _, ln := range lns {
			ln.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no free range of ports on 127.0.0.1")
}

// nginxConf is the DUT of PERFORMANCE.md: one worker pinned to CPU 0, TLS 1.2
// only, no session cache, no tickets, one server per profile, /1k and /1m.
// With negLog set, a second server per profile (ports base+len(ps)…) serves
// the throughput engine: keep-alive on (100,000 requests per connection), and
// the first request of each connection logged to negLog with what it
// negotiated, so that what wrk negotiated is checked, not assumed. These
// servers refuse encrypt-then-mac (RFC 7366): OpenSSL clients such as wrk
// offer it and nginx accepts it by default, Go's client does not, and on the
// CBC-SHA256 suites it changes both sides' record protection (and costs this
// nginx 1.6× the CPU per GB: it cannot use OpenSSL's stitched
// AES-CBC-HMAC-SHA256 then). Without it both generators get the same records.
func nginxConf(dir, www string, base int, ps []profileSpec, certs *certFiles, negLog string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if os.Geteuid() == 0 {
		w("user nobody nogroup;")
	}
	w("worker_processes 1;")
	w("worker_cpu_affinity 01;")
	w("worker_rlimit_nofile 16384;")
	w("events { worker_connections 8192; }")
	w("http {")
	w("  access_log off;")
	w("  default_type application/octet-stream;")
	w("  keepalive_timeout 0;")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("  %s_temp_path %s;", t, filepath.Join(dir, t+"_temp"))
	}
	server := func(port int, p profileSpec, keepAlive bool) {
		w("  server {")
		w("    listen 127.0.0.1:%d ssl;", port)
		w("    server_name localhost;")
		w("    root %s;", www)
		w("    ssl_certificate %s;", certs.Chain[p.CertKey])
		w("    ssl_certificate_key %s;", certs.Key[p.CertKey])
		w("    ssl_protocols TLSv1.2;")
		w("    ssl_ciphers %s;", p.Ciphers)
		if p.Curve != "" {
			w("    ssl_ecdh_curve %s;", p.Curve)
		}
		w("    ssl_session_cache off;")
		w("    ssl_session_tickets off;")
		if keepAlive {
			w("    ssl_conf_command Options -EncryptThenMac;")
			w("    keepalive_timeout 75s;")
			w("    keepalive_requests 100000;")
			w("    access_log %s peerbench_tls if=$peerbench_first;", negLog)
		}
		w("  }")
	}
	for i, p := range ps {
		server(base+i, p, false)
	}
	if negLog != "" {
		w("  map $connection_requests $peerbench_first { 1 1; default 0; }")
		w("  log_format peerbench_tls '$server_port|$connection|$ssl_protocol|$ssl_cipher|$ssl_curve|$http_user_agent';")
		for i, p := range ps {
			server(base+len(ps)+i, p, true)
		}
	}
	w("}")
	return b.String()
}

func startNginx(ctx context.Context, o *options, tmp string, certs *certFiles) (*dut, error) {
	dir := filepath.Join(tmp, "nginx")
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	for name, size := range map[string]int{"1k": 1 << 10, "1m": 1 << 20} {
		body := bytes.Repeat([]byte("tlsbench peerbench body\n"), size/24+1)[:size]
		if err := os.WriteFile(filepath.Join(www, name), body, 0o644); err != nil {
			return nil, err
		}
	}
	n := len(o.profiles)
	var negLog string
	if o.wants("throughput") {
		n *= 2
		negLog = filepath.Join(dir, "negotiated.log")
	}
	base, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, www, base, o.profiles, certs, negLog)), 0o644); err != nil {
		return nil, err
	}
	errLog := filepath.Join(dir, "error.log")
	global := fmt.Sprintf("daemon off; pid %s; error_log %s;", filepath.Join(dir, "nginx.pid"), errLog)
	d := &dut{name: "nginx", ca: certs.CA, logf: errLog, negLog: negLog,
		addrs: map[string]string{}, tpAddrs: map[string]string{}, probes: map[string]string{}}
	d.cmd = exec.Command(o.taskset, "-c", "0", o.nginx, "-p", dir, "-c", conf, "-e", errLog, "-g", global)
	for i, p := range o.profiles {
		d.addrs[p.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i))
		if negLog != "" {
			d.tpAddrs[p.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(base+len(o.profiles)+i))
		}
	}
	if err := d.start(); err != nil {
		return nil, err
	}
	if err := d.waitListening(ctx); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// startTarget runs `tlsbench serve` on CPU 0 and reads the listeners'
// addresses from its table (falling back to consecutive ports). Its listeners
// keep connections alive (fasthttp, no request limit): the throughput engine
// uses the same addresses.
func startTarget(ctx context.Context, o *options, tmp string) (*dut, error) {
	base, err := freePorts(len(o.profiles))
	if err != nil {
		return nil, err
	}
	ca := filepath.Join(tmp, "target-ca.pem")
	args := []string{"-c", "0", o.tlsbench, "serve", "--listen", "127.0.0.1", "--port", strconv.Itoa(base),
		"--ca-out", ca}
	for _, p := range o.profiles {
		args = append(args, "--profile", p.Name)
	}
	d := &dut{name: "target", ca: ca, addrs: map[string]string{}, probes: map[string]string{},
		cmd: exec.Command(o.taskset, args...)}
	if err := d.start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startTimeout)
	for !strings.Contains(d.out.String(), "serving;") {
		if err := d.alive(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			d.stop()
			return nil, fmt.Errorf("target did not start within %s: %s", startTimeout, d.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	sc := bufio.NewScanner(strings.NewReader(d.out.String()))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 {
			if _, ok := lookupProfile(f[0]); ok {
				d.addrs[f[0]] = f[1]
			}
		}
	}
	for i, p := range o.profiles {
		if _, ok := d.addrs[p.Name]; !ok {
			d.addrs[p.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i))
		}
	}
	d.tpAddrs = d.addrs
	if err := d.waitListening(ctx); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// syncBuffer is a bytes.Buffer safe for a child's writes and our reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 { // a chatty child: keep the start, drop the rest
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// negLogSize is the current size of the negotiation log (0 without one).
func (d *dut) negLogSize() int64 {
	if d.negLog == "" {
		return 0
	}
	fi, err := os.Stat(d.negLog)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// negotiated is what the connections logged since offset negotiated, with
// their count: "TLSv1.2 ECDHE-ECDSA-AES128-SHA256 prime256v1" → 8. ok is false
// without a log.
func (d *dut) negotiated(offset int64) (counts map[string]int, ok bool) {
	if d.negLog == "" {
		return nil, false
	}
	f, err := os.Open(d.negLog)
	if err != nil {
		return map[string]int{}, true // no connection logged yet
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return map[string]int{}, true
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(f)
	return parseNegLog(b.String()), true
}

// parseNegLog counts the lines of nginx's peerbench_tls log by what they
// negotiated (protocol, cipher and, if any, curve).
func parseNegLog(s string) map[string]int {
	counts := map[string]int{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) < 5 {
			continue
		}
		key := f[2] + " " + f[3]
		if c := f[4]; c != "" && c != "-" {
			key += " " + c
		}
		counts[key]++
	}
	return counts
}

// probe records what a default OpenSSL client (`openssl s_client`, the
// library and defaults wrk uses) negotiates with addr, encrypt-then-mac
// included; "" if openssl is not installed or the probe failed.
func (d *dut) probe(ctx context.Context, o *options, p profileSpec, addr string) {
	if o.openssl == "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, o.openssl, "s_client", "-connect", addr, "-tlsextdebug")
	cmd.Stdin = strings.NewReader("") // close at once
	out, _ := cmd.CombinedOutput()
	d.probes[p.Name] = parseSClient(string(out))
}

// parseSClient reads `openssl s_client -tlsextdebug` (or -brief): "TLSv1.2
// ECDHE-ECDSA-AES128-SHA256 prime256v1", with " encrypt-then-mac" appended
// if the server accepted it ("" if no connection was made).
func parseSClient(out string) string {
	var proto, suite, curve, etm string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, `TLS server extension "encrypt-then-mac"`) {
			etm = " encrypt-then-mac"
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "Protocol version", "Protocol":
			proto = v
		case "Ciphersuite", "Cipher":
			suite = v
		case "Server Temp Key", "Peer Temp Key": // "ECDH, prime256v1, 256 bits"
			if f := strings.Split(v, ","); len(f) >= 2 {
				curve = strings.TrimSpace(f[1])
			}
		}
	}
	if proto == "" || suite == "" || suite == "0000" {
		return ""
	}
	return strings.TrimSpace(proto+" "+suite+" "+curve) + etm
}
