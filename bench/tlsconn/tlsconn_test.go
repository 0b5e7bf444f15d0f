package tlsconn_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/textproto"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/internal/rawtls"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/profiles"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestProbeResumption: a server with tickets resumes, the reference
// target's configuration (tickets off, no cache) does not — in TLS 1.2 and 1.3.
func TestProbeResumption(t *testing.T) {
	set := profiles.Builtin()
	for _, tc := range []struct {
		profile string
		tickets bool
	}{
		{"ecdhe-ecdsa-aes128-sha256-p256", true},
		{"ecdhe-ecdsa-aes128-sha256-p256", false},
		{"tls13-aes128-gcm-x25519", true},
		{"tls13-aes128-gcm-x25519", false},
	} {
		p, _ := set.Get(tc.profile)
		addr, ca := rawtls.ServeWith(t, p, func(c *tls.Config) { c.SessionTicketsDisabled = !tc.tickets },
			func(c net.Conn, r *textproto.Reader) {
				if rawtls.ReadRequest(r) {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				}
			})
		cfg := tlsconn.Config{Settings: tlsconn.Settings{ConnectTimeout: 5 * time.Second, HandshakeTimeout: 5 * time.Second},
			Profile: p, Address: addr,
			TLS: profiles.ClientOptions{ServerName: "localhost", RootCAs: ca.Pool()},
		}
		got, err := tlsconn.ProbeResumption(context.Background(), cfg, "localhost", "/")
		if err != nil {
			t.Fatalf("%s tickets=%v: %v", tc.profile, tc.tickets, err)
		}
		if got != tc.tickets {
			t.Errorf("%s tickets=%v: resumption %v", tc.profile, tc.tickets, got)
		}
	}
}

// TestDialRefused: a refused connection is reported at the connect stage.
func TestDialRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	c, err := tlsconn.NewEndpoint(tlsconn.Config{Settings: tlsconn.Settings{ConnectTimeout: time.Second, HandshakeTimeout: time.Second}, Profile: p, Address: addr,
		TLS: profiles.ClientOptions{ServerName: "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	conn, _, stage, err := c.NewDialer(0).Dial(context.Background())
	if conn != nil || err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	if got, want := tlsconn.Class(stage, err), vocab.ClassRefused; got != want {
		t.Errorf("class %q, want %q", got, want)
	}
}
