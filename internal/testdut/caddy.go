package testdut

// Caddy: a real Caddy (Debian's caddy 2.6, HTTP/3 with quic-go) serving
// HTTP/1.1, HTTP/2 and HTTP/3 on one port of 127.0.0.1 (TCP and UDP), a
// static file server with the objects /1k and /1m, its own JSON access log
// (a line per request, request.proto HTTP/1.1, HTTP/2.0 or HTTP/3.0) to
// count the requests per protocol. No automatic HTTPS, no ACME, no admin
// API unless asked (then on a loopback port of its own), nothing written
// outside Dir.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CaddyConfig is a Caddy serving Dir/www over TLS with one certificate.
type CaddyConfig struct {
	Dir  string // its configuration, storage, logs and www
	Cert string // PEM file: chain, then key (testdut.Leaf)
	// TLS is the versions served: "1.2", "1.3" or "1.2-1.3" ("": 1.3).
	TLS string
	// Curves are the groups offered, in Caddy's names (x25519, secp256r1,
	// secp384r1, secp521r1); nil: Go's defaults.
	Curves []string
	// Protocols are the HTTP versions served, in Caddy's names (h1, h2,
	// h3); nil: all three.
	Protocols []string
	// Admin serves Caddy's admin API on a free port of 127.0.0.1
	// (Caddy.AdminAddr); otherwise it is off.
	Admin bool
}

// Caddy is a running Caddy.
type Caddy struct {
	*Process
	Addr      string // 127.0.0.1:port, TCP and (with h3) UDP
	AdminAddr string // "" without CaddyConfig.Admin
	AccessLog string // its JSON access log
}

// RequireCaddy returns caddy's path, or skips the test when caddy is not
// installed (fails it in CI, where it must be).
func RequireCaddy(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("caddy")
	require(t, "caddy", err)
	return bin
}

