package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// certFiles are the PEM files written into the temporary directory.
type certFiles struct {
	CA   string            // CA certificate, for --cacert
	Cert map[string]string // chain and key, by profileSpec.CertKey
}

// writeCerts generates a CA and the leaves the profiles need, in memory, and
// writes them as PEM (each leaf's chain and key in one file, 0600).
func writeCerts(dir string, ps []profileSpec) (*certFiles, error) {
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "peerbench CA", 24*time.Hour)
	if err != nil {
		return nil, err
	}
	f := &certFiles{CA: filepath.Join(dir, "ca.pem"), Cert: map[string]string{}}
	if err := os.WriteFile(f.CA, ca.CertPEM(), 0o644); err != nil {
		return nil, err
	}
	kinds := map[string]cipher.KeyType{
		"ecdsa": {Alg: "ECDSA", Curve: "P-256"},
		"rsa":   {Alg: "RSA", Bits: 2048},
	}
	for _, p := range ps {
		if _, done := f.Cert[p.CertKey]; !done {
			if f.Cert[p.CertKey], err = testdut.WriteLeaf(ca, dir, kinds[p.CertKey]); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// dut is a running device under test (testdut starts it, in its own process
// group) and one 127.0.0.1 address per profile and engine.
type dut struct {
	*testdut.Process
	name    string
	addrs   map[string]string // profile → host:port (cps: no keep-alive on nginx)
	tpAddrs map[string]string // profile → host:port for the throughput engine (keep-alive)
	h2Addrs map[string]string // profile → host:port of nginx's http2 server (both engines); nil: no HTTP/2
	ca      string            // CA certificate (PEM) for --cacert
	// negLog (nginx) logs what each keep-alive connection negotiated, one
	// line per connection (its first request): see nginxConfig.
	negLog string
	// probes is what a default OpenSSL client (openssl s_client, the library
	// and defaults wrk uses) negotiated with each throughput address.
	probes map[string]string
}

func (d *dut) describe() string {
	var parts []string
	for _, p := range knownProfiles() {
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

// nginxConfig is the DUT of PERFORMANCE.md: one worker pinned to CPU 0, TLS
// 1.2 only, no session cache, no tickets, one server per profile (ports from
// base, or free ports for base 0), /1k and /1m. With negLog set, a second
// server per profile serves the throughput engine: keep-alive on (100,000
// requests per connection), and the first request of each connection logged
// to negLog with what it negotiated, so that what wrk negotiated is checked,
// not assumed. These servers refuse encrypt-then-mac (RFC 7366): OpenSSL
// clients such as wrk offer it and nginx accepts it by default, Go's client
// does not, and on the CBC-SHA256 suites it changes both sides' record
// protection (and costs this nginx 1.6× the CPU per GB: it cannot use
// OpenSSL's stitched AES-CBC-HMAC-SHA256 then). Without it both generators
// get the same records. With h2, a third server per profile offers h2 (ALPN;
// keep-alive, encrypt-then-mac refused, first requests logged the same way,
// with their protocol) for both engines over HTTP/2, its accept queue long
// enough for h2load's N connections made at once.
func nginxConfig(dir string, base int, ps []profileSpec, certs *certFiles, negLog string, h2 bool) testdut.NginxConfig {
	cfg := testdut.NginxConfig{Dir: dir, Affinity: "01", Wrap: []string{"taskset", "-c", "0"}}
	server := func(p profileSpec) testdut.NginxServer {
		s := testdut.NginxServer{Cert: certs.Cert[p.CertKey], Ciphers: p.Ciphers, Curve: p.Curve}
		if base > 0 {
			s.Port = base + len(cfg.Servers)
		}
		return s
	}
	for _, p := range ps {
		cfg.Servers = append(cfg.Servers, server(p))
	}
	keepAlive := func(p profileSpec) testdut.NginxServer {
		s := server(p)
		s.KeepAlive = true
		s.Extra = []string{"ssl_conf_command Options -EncryptThenMac;"}
		if negLog != "" {
			s.Extra = append(s.Extra, "access_log "+negLog+" peerbench_tls if=$peerbench_first;")
		}
		return s
	}
	if negLog != "" {
		cfg.HTTP = []string{"map $connection_requests $peerbench_first { 1 1; default 0; }",
			"log_format peerbench_tls " +
				"'$server_port|$connection|$ssl_protocol|$ssl_cipher|$ssl_curve|$http_user_agent|$server_protocol';"}
		for _, p := range ps {
			cfg.Servers = append(cfg.Servers, keepAlive(p))
		}
	}
	for _, p := range ps {
		if s := keepAlive(p); h2 {
			s.HTTP2, s.Listen = true, "backlog=4096"
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	return cfg
}

func startNginx(ctx context.Context, o *options, tmp string, certs *certFiles) (*dut, error) {
	dir := filepath.Join(tmp, "nginx") // StartNginx makes it
	var negLog string
	if o.wants("throughput") {
		negLog = filepath.Join(dir, "negotiated.log")
	}
	h2 := slices.Contains(o.protos, "2")
	cfg := nginxConfig(dir, 0, o.profiles, certs, negLog, h2)
	cfg.Wrap[0] = o.taskset
	n, err := testdut.StartNginx(ctx, o.nginx, cfg)
	if err != nil {
		return nil, err
	}
	d := &dut{Process: n.Process, name: "nginx", ca: certs.CA, negLog: negLog,
		addrs: map[string]string{}, tpAddrs: map[string]string{}, probes: map[string]string{}}
	k := len(o.profiles)
	if h2 {
		d.h2Addrs = map[string]string{}
	}
	for i, p := range o.profiles {
		d.addrs[p.Name] = n.Addrs[i]
		if negLog != "" {
			d.tpAddrs[p.Name] = n.Addrs[k+i]
		}
		if h2 {
			d.h2Addrs[p.Name] = n.Addrs[len(n.Addrs)-k+i]
		}
	}
	return d, nil
}

// startTarget runs `tlsbench serve` on CPU 0 and reads the listeners'
// addresses from its ready line. Its listeners keep connections alive
// (fasthttp, no request limit): the throughput engine uses the same
// addresses.
func startTarget(ctx context.Context, o *options, tmp string) (*dut, error) {
	ca := filepath.Join(tmp, "target-ca.pem")
	args := []string{"-c", "0", o.tlsbench, "serve", "--listen", "127.0.0.1", "--port", "0", "--ca-out", ca}
	for _, p := range o.profiles {
		args = append(args, "--profile", p.Name)
	}
	s, err := testdut.StartServed(ctx, "target", exec.Command(o.taskset, args...))
	if err != nil {
		return nil, err
	}
	d := &dut{Process: s.Process, name: "target", ca: ca, addrs: map[string]string{}, probes: map[string]string{}}
	for _, p := range o.profiles {
		if d.addrs[p.Name] = s.Addr(p.Name); d.addrs[p.Name] == "" {
			s.Close()
			return nil, fmt.Errorf("target: no listener for %s", p.Name)
		}
	}
	d.tpAddrs = d.addrs
	return d, nil
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
	b, err := os.ReadFile(d.negLog)
	if err != nil || offset > int64(len(b)) {
		return map[string]int{}, true // no connection logged yet
	}
	return parseNegLog(string(b[offset:])), true
}

// parseNegLog counts the lines of nginx's peerbench_tls log by what they
// negotiated (protocol, cipher, if any curve, and h2 for HTTP/2).
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
		if len(f) > 6 && f[6] == "HTTP/2.0" {
			key += " h2"
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
