package target_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// statusOf sends raw on a new connection to addr and returns the answer's
// status code ("" if the connection closed without one).
func statusOf(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	line, _ := bufio.NewReader(c).ReadString('\n')
	if f := strings.Fields(line); len(f) > 1 {
		return f[1]
	}
	return ""
}

// TestAdminBounds: the admin listener answers GET /stats and refuses
// another method (405), a body over its bound (413, announced), headers
// over theirs (431); beyond AdminMaxConns connections at once, more are
// answered 503.
func TestAdminBounds(t *testing.T) {
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Admin: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	a := tg.AdminAddr
	for _, tc := range []struct{ name, raw, want string }{
		{"GET /stats", "GET /stats HTTP/1.1\r\nHost: a\r\n\r\n", "200"},
		{"POST", "POST /stats HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}", "405"},
		{"a body over the bound", "GET /stats HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n", "413"},
		{"headers over the bound", "GET /stats HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", target.AdminMaxHeaderBytes) + "\r\n\r\n", "431"},
	} {
		if got := statusOf(t, a, tc.raw); got != tc.want {
			t.Errorf("%s: %q, want %s", tc.name, got, tc.want)
		}
	}
	// AdminMaxConns silent connections take every slot.
	var held []net.Conn
	for range target.AdminMaxConns {
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	if got := statusSoon(t, a, "503"); got != "503" {
		t.Errorf("connection %d: %q, want 503", target.AdminMaxConns+1, got)
	}
	for _, c := range held {
		c.Close()
	}
	if got := statusSoon(t, a, "200"); got != "200" {
		t.Errorf("once they closed: %q, want 200", got)
	}
}

// statusSoon asks a for /stats until the answer is want, for at most 5 s,
// and returns the last answer: the server takes the held connections (or
// sees them closed) in its own time, which a busy machine stretches.
func statusSoon(t *testing.T, a, want string) string {
	t.Helper()
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = statusOf(t, a, "GET /stats HTTP/1.1\r\nHost: a\r\n\r\n"); got == want {
			break
		}
	}
	return got
}