// StartCaddyT starts Caddy for a test and stops it when the test ends.
func StartCaddyT(t testing.TB, cfg CaddyConfig) *Caddy {
	t.Helper()
	c, err := StartCaddy(context.Background(), RequireCaddy(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// StartCaddy writes the configuration (caddy.json) and the objects into
// cfg.Dir, runs caddy (bin) and waits until it accepts on TCP and, with
// h3, has its UDP socket.
func StartCaddy(ctx context.Context, bin string, cfg CaddyConfig) (*Caddy, error) {
	if err := writeObjects(filepath.Join(cfg.Dir, "www")); err != nil {
		return nil, err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	c := &Caddy{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		AccessLog: filepath.Join(cfg.Dir, "access.log")}
	if cfg.Admin {
		c.AdminAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	}
	conf, err := cfg.json(c)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(cfg.Dir, "caddy.json")
	if err := os.WriteFile(file, conf, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", file)
	// Caddy's own files (autosave, certificates' storage) stay in Dir.
	cmd.Env = append(os.Environ(), "HOME="+cfg.Dir, "XDG_CONFIG_HOME="+cfg.Dir, "XDG_DATA_HOME="+cfg.Dir)
	errLog := filepath.Join(cfg.Dir, "caddy.log")
	c.Process = &Process{Name: "caddy", Cmd: cmd, logf: errLog}
	if err := c.start(); err != nil {
		return nil, err
	}
	if err := c.waitListening(ctx, []string{c.Addr}); err != nil {
		c.Close()
		return nil, err
	}
	if cfg.protocols()["h3"] {
		if err := c.waitUDP(ctx, ports[0]); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (cfg CaddyConfig) protocols() map[string]bool {
	ps := cfg.Protocols
	if ps == nil {
		ps = []string{"h1", "h2", "h3"}
	}
	m := map[string]bool{}
	for _, p := range ps {
		m[p] = true
	}
	return m
}

// json is Caddy's configuration for c's addresses.
func (cfg CaddyConfig) json(c *Caddy) ([]byte, error) {
	lo, hi, _ := strings.Cut(cmp.Or(cfg.TLS, "1.3"), "-")
	policy := map[string]any{"protocol_min": "tls" + lo, "protocol_max": "tls" + cmp.Or(hi, lo),
		"certificate_selection": map[string]any{"any_tag": []string{"tlsbench"}}}
	if cfg.Curves != nil {
		policy["curves"] = cfg.Curves
	}
	admin := map[string]any{"disabled": true, "config": map[string]any{"persist": false}}
	if c.AdminAddr != "" {
		admin = map[string]any{"listen": c.AdminAddr, "config": map[string]any{"persist": false}}
	}
	var protocols []string
	for _, p := range []string{"h1", "h2", "h3"} {
		if cfg.protocols()[p] {
			protocols = append(protocols, p)
		}
	}
	file := func(name string) map[string]any { return map[string]any{"output": "file", "filename": name} }
	return json.MarshalIndent(map[string]any{
		"admin":   admin,
		"storage": map[string]any{"module": "file_system", "root": filepath.Join(cfg.Dir, "storage")},
		"logging": map[string]any{"logs": map[string]any{
			"default": map[string]any{"writer": file(filepath.Join(cfg.Dir, "caddy.log")),
				"exclude": []string{"http.log.access.tlsbench"}},
			"tlsbench": map[string]any{"writer": file(c.AccessLog), "encoder": map[string]any{"format": "json"},
				"include": []string{"http.log.access.tlsbench"}},
		}},
		"apps": map[string]any{
			"http": map[string]any{"grace_period": "1s", "servers": map[string]any{"tlsbench": map[string]any{
				"listen":                  []string{c.Addr},
				"protocols":               protocols,
				"automatic_https":         map[string]any{"disable": true},
				"tls_connection_policies": []any{policy},
				"logs":                    map[string]any{"default_logger_name": "tlsbench"},
				"routes": []any{map[string]any{"handle": []any{
					map[string]any{"handler": "file_server", "root": filepath.Join(cfg.Dir, "www")}}}},
			}}},
			"tls": map[string]any{"certificates": map[string]any{"load_files": []any{
				map[string]any{"certificate": cfg.Cert, "key": cfg.Cert, "tags": []string{"tlsbench"}}}}},
		},
	}, "", "  ")
}

// waitUDP waits until a UDP socket is bound to port (/proc/net/udp and
// udp6), the child exits, ctx ends or startTimeout passes: Caddy opens its
// HTTP/3 socket apart from its TCP listener.
func (p *Process) waitUDP(ctx context.Context, port int) error {
	want := fmt.Sprintf(":%04X", port)
	return p.waitUntil(ctx, time.Now().Add(startTimeout), "bind UDP port "+strconv.Itoa(port), func() bool {
		for _, f := range []string{"/proc/net/udp", "/proc/net/udp6"} {
			data, _ := os.ReadFile(f)
			for _, line := range strings.Split(string(data), "\n") {
				if fs := strings.Fields(line); len(fs) > 1 && strings.HasSuffix(fs[1], want) {
					return true
				}
			}
		}
		return false
	})
}

// Requests counts the requests of Caddy's access log by protocol
// (request.proto: "HTTP/1.1", "HTTP/2.0", "HTTP/3.0") and status, e.g.
// "HTTP/3.0 200". Caddy logs a request once its response is written,
// when the client may already have it: Requests polls until at least want
// requests are logged, or 3s have passed.
func (c *Caddy) Requests(t testing.TB, want int64) map[string]int64 {
	t.Helper()
	var got map[string]int64
	poll(func() bool {
		data, err := os.ReadFile(c.AccessLog)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		got = map[string]int64{}
		var total int64
		for _, line := range bytes.Split(data, []byte("\n")) {
			var e struct {
				Request struct {
					Proto string `json:"proto"`
				} `json:"request"`
				Status int `json:"status"`
			}
			if len(line) == 0 {
				continue
			}
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatalf("caddy's access log: %v: %s", err, line)
			}
			got[e.Request.Proto+" "+strconv.Itoa(e.Status)]++
			total++
		}
		return total >= want
	})
	return got
}
