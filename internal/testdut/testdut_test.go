package testdut

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestMain lets the test binary be a served target (TESTDUT_CHILD=serve):
// the reference target in a child that prints its ready line, as `tlsbench
// serve` does; TESTDUT_CHILD=exit exits before it is ready.
func TestMain(m *testing.M) {
	switch os.Getenv("TESTDUT_CHILD") {
	case "serve":
		p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
		tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("a human table first")
		_ = target.WriteReady(os.Stdout, tg, "ca.pem")
		time.Sleep(time.Minute) // until Close
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "cannot serve")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func child(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "TESTDUT_CHILD="+role)
	return cmd
}

// TestStartServed reads the child's ready line; a child that exits first
// is an error that quotes its output.
func TestStartServed(t *testing.T) {
	s, err := StartServed(context.Background(), "target", child("serve"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := s.Addr("ecdhe-ecdsa-aes128-sha256-p256")
	if s.CA != "ca.pem" || addr == "" || len(s.Listeners) != 1 {
		t.Fatalf("ready line %+v", s.Ready)
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.Close()
	if s.Alive() == nil {
		t.Error("alive after Close")
	}
	_, err = StartServed(context.Background(), "target", child("exit"))
	if err == nil || !strings.Contains(err.Error(), "cannot serve") {
		t.Errorf("a child that exits: %v", err)
	}
}

// TestNginx serves /1k over TLS 1.2 with the configured suite and curve.
func TestNginx(t *testing.T) {
	dir := t.TempDir()
	ca := NewCA(t)
	cert := Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	n := StartNginxT(t, NginxConfig{Dir: dir, Servers: []NginxServer{
		{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "secp384r1"},
	}})
	c, err := tls.Dial("tcp", n.Addrs[0], &tls.Config{ServerName: "localhost", RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if cs := c.ConnectionState(); cs.CurveID != tls.CurveP384 {
		t.Errorf("curve %v, want P-384", cs.CurveID)
	}
	fmt.Fprint(c, "GET /1k HTTP/1.0\r\nHost: localhost\r\n\r\n")
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 200") || !strings.HasSuffix(string(b), strings.Repeat("abcdefghijklmnopqrstuvwxyz", 40)[:1024]) {
		t.Errorf("response %.200q…", b)
	}
}

// TestFreePorts returns distinct ports.
func TestFreePorts(t *testing.T) {
	ports, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p == 0 {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
}

// TestHTTP2Devices: nginx with http2 on its TLS listeners and HAProxy with
// alpn h2,http/1.1, each serving the three seed profiles, serve h2load
// (nghttp2's client; 200 requests one at a time on 4 connections): nginx
// logs exactly h2load's requests as HTTP/2.0, HAProxy's frontend counts them
// in req_tot and h2_headers_rcvd (none in h1_total_streams). The
// HTTP/1.1-only nginx answers http/1.1 or refuses h2 alone, and logs nothing.
func TestHTTP2Devices(t *testing.T) {
	RequireHAProxy(t)
	h2load, err := exec.LookPath("h2load")
	require(t, "h2load", err)
	dir := t.TempDir()
	ca := NewCA(t)
	seeds := Seeds(t, ca, dir)
	cfg := NginxConfig{Dir: dir, ProtocolLog: true}
	var fes []Frontend
	for _, s := range seeds {
		cfg.Servers = append(cfg.Servers, NginxServer{Cert: s.Frontend.Cert, Ciphers: s.Frontend.Ciphers,
			Curve: s.Frontend.Curves, KeepAlive: true, HTTP2: true})
		s.Frontend.ALPN = "h2,http/1.1"
		fes = append(fes, s.Frontend)
	}
	h1 := cfg.Servers[1]
	h1.HTTP2 = false
	cfg.Servers = append(cfg.Servers, h1)
	n := StartNginxT(t, cfg)
	h := StartHAProxy(t, dir, fes)
	const requests = 200
	for i, s := range seeds {
		fe := s.Frontend.Name
		for _, addr := range []string{n.Addrs[i], h.Addr(fe)} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			out, err := exec.CommandContext(ctx, h2load, "-n", fmt.Sprint(requests), "-c", "4", "-m", "1", "--ciphers",
				s.Frontend.Ciphers, "https://"+addr+"/1k").CombinedOutput()
			cancel()
			if err != nil || !strings.Contains(string(out), fmt.Sprintf("requests: %d total, %[1]d started, %[1]d done, "+
				"%[1]d succeeded", requests)) || !strings.Contains(string(out), "Application protocol: h2") {
				t.Fatalf("%s: h2load: %v\n%s", addr, err, out)
			}
		}
		if got := n.Protocols(t, i, requests); len(got) != 1 || got["HTTP/2.0 200"] != requests {
			t.Errorf("%s: nginx logged %v, h2load made %d HTTP/2 requests", s.Profile, got, requests)
		}
		// HAProxy's mux counters tell the protocols apart: h2_headers_rcvd
		// (a HEADERS frame a request here) and h1_total_streams.
		reqs := h.CounterDelta(t, fe, "req_tot", 0, requests)
		if h2, h1 := h.Counter(t, fe, "h2_headers_rcvd"), h.Counter(t, fe, "h1_total_streams"); reqs != requests ||
			h2 != requests || h1 != 0 {
			t.Errorf("%s: HAProxy req_tot %d, h2_headers_rcvd %d, h1_total_streams %d; h2load made %d", s.Profile,
				reqs, h2, h1, requests)
		}
	}
	// nginx without http2 selects http/1.1 when it is offered, and refuses
	// a client offering h2 alone (alert no_application_protocol).
	for _, tc := range []struct{ offer, want string }{{"h2 http/1.1", "http/1.1"}, {"h2", "no application protocol"}} {
		c, err := tls.Dial("tcp", n.Addrs[3], &tls.Config{ServerName: "localhost", RootCAs: ca.Pool(),
			NextProtos: strings.Fields(tc.offer), CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}})
		got := fmt.Sprint(err)
		if err == nil {
			got = c.ConnectionState().NegotiatedProtocol
			c.Close()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("the HTTP/1.1-only nginx, offered %s: %q, want %q", tc.offer, got, tc.want)
		}
	}
	if got := n.Protocols(t, 3, 0); len(got) != 0 {
		t.Errorf("the HTTP/1.1-only nginx logged %v", got)
	}
}
