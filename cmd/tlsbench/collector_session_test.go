package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// recorder is a TCP relay in front of a collector that keeps every byte
// each client connection sent: an agent's real HTTP requests, as a
// captor on the path would see them.
type recorder struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []*bytes.Buffer
}

func startRecorder(t *testing.T, upstream string) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := &bytes.Buffer{}
			r.mu.Lock()
			r.conns = append(r.conns, buf)
			r.mu.Unlock()
			go r.relay(c, upstream, buf)
		}
	}()
	return r
}

func (r *recorder) relay(c net.Conn, upstream string, buf *bytes.Buffer) {
	defer c.Close()
	u, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		return
	}
	defer u.Close()
	deadline := time.Now().Add(time.Minute)
	c.SetDeadline(deadline)
	u.SetDeadline(deadline)
	go func() { io.Copy(c, u); c.Close() }()
	var w lockedWriter
	w.mu, w.w = &r.mu, buf
	io.Copy(io.MultiWriter(u, &w), c)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// push returns the bytes of the one connection that carried a POST.
func (r *recorder) push(t *testing.T) []byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var found [][]byte
	for _, b := range r.conns {
		if bytes.HasPrefix(b.Bytes(), []byte("POST ")) {
			found = append(found, bytes.Clone(b.Bytes()))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d connections carried a POST, want the agent's one push", len(found))
	}
	return found[0]
}

// collectCmd runs `collect --expect 1` on a free loopback port in the
// background; it returns the address, once listening, and its result.
func collectCmd(t *testing.T, tok, out string) (string, <-chan [3]string) {
	t.Helper()
	ports, err := testdut.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	done := make(chan [3]string, 1)
	go func() {
		code, so, se := invoke(t, context.Background(), "collect", "--listen", addr, "--expect", "1", "-o", out,
			"--deadline", "40s", "--token-file", tok)
		done <- [3]string{fmt.Sprint(code), so, se}
	}()
	waitListening(t, addr)
	return addr, done
}

// TestCollectRefusesReplayedPush: a real agent's push, captured on the
// wire and replayed byte for byte to a later collect with the same token
// file, is refused (401 or 409) and takes no shard: the real agent of the
// later run pushes afterwards and its record, not the replayed one, is
// merged.
func TestCollectRefusesReplayedPush(t *testing.T) {
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	url := "https://localhost:" + portOf(l.Addr) + "/1k"
	dir := t.TempDir()
	tok := tokenFile(t)
	agentArgs := func(name, collector string) []string {
		return []string{"cps", url, "--cacert", ca, "--profile", p.Name, "-c", "2", "-d", "1s", "--warmup", "0",
			"--shard", "0/1", "--agent", name, "--report-to", "http://" + collector + "/", "--token-file", tok, "-q"}
	}

	// The first run, its push recorded on the way to the collector.
	addr1, done1 := collectCmd(t, tok, filepath.Join(dir, "run1.json"))
	rec := startRecorder(t, addr1)
	if code, _, se := invoke(t, context.Background(), agentArgs("first", rec.ln.Addr().String())...); code != exitOK {
		t.Fatalf("the first run's agent: exit %d: %s", code, se)
	}
	if res := <-done1; res[0] != "0" {
		t.Fatalf("the first collect: exit %s: %s", res[0], res[2])
	}
	captured := rec.push(t)

	// A later collection with the same token file: the replay is refused.
	out2 := filepath.Join(dir, "run2.json")
	addr2, done2 := collectCmd(t, tok, out2)
	status, answer := replay(t, addr2, captured)
	t.Logf("replayed %d bytes: %s %s", len(captured), status, answer)
	if status != "401" && status != "409" {
		t.Fatalf("the replayed push: status %s (%s), want refused (401 or 409)", status, answer)
	}
	// The shard is still free for the real agent of this run.
	if code, _, se := invoke(t, context.Background(), agentArgs("second", addr2)...); code != exitOK {
		t.Fatalf("the second run's agent: exit %d: %s", code, se)
	}
	if res := <-done2; res[0] != "0" {
		t.Fatalf("the second collect: exit %s: %s", res[0], res[2])
	}
	m, err := metrics.ReadRun(out2)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Agents) != 1 || m.Agents[0].Name != "second" {
		t.Errorf("the second run's merged record is of agents %+v, want the agent \"second\" only", m.Agents)
	}
}

