package testdut

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// NginxConfig is an nginx serving TLS 1.2 (no session cache, no tickets) on
// 127.0.0.1, the objects /1k and /1m from Dir/www.
type NginxConfig struct {
	Dir      string // its prefix: configuration, logs, www
	Workers  int    // worker_processes; 0: 1
	Affinity string // worker_cpu_affinity, e.g. "01"; "": none
	// NoFile is worker_rlimit_nofile; a worker takes NoFile−64 connections
	// (0: 16384).
	NoFile      int
	MultiAccept bool
	// HTTP holds more directives of the http block, e.g. a log_format.
	HTTP    []string
	Servers []NginxServer
	// Wrap prefixes the command, e.g. {"taskset", "-c", "0"}.
	Wrap []string
	// StubStatus adds a plain-HTTP server on a free port of 127.0.0.1
	// whose /stub_status is nginx's stub_status (Nginx.StubStatusURL).
	StubStatus bool
	// ProtocolLog logs every request of every TLS server (not the
	// stub_status server's) to Dir/protocols.log with its port, protocol
	// and status, read by Protocols. A server's Extra access_log replaces it.
	ProtocolLog bool
}

// NginxServer is one TLS server block.
type NginxServer struct {
	Port    int    // on 127.0.0.1; 0: a free port
	Listen  string // more listen options, e.g. "reuseport backlog=65535"
	Cert    string // PEM file: chain, then key
	Ciphers string // ssl_ciphers
	Curve   string // ssl_ecdh_curve; "": nginx's default
	// KeepAlive keeps connections for 100,000 requests (75 s idle);
	// otherwise nginx closes each after its response.
	KeepAlive bool
	// Tickets turns session tickets on (resumption; the session cache
	// stays off); Protocols is ssl_protocols ("": TLSv1.2).
	Tickets   bool
	Protocols string
	// HTTP2 offers h2 beside http/1.1 (ALPN, nginx 1.22's `listen … ssl
	// http2`); nginx prefers h2. Otherwise the server speaks HTTP/1.x only
	// and selects no protocol.
	HTTP2 bool
	Extra []string // more directives, e.g. an access_log
}

// nginx is a running nginx: its process and each server's address.
type nginx struct {
	*Process
	Addrs []string // 127.0.0.1:port, in the order of the servers
	// StatusAddr is the stub_status server's 127.0.0.1:port (StubStatus).
	StatusAddr string
	protoLog   string // Dir/protocols.log (ProtocolLog)
}

// StubStatusURL is the URL of nginx's stub_status page (StubStatus).
func (n *nginx) StubStatusURL() string { return "http://" + n.StatusAddr + "/stub_status" }

// RequireNginx returns nginx's path, or skips the test when nginx is not
// installed (fails it in CI, where it must be).
func RequireNginx(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, e := os.Stat("/usr/sbin/nginx"); e == nil {
			bin, err = "/usr/sbin/nginx", nil
		}
	}
	require(t, "nginx", err)
	return bin
}

// StartNginxT starts nginx for a test and stops it when the test ends.
func StartNginxT(t testing.TB, cfg NginxConfig) *nginx {
	t.Helper()
	n, err := StartNginx(context.Background(), RequireNginx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// StartNginx writes the configuration and the objects into cfg.Dir, starts
// nginx (bin) in the foreground and waits until every server accepts.
func StartNginx(ctx context.Context, bin string, cfg NginxConfig) (*nginx, error) {
	if err := writeObjects(filepath.Join(cfg.Dir, "www")); err != nil {
		return nil, err
	}
	ports, err := FreePorts(len(cfg.Servers) + 1)
	if err != nil {
		return nil, err
	}
	n := &nginx{}
	if cfg.ProtocolLog {
		n.protoLog = cfg.protoLog()
	}
	var status []string
	if cfg.StubStatus {
		n.StatusAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[len(cfg.Servers)]))
		status = []string{n.StatusAddr}
	}
	for i := range cfg.Servers {
		if cfg.Servers[i].Port == 0 {
			cfg.Servers[i].Port = ports[i]
		}
		n.Addrs = append(n.Addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Servers[i].Port)))
	}
	conf := filepath.Join(cfg.Dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(cfg.text(n.StatusAddr)), 0o644); err != nil {
		return nil, err
	}
	errLog := filepath.Join(cfg.Dir, "error.log")
	args := append(append([]string{}, cfg.Wrap...), bin, "-p", cfg.Dir, "-c", conf, "-e", errLog)
	n.Process = &Process{Name: "nginx", Cmd: exec.Command(args[0], args[1:]...), logf: errLog}
	if err := n.start(); err != nil {
		return nil, err
	}
	if err := n.waitListening(ctx, append(slices.Clone(n.Addrs), status...)); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// writeObjects writes the objects 1k (1024 bytes) and 1m (1 MiB) into
