package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// startChild starts this binary as tlsbench with args, and stops it at the
// test's end.
func startChild(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// flood sends head, then body bytes (64 KiB at a time) up to limit, until
// the server answers or closes; it returns what was sent and the status
// code ("" for a connection closed without one: a server's close can reset
// it before the answer is read).
func flood(t *testing.T, addr, head string, body []byte, limit int64) (int64, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(conn).ReadString('\n')
		if f := strings.Fields(line); len(f) > 1 {
			answer <- f[1]
			return
		}
		answer <- ""
	}()
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, <-answer
	}
	var sent int64
	for sent < limit {
		select {
		case code := <-answer:
			return sent, code
		default:
		}
		conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
		n, err := conn.Write(body)
		sent += int64(n)
		if err != nil {
			break
		}
	}
	return sent, <-answer
}

// slowSend sends msg a byte every pace; it returns how long until the
// server cut the connection off (or the whole message went).
func slowSend(t *testing.T, addr, msg string, pace time.Duration) time.Duration {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn)
		close(closed)
	}()
	for i := range len(msg) {
		select {
		case <-closed:
			return time.Since(start)
		case <-time.After(pace):
		}
		if _, err := conn.Write([]byte{msg[i]}); err != nil {
			return time.Since(start)
		}
	}
	t.Errorf("%s: a sender of a byte every %s was never cut off (%s)", addr, pace, time.Since(start))
	return time.Since(start)
}

// TestListenerBounds: against a tlsbench collect and a tlsbench serve
// --admin (child processes), a 300 MB request, endless headers and slow
// senders are refused or cut off within the stated bounds, and each
// process's resident memory grows by a bounded amount.
func TestListenerBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow senders take the listeners' timeouts")
	}
	ports, err := testdut.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	collAddr, adminAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	dir := t.TempDir()
	coll := startChild(t, "collect", "--listen", collAddr, "--expect", "1", "-o", filepath.Join(dir, "m.json"), "--deadline", "5m", "--token-file", tokenFile(t))
	srv := startChild(t, "serve", "--port", "0", "--admin", adminAddr)
	waitListening(t, collAddr)
	waitListening(t, adminAddr)
	time.Sleep(200 * time.Millisecond)

	const huge = 300 << 20
	zeros := make([]byte, 64<<10)
	filler := []byte("X-Filler: " + strings.Repeat("a", 1000) + "\r\n")
	type server struct {
		name, addr string
		pid        int
		oversized  string // the request line and headers of a 300 MB body
		refusals   []string
		slow       time.Duration // the stated cut-off of a slow sender
	}
	// A signed push announcing 300 MB: its signature is checked, then its
	// length, and nothing of it is read.
	sum := sha256.New()
	for n := int64(0); n < huge; n += int64(len(zeros)) {
		sum.Write(zeros)
	}
	d := sum.Sum(nil)
	// Signed for this collection's session, as a real agent's push is.
	hctx, hcancel := context.WithTimeout(context.Background(), 10*time.Second)
	cred, err := agent.Hello(hctx, "http://"+collAddr+"/", agent.Credentials{Token: testRunToken})
	hcancel()
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte(testRunToken))
	fmt.Fprintf(m, "POST\n/\n%d\n%x\n%s", huge, d, cred.Session)
	signed := fmt.Sprintf("POST / HTTP/1.1\r\nHost: c\r\nContent-Length: %d\r\nAuthorization: %s %x\r\n%s: %x\r\n%s: %s\r\n\r\n",
		huge, agent.AuthScheme, m.Sum(nil), agent.HeaderContentSHA256, d, agent.HeaderSession, cred.Session)
	lim := agent.DefaultLimits()
	for _, s := range []server{
		{"collect", collAddr, coll.Process.Pid, signed, []string{"413", ""}, lim.ReadHeaderTimeout},
		{"serve --admin", adminAddr, srv.Process.Pid, fmt.Sprintf("GET /stats HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", huge), []string{"413", ""}, target.AdminReadTimeout},
	} {
		before := testdut.RSS(s.pid)
		sent, code := flood(t, s.addr, s.oversized, zeros, huge)
		if !strings.Contains(strings.Join(s.refusals, ","), code) || sent > 32<<20 {
			t.Errorf("%s: a 300 MB body: status %q after %d MiB sent", s.name, code, sent>>20)
		}
		hsent, hcode := flood(t, s.addr, "POST / HTTP/1.1\r\nHost: x\r\n", filler, 256<<20)
		if (hcode != "431" && hcode != "") || hsent > 4<<20 {
			t.Errorf("%s: endless headers: status %q after %d KiB sent", s.name, hcode, hsent>>10)
		}
		// 32 slow senders at once, a byte every 200 ms each: all cut off
		// (at the timeout, or at once beyond the connection cap).
		const slowN = 32
		els := make(chan time.Duration, slowN)
		for range slowN {
			go func() {
				els <- slowSend(t, s.addr, "GET /stats HTTP/1.1\r\nHost: x\r\nX-Slow: "+strings.Repeat("s", 200), 200*time.Millisecond)
			}()
		}
		var el time.Duration
		for range slowN {
			el = max(el, <-els)
		}
		if el > s.slow+2*time.Second {
			t.Errorf("%s: the last of %d slow senders cut off after %s, want at %s", s.name, slowN, el, s.slow)
		}
		after := testdut.RSS(s.pid)
		growth := after - before
		t.Logf("%s: 300 MB body refused (%q) after %d KiB sent; endless headers refused (%q) after %d KiB; 32 slow senders cut off within %s (bound %s); RSS %d → %d KiB (%+d KiB)",
			s.name, code, sent>>10, hcode, hsent>>10, el.Round(10*time.Millisecond), s.slow, before>>10, after>>10, growth>>10)
		if before == 0 || growth > 16<<20 {
			t.Errorf("%s: RSS grew by %d KiB (from %d KiB)", s.name, growth>>10, before>>10)
		}
	}
}