// replay sends raw to addr as it was captured and returns the status code
// and body of the answer.
func replay(t *testing.T, addr string, raw []byte) (string, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to the replay: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Sprint(resp.StatusCode), strings.TrimSpace(string(body))
}

// TestReportToCollectorDown: with no collector at --report-to, cps exits
// 1 at once with one line naming the collector, and no connection reaches
// the target; no --json record is written (no run was made).
func TestReportToCollectorDown(t *testing.T) {
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	url := "https://localhost:" + portOf(l.Addr) + "/1k"
	ports, err := testdut.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	down := fmt.Sprintf("http://127.0.0.1:%d/", ports[0]) // nothing listens
	out := filepath.Join(t.TempDir(), "out.json")
	before := l.Stats()
	start := time.Now()
	code, _, se := invoke(t, context.Background(), "cps", url, "--cacert", ca, "--profile", p.Name, "-c", "2", "-d", "2s",
		"--warmup", "0", "--report-to", down, "--token-file", tokenFile(t), "--json", out, "-q")
	after := l.Stats()
	el := time.Since(start)
	t.Logf("collector down: exit %d after %s, %d connections at the target: %s", code, el.Round(time.Millisecond),
		after.Connections-before.Connections, strings.TrimSpace(se))
	if code != exitFailed || strings.Count(se, "\n") != 1 || !strings.Contains(se, down) ||
		!strings.Contains(se, "no load sent") {
		t.Errorf("collector down: exit %d, stderr %q; want exit 1, one line naming %s", code, se, down)
	}
	if n := after.Connections - before.Connections; n != 0 {
		t.Errorf("collector down: %d connections reached the target, want none", n)
	}
	if el > 5*time.Second {
		t.Errorf("collector down: exit after %s, want at once", el)
	}
}

// TestReportToCollectorDiesMidRun: the collector dies once the load reached
// the target: cps still writes its --json record and prints its
// summary, then exits 1 naming the failed push.
func TestReportToCollectorDiesMidRun(t *testing.T) {
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	url := "https://localhost:" + portOf(l.Addr) + "/1k"
	c := agent.NewCollector(testRunToken)
	c.Expect("", 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: c}
	go srv.Serve(ln)
	defer srv.Close()
	before := l.Stats().Connections
	go func() { // killed once the load reached the target, during its 3 s
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if l.Stats().Connections > before {
				break
			}
		}
		srv.Close()
	}()
	out := filepath.Join(t.TempDir(), "out.json")
	code, so, se := invoke(t, context.Background(), "cps", url, "--cacert", ca, "--profile", p.Name, "-c", "2", "-d", "3s",
		"--warmup", "0", "--report-to", "http://"+ln.Addr().String()+"/", "--token-file", tokenFile(t), "--json", out, "-q")
	if code != exitFailed || !strings.Contains(se, "pushing the record") ||
		!strings.Contains(se, "the record is in "+out) {
		t.Errorf("collector killed mid-run: exit %d, stderr %q; want exit 1 naming the push", code, se)
	}
	t.Logf("collector killed mid-run: exit %d: %s", code, strings.TrimSpace(se))
	r, err := metrics.ReadRun(out)
	if err != nil {
		t.Fatalf("collector killed mid-run: the --json record: %v", err)
	}
	if r.Transactions == 0 || !strings.Contains(so, p.Name) {
		t.Errorf("collector killed mid-run: record of %d transactions, summary %q; want both", r.Transactions, so)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}