// www: a..z over and over.
func writeObjects(www string) error {
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for name, size := range map[string]int{"1k": 1 << 10, "1m": 1 << 20} {
		if err := os.WriteFile(filepath.Join(www, name), body[:size], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Text is nginx.conf. The workers run as root when nginx is started by
// root: they read the objects wherever the test's directory is.
func (cfg NginxConfig) Text() string { return cfg.text("") }

// text is Text with the stub_status server on status, if not empty.
func (cfg NginxConfig) text(status string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if os.Geteuid() == 0 {
		w("user root;")
	}
	w("daemon off;")
	w("pid %s;", filepath.Join(cfg.Dir, "nginx.pid"))
	w("error_log %s;", filepath.Join(cfg.Dir, "error.log"))
	w("worker_processes %d;", max(cfg.Workers, 1))
	if cfg.Affinity != "" {
		w("worker_cpu_affinity %s;", cfg.Affinity)
	}
	nofile := cfg.NoFile
	if nofile <= 0 {
		nofile = 16384
	}
	w("worker_rlimit_nofile %d;", nofile)
	multi := ""
	if cfg.MultiAccept {
		multi = " multi_accept on;"
	}
	w("events { worker_connections %d;%s }", max(nofile-64, 64), multi)
	w("http {")
	w("  access_log off;")
	w("  default_type application/octet-stream;")
	w("  keepalive_timeout 0;")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("  %s_temp_path %s;", t, filepath.Join(cfg.Dir, t+"_temp"))
	}
	for _, d := range cfg.HTTP {
		w("  %s", d)
	}
	if cfg.ProtocolLog {
		w("  log_format tlsbench_protocol '$server_port $server_protocol $status';")
	}
	for _, s := range cfg.Servers {
		w("  server {")
		w("    listen 127.0.0.1:%d %s;", s.Port, strings.TrimSpace("ssl "+map[bool]string{true: "http2 "}[s.HTTP2]+s.Listen))
		if cfg.ProtocolLog {
			w("    access_log %s tlsbench_protocol;", cfg.protoLog())
		}
		w("    server_name localhost;")
		w("    root %s;", filepath.Join(cfg.Dir, "www"))
		w("    ssl_certificate %s;", s.Cert)
		w("    ssl_certificate_key %s;", s.Cert)
		w("    ssl_protocols %s;", cmp.Or(s.Protocols, "TLSv1.2"))
		w("    ssl_ciphers %s;", s.Ciphers)
		if s.Curve != "" {
			w("    ssl_ecdh_curve %s;", s.Curve)
		}
		w("    ssl_session_cache off;")
		w("    ssl_session_tickets %s;", map[bool]string{false: "off", true: "on"}[s.Tickets])
		if s.KeepAlive {
			w("    keepalive_timeout 75s;")
			w("    keepalive_requests 100000;")
		}
		for _, d := range s.Extra {
			w("    %s", d)
		}
		w("  }")
	}
	if status != "" {
		w("  server {")
		w("    listen %s;", status)
		w("    location = /stub_status { stub_status; }")
		w("  }")
	}
	w("}")
	return b.String()
}

func (cfg NginxConfig) protoLog() string { return filepath.Join(cfg.Dir, "protocols.log") }

// Protocols counts the requests that TLS server i logged (ProtocolLog) by
// protocol and status: "HTTP/2.0 200", "HTTP/1.1 200", "HTTP/1.0 404" … nginx
// logs a request once its response is sent, after the client may have it:
// Protocols polls until at least want requests are logged, or 3s have passed.
func (n *nginx) Protocols(t testing.TB, i int, want int64) map[string]int64 {
	t.Helper()
	if n.protoLog == "" {
		t.Fatal("nginx started without ProtocolLog")
	}
	_, port, _ := net.SplitHostPort(n.Addrs[i])
	var got map[string]int64
	poll(func() bool {
		data, err := os.ReadFile(n.protoLog)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		got = map[string]int64{}
		var total int64
		for _, line := range strings.Split(string(data), "\n") {
			if p, rest, ok := strings.Cut(line, " "); ok && p == port {
				got[rest]++
				total++
			}
		}
		return total >= want
	})
	return got
}
