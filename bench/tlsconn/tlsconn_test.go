package tlsconn_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/internal/rawtls"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/tlsconn"
	"github.com/tlsbench/tlsbench/profiles"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

func TestRequestStatic(t *testing.T) {
	r := tlsconn.Request{Path: "/1k", UserAgent: "ua", Headers: [][2]string{{"X-A", "1"}}}
	c, err := r.Compile("HTTP/1.0", "10.0.0.5:443")
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.Append(nil, nil))
	want := "GET /1k HTTP/1.0\r\nHost: 10.0.0.5:443\r\nUser-Agent: ua\r\nAccept: */*\r\nX-A: 1\r\n\r\n"
	if got != want || !c.Static() {
		t.Errorf("request %q (static %v), want %q", got, c.Static(), want)
	}
}

func TestTemplates(t *testing.T) {
	r := tlsconn.Request{Paths: []string{"/a", "/b"}, Headers: [][2]string{
		{"User-Agent-X", "{{random.base64 500}}"}, {"X-Hex", "id-{{random.hex 4}}"}, {"X-Seq", "{{seq}}"}, {"X-Id", "{{uuid}}"},
	}}
	c, err := r.Compile("HTTP/1.1", "h:443")
	if err != nil {
		t.Fatal(err)
	}
	g := tlsconn.NewGen(1)
	seen := map[string]bool{}
	for i := 1; i <= 4; i++ {
		head := string(c.Append(nil, g))
		lines := strings.Split(head, "\r\n")
		if want := []string{"GET /a HTTP/1.1", "GET /b HTTP/1.1"}[(i-1)%2]; lines[0] != want {
			t.Errorf("request %d: %q, want %q (round robin)", i, lines[0], want)
		}
		hdr := map[string]string{}
		for _, l := range lines[1:] {
			if k, v, ok := strings.Cut(l, ": "); ok {
				hdr[k] = v
			}
		}
		if b, err := base64.StdEncoding.DecodeString(hdr["User-Agent-X"]); err != nil || len(b) != 500 {
			t.Errorf("random.base64 500: %d bytes, %v", len(b), err)
		}
		if v := hdr["X-Hex"]; len(v) != 3+8 || !strings.HasPrefix(v, "id-") {
			t.Errorf("random.hex 4: %q", v)
		}
		if got, want := hdr["X-Seq"], strconv.Itoa(i); got != want {
			t.Errorf("seq %q, want %q", got, want)
		}
		if v := hdr["X-Id"]; len(v) != 36 || v[14] != '4' {
			t.Errorf("uuid %q", v)
		}
		if seen[hdr["User-Agent-X"]] {
			t.Error("random value repeated")
		}
		seen[hdr["User-Agent-X"]] = true
	}
}

func TestBadTemplates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{{random.base64}}", "needs the number"},        // no N
		{"{{random.hex 0}}", "N must be 1 to"},           // N too small
		{"{{random.hex 99999999}}", "N must be 1"},       // N too large
		{"{{random.b64 5}}", "unknown {{random.b64 5}}"}, // unknown function
		{"abc {{seq", "not closed"},                      // unclosed
		{"abc }} x", "}} without {{"},                    // stray close
		{"{{}}", "empty"},                                // nothing inside
		{"{{seq 3}}", "takes no argument"},               // argument to seq
	} {
		if _, err := tlsconn.ParseTemplate(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTemplate(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

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
		cfg := tlsconn.Config{
			Profile: p, Address: addr, ConnectTimeout: 5 * time.Second, HandshakeTimeout: 5 * time.Second,
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
	c, err := tlsconn.NewClient(tlsconn.Config{Profile: p, Address: addr, ConnectTimeout: time.Second, HandshakeTimeout: time.Second,
		TLS: profiles.ClientOptions{ServerName: "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	conn, stage, err := c.NewDialer(0).Dial(context.Background(), &metrics.Sample{})
	if conn != nil || err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	if got, want := tlsconn.Class(stage, err), vocab.ClassRefused; got != want {
		t.Errorf("class %q, want %q", got, want)
	}
}
