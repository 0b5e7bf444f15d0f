package promexp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/promexp"
)

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		":9100": "127.0.0.1:9100", "9100": "127.0.0.1:9100", "0.0.0.0:9100": "0.0.0.0:9100",
		"[::1]:9100": "[::1]:9100", "localhost:0": "localhost:0", ":0": "127.0.0.1:0",
	} {
		if got, err := promexp.ListenAddr(in); err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "host", ":x", ":99999", "a:b:c", "1.2.3.4:", "-1"} {
		if got, err := promexp.ListenAddr(bad); err == nil {
			t.Errorf("ListenAddr(%q) = %q, want an error", bad, got)
		}
	}
}

func serve(t *testing.T) *promexp.Server {
	t.Helper()
	s, err := promexp.Serve(":0", promexp.New().Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf(":0 listens on %s, want loopback", s.Addr)
	}
	return s
}

func TestServeGetOnly(t *testing.T) {
	s := serve(t)
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + s.Addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "tlsbench_generator_cpu_seconds_total") {
		t.Errorf("GET /metrics: %d\n%.500s", resp.StatusCode, body)
	}
	resp, err = c.Post("http://"+s.Addr+"/metrics", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", resp.StatusCode)
	}
	resp, err = c.Get("http://" + s.Addr + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /other: %d, want 404", resp.StatusCode)
	}
}

// TestServeEndlessHeaders: a client that sends headers without end is
// answered 431 and cut off after about MaxHeaderBytes.
func TestServeEndlessHeaders(t *testing.T) {
	s := serve(t)
	conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_ = conn.SetDeadline(start.Add(10 * time.Second))
	sent := 0
	if _, err := io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	header := fmt.Sprintf("X-Endless: %s\r\n", strings.Repeat("a", 100))
	var werr error
	for i := 0; i < 100_000 && werr == nil; i++ { // at most ~10 MB
		var n int
		n, werr = io.WriteString(conn, header)
		sent += n
	}
	if werr == nil {
		t.Fatalf("sent %d bytes of headers and the server still reads", sent)
	}
	// The size limit cut it, not a timeout; what was sent beyond
	// MaxHeaderBytes sat in the sockets' buffers (loopback's autotune to
	// a few MB) when the server closed.
	if d := time.Since(start); d >= promexp.ReadHeaderTimeout {
		t.Errorf("cut off after %s: the timeout, not MaxHeaderBytes, stopped it", d)
	}
	t.Logf("cut off after %d bytes sent, in %s", sent, time.Since(start))
	status, _ := bufio.NewReader(conn).ReadString('\n')
	if status != "" && !strings.Contains(status, "431") {
		t.Errorf("answer %q, want 431", status)
	}
}

// TestServeSlowSender: a client that sends its request a byte at a time
// is cut off at ReadHeaderTimeout.
func TestServeSlowSender(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for ReadHeaderTimeout")
	}
	s := serve(t)
	conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	req := "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 1000)
	var werr error
	closed := make(chan time.Duration, 1)
	go func() {
		// The server's close shows as EOF (or reset) on the read side.
		_ = conn.SetReadDeadline(start.Add(promexp.ReadHeaderTimeout + 5*time.Second))
		_, _ = io.Copy(io.Discard, conn)
		closed <- time.Since(start)
	}()
	for i := 0; i < len(req) && werr == nil; i++ {
		select {
		case d := <-closed:
			if d < promexp.ReadHeaderTimeout-500*time.Millisecond || d > promexp.ReadHeaderTimeout+2*time.Second {
				t.Errorf("cut off after %s, want about ReadHeaderTimeout %s", d, promexp.ReadHeaderTimeout)
			}
			t.Logf("slow sender cut off after %s (%d bytes sent)", d, i)
			return
		case <-time.After(200 * time.Millisecond):
		}
		_, werr = conn.Write([]byte{req[i]})
	}
	d := <-closed
	if d > promexp.ReadHeaderTimeout+2*time.Second {
		t.Errorf("cut off after %s, want about ReadHeaderTimeout %s", d, promexp.ReadHeaderTimeout)
	}
	t.Logf("slow sender cut off after %s (write error %v)", d, werr)
}

// TestServeConnectionCap: past MaxConns connections at once, a scrape
// waits for one to go.
func TestServeConnectionCap(t *testing.T) {
	s := serve(t)
	var conns []net.Conn
	for range promexp.MaxConns {
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Every connection's first byte makes the server take it.
	for _, c := range conns {
		_, _ = c.Write([]byte("G"))
	}
	time.Sleep(200 * time.Millisecond)
	c := http.Client{Timeout: time.Second}
	if resp, err := c.Get("http://" + s.Addr + "/metrics"); err == nil {
		resp.Body.Close()
		t.Fatalf("a scrape beyond %d connections was served", promexp.MaxConns)
	}
	conns[0].Close()
	c.Timeout = 5 * time.Second
	resp, err := c.Get("http://" + s.Addr + "/metrics")
	if err != nil {
		t.Fatalf("once a connection closed: %v", err)
	}
	resp.Body.Close()
	for _, c := range conns[1:] {
		c.Close()
	}
}
