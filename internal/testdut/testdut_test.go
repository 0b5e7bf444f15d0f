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
