package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// testToken is a run's token in these tests.
const testToken = "k3Jq0w8bXcV1nYt7Rr2uZs5PpLm9AaQeHhGgFfDdSsE"

// signedRequest is a push of body to url as an agent of token signs it for
// the collector's session, made here independently of the package:
// HMAC-SHA256 of method, path, length, the body's SHA-256 and the session.
func signedRequest(t *testing.T, url, token, session string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "POST\n%s\n%d\n%x\n%s", req.URL.EscapedPath(), len(body), sum, session)
	req.Header.Set("Authorization", agent.AuthScheme+" "+hex.EncodeToString(m.Sum(nil)))
	req.Header.Set(agent.HeaderContentSHA256, hex.EncodeToString(sum[:]))
	req.Header.Set(agent.HeaderSession, session)
	return req
}

func status(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestCollectorRefusalMatrix: a forged record for shard 0 without the
// token, with a wrong one, altered in transit, and a second record for a
// shard already reported are refused (401, 401, 401, 409); the refused
// pushes take no shard, and the merged record holds only the real agents'
// figures.
func TestCollectorRefusalMatrix(t *testing.T) {
	c := agent.NewCollector("")
	b := c.ExpectToken("r1", 2, testToken)
	srv := httptest.NewServer(c)
	defer srv.Close()
	url := srv.URL + "/runs/r1"

	forged := pushedN(t, 0, 1000)
	forged.Agent.Name = "forger"
	body, _ := json.Marshal(forged)

	plain, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	bearer, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	bearer.Header.Set("Authorization", "Bearer "+testToken) // the token is never sent; only a signature counts
	altered := signedRequest(t, url, testToken, b.Session, body)
	tampered := bytes.Replace(body, []byte(`"forger"`), []byte(`"forgeR"`), 1)
	altered.Body = io.NopCloser(bytes.NewReader(tampered))
	matrix := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"no token", plain, 401},
		{"a bearer token instead of a signature", bearer, 401},
		{"a wrong token", signedRequest(t, url, testToken+"x", b.Session, body), 401},
		{"the right token, another run's path", signedRequest(t, url, testToken, b.Session, body), 0}, // rewritten below
		{"the body altered in transit", altered, 401},
	}
	chunked := signedRequest(t, url, testToken, b.Session, body)
	chunked.ContentLength = -1 // sent chunked: the signed length does not match
	matrix = append(matrix, struct {
		name string
		req  *http.Request
		want int
	}{"signed, but sent without a length", chunked, 401})
	// A signature made for another path does not open this one.
	other := signedRequest(t, srv.URL+"/runs/r2", testToken, b.Session, body)
	other.URL, _ = other.URL.Parse(url)
	matrix[3].req, matrix[3].want = other, 401
	for _, m := range matrix {
		code, msg := status(t, m.req)
		t.Logf("%-40s %d %s", m.name, code, msg)
		if code != m.want {
			t.Errorf("%s: %d %s, want %d", m.name, code, msg, m.want)
		}
	}
	// The real agents: shard 0 is still free.
	ctx := context.Background()
	cred := agent.Credentials{Token: testToken}
	real := []*metrics.Run{pushed(t, 0), pushed(t, 1)}
	for _, r := range real {
		if err := agent.Push(ctx, url, cred, r); err != nil {
			t.Fatalf("the real agent %s: %v", r.Agent.Name, err)
		}
	}
	// A valid token for a shard already reported.
	code, msg := status(t, signedRequest(t, url, testToken, b.Session, body))
	t.Logf("%-40s %d %s", "the right token, shard 0 taken", code, msg)
	if code != http.StatusConflict {
		t.Errorf("a second record for shard 0: %d %s, want 409", code, msg)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	runs, err := b.Wait(wctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := metrics.Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Agents) != 2 || m.Agents[0].Name != "a0" || m.Agents[1].Name != "a1" || m.Transactions != real[0].Transactions+real[1].Transactions {
		t.Errorf("merged: agents %+v, %d transactions; want a0 and a1's %d", m.Agents, m.Transactions, real[0].Transactions+real[1].Transactions)
	}
	// A collector without a token takes nothing.
	c2 := agent.NewCollector("")
	c2.Expect("", 1)
	srv2 := httptest.NewServer(c2)
	defer srv2.Close()
	if err := agent.Push(ctx, srv2.URL+"/", agent.Credentials{Token: testToken}, pushed(t, 0)); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a collector without a token: %v, want 401", err)
	}
	// An agent without a token does not push.
	if err := agent.Push(ctx, url, agent.Credentials{}, pushed(t, 0)); err == nil {
		t.Error("pushed without a token")
	}
}

// TestCollectorTLS: a collector serving a certificate made for the run
// takes the record of an agent given its CA; one without it fails the
// handshake.
func TestCollectorTLS(t *testing.T) {
	cfg, caPEM, err := agent.CollectorTLS([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := agent.NewCollector(testToken)
	b := c.Expect("", 2)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Serve(ln, cfg)()
	url := "https://" + ln.Addr().String() + "/"
	ctx := context.Background()
	if err := agent.Push(ctx, url, agent.Credentials{Token: testToken}, pushed(t, 0)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	for i := range 2 {
		if err := agent.Push(ctx, url, agent.Credentials{Token: testToken, CA: caPEM}, pushed(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := b.Wait(wctx); err != nil {
		t.Fatal(err)
	}
}

// TestTokens: NewToken is 256 random bits; CheckToken refuses short ones
// and ones with spaces; the agent's environment carries the credentials.
func TestTokens(t *testing.T) {
	a, err1 := agent.NewToken()
	b, err2 := agent.NewToken()
	if err1 != nil || err2 != nil || a == b || len(a) != 43 || agent.CheckToken(a) != nil {
		t.Fatalf("tokens %q %q: %v %v", a, b, err1, err2)
	}
	for _, bad := range []string{"", "short", strings.Repeat("a", 21), strings.Repeat("a", 30) + " b"} {
		if agent.CheckToken(bad) == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
	env := map[string]string{}
	for _, kv := range (agent.Credentials{Token: a, CA: []byte("x")}).Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if _, err := agent.CredentialsFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), agent.EnvCollectorCA) {
		t.Errorf("a CA that is no PEM: %v", err)
	}
	delete(env, agent.EnvCollectorCA)
	if c, err := agent.CredentialsFromEnv(func(k string) string { return env[k] }); err != nil || c.Token != a {
		t.Errorf("credentials %+v, %v", c, err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// pushedN is a valid record of shard i of 2 with n transactions.
func pushedN(t *testing.T, i, n int) *metrics.Run {
	t.Helper()
	rec := metrics.NewRecorder(1, time.Now())
	var d [vocab.NumTimed]time.Duration
	d[vocab.PhaseTotal] = 3 * time.Millisecond
	for range n {
		rec.Record(0, &metrics.Sample{Steady: true, Dur: d})
	}
	r := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Complete: true, Load: metrics.Load{Mode: "closed", Concurrency: 1},
		Agent:   &metrics.Agent{Name: "a" + string(rune('0'+i)), Shard: i, Shards: 2},
		Started: testStart}
	if err := r.Fill(rec.Snapshot(), time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// rss is this process's resident set (bytes), after a collection.
func rss() int64 {
	runtime.GC()
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestCollectorLimits: an oversized record (300 MB announced, signed),
// endless headers, a record without a length, a slow sender and more
// connections than the cap are refused or cut off within the limits, the
// collector's memory growing by a bounded amount.
func TestCollectorLimits(t *testing.T) {
	c := agent.NewCollector(testToken)
	b := c.Expect("", 2)
	c.Limits = agent.Limits{MaxRecord: 1 << 20, ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, MaxConns: 4}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Serve(ln, nil)()
	addr := ln.Addr().String()
	before := rss()

	// 300 MB announced and signed: 413 before the body is read (asked
	// with Expect: 100-continue, nothing of it is sent)...
	const huge = 300 << 20
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", io.LimitReader(zeroReader{}, huge))
	req.ContentLength = huge
	auth, sum := signZeros(testToken, b.Session, huge)
	req.Header.Set("Authorization", auth)
	req.Header.Set(agent.HeaderContentSHA256, sum)
	req.Header.Set(agent.HeaderSession, b.Session)
	req.Header.Set("Expect", "100-continue")
	if code, msg := status(t, req); code != http.StatusRequestEntityTooLarge {
		t.Errorf("300 MB record: %d %s, want 413", code, msg)
	}
	// ... and streamed regardless: refused (413, or the connection
	// closed), after at most what the socket buffers hold was sent.
	sent, code := rawPush(t, addr, testToken, b.Session, huge, 0)
	if (code != "413" && code != "") || sent > 64<<20 {
		t.Errorf("300 MB record streamed: status %q after %d MB, want refused", code, sent>>20)
	}
	// 300 MB, not signed: 401, nothing read.
	if _, code := rawPush(t, addr, "", "", huge, 0); code != "401" {
		t.Errorf("300 MB unsigned: status %s, want 401", code)
	}
	// Endless headers: 431 once they pass MaxHeaderBytes.
	// (Or the connection closed: the server's close may reset it before
	// the answer is read, on a loaded machine.)
	hsent, code := endlessHeaders(t, addr)
	if (code != "431" && code != "") || hsent > 16<<20 {
		t.Errorf("endless headers: status %q after %d KiB, want 431", code, hsent>>10)
	}
	// A slow sender of a (small, signed) body: cut off at ReadTimeout.
	start := time.Now()
	_, code = rawPush(t, addr, testToken, b.Session, 1000, 100*time.Millisecond)
	if el := time.Since(start); el > 2*time.Second+time.Second || code == "204" {
		t.Errorf("slow body: status %q after %s, want cut off at the 2 s read timeout", code, el)
	}
	// A slow sender of headers: cut off at ReadHeaderTimeout.
	start = time.Now()
	slowHeaders(t, addr, 100*time.Millisecond)
	if el := time.Since(start); el > time.Second+time.Second {
		t.Errorf("slow headers: cut off after %s, want at the 1 s header timeout", el)
	}
	growth := rss() - before
	t.Logf("collector limits: 300 MB record refused after %d KiB sent; endless headers refused after %d KiB; RSS growth %d KiB", sent>>10, hsent>>10, growth>>10)
	if growth > 16<<20 {
		t.Errorf("RSS grew by %d MiB", growth>>20)
	}

	// The cap: 4 silent connections hold every slot; a fifth is served
	// only once they are cut off (header timeout, 1 s).
	for range 4 {
		cn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cn.Close()
	}
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	req, _ = http.NewRequest(http.MethodPut, "http://"+addr+"/", nil)
	code5, _ := status(t, req)
	if el := time.Since(start); code5 != http.StatusMethodNotAllowed || el < 700*time.Millisecond {
		t.Errorf("a fifth connection: %d after %s, want served only after the others' 1 s header timeout", code5, el)
	}
}

// signZeros returns the Authorization and digest headers of a push to /
// of length zero bytes.
func signZeros(token, session string, length int64) (auth, sum string) {
	h := sha256.New()
	zeros := make([]byte, 1<<20)
	for n := length; n > 0; n -= int64(len(zeros)) {
		h.Write(zeros[:min(n, int64(len(zeros)))])
	}
	d := h.Sum(nil)
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "POST\n/\n%d\n%x\n%s", length, d, session)
	return agent.AuthScheme + " " + hex.EncodeToString(m.Sum(nil)), hex.EncodeToString(d)
}

// rawPush sends a push announcing length bytes (signed with token unless
// empty), the body in 64 KiB writes (or bytes every pace), and returns what
// was sent and the status code answered ("" if none).
func rawPush(t *testing.T, addr, token, session string, length int64, pace time.Duration) (int64, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	hdr := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", addr, length)
	if token != "" {
		auth, sum := signZeros(token, session, length)
		hdr += fmt.Sprintf("Authorization: %s\r\n%s: %s\r\n%s: %s\r\n", auth, agent.HeaderContentSHA256, sum, agent.HeaderSession, session)
	}
	if _, err := io.WriteString(conn, hdr+"\r\n"); err != nil {
		t.Fatal(err)
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(conn).ReadString('\n')
		f := strings.Fields(line)
		if len(f) > 1 {
			answer <- f[1]
		} else {
			answer <- ""
		}
	}()
	chunk := make([]byte, 64<<10)
	if pace > 0 {
		chunk = chunk[:1]
	}
	var sent int64
	for sent < length {
		select {
		case code := <-answer:
			return sent, code
		default:
		}
		if pace > 0 {
			time.Sleep(pace)
		}
		conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		n, err := conn.Write(chunk[:min(int64(len(chunk)), length-sent)])
		sent += int64(n)
		if err != nil {
			break
		}
	}
	return sent, <-answer
}

// endlessHeaders sends header lines until the server answers; it returns
// what was sent and the status code.
func endlessHeaders(t *testing.T, addr string) (int64, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(conn).ReadString('\n')
		f := strings.Fields(line)
		if len(f) > 1 {
			answer <- f[1]
		} else {
			answer <- ""
		}
	}()
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\n")
	line := "X-Filler: " + strings.Repeat("a", 1000) + "\r\n"
	var sent int64
	for sent < 256<<20 {
		select {
		case code := <-answer:
			return sent, code
		default:
		}
		conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
		n, err := io.WriteString(conn, line)
		sent += int64(n)
		if err != nil {
			break
		}
	}
	return sent, <-answer
}

// slowHeaders sends a header byte every pace until the server closes the
// connection.
func slowHeaders(t *testing.T, addr string, pace time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn)
		close(closed)
	}()
	msg := "POST / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 1000)
	for i := 0; i < len(msg); i++ {
		select {
		case <-closed:
			return
		case <-time.After(pace):
		}
		if _, err := conn.Write([]byte{msg[i]}); err != nil {
			return
		}
	}
	t.Error("the slow sender was never cut off")
}

// TestCollectorSession: every batch has its own session, given by a signed
// hello only to an agent with the token and signed by the collector; a
// push signed for another batch's session is refused (409) and takes no
// shard, as is one signed for this session whose steady window began
// before the batch did; a hello with a wrong token is refused (401).
func TestCollectorSession(t *testing.T) {
	c := agent.NewCollector(testToken)
	b1, b2 := c.Expect("r1", 2), c.Expect("r2", 2)
	srv := httptest.NewServer(c)
	defer srv.Close()
	ctx := context.Background()
	cred := agent.Credentials{Token: testToken}
	if b1.Session == b2.Session || len(b1.Session) < 16 {
		t.Fatalf("sessions %q and %q: want two distinct random ones", b1.Session, b2.Session)
	}
	got, err := agent.Hello(ctx, srv.URL+"/runs/r1", cred)
	if err != nil || got.Session != b1.Session {
		t.Fatalf("hello: %q, %v; want the session %q", got.Session, err, b1.Session)
	}
	_, err = agent.Hello(ctx, srv.URL+"/runs/r1", agent.Credentials{Token: testToken + "x"})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("hello with a wrong token: %v, want 401", err)
	}
	// Signed with the token for r2's session, pushed to r1.
	other := got
	other.Session = b2.Session
	err = agent.Push(ctx, srv.URL+"/runs/r1", other, pushed(t, 0))
	if err == nil || !strings.Contains(err.Error(), "409") ||
		!strings.Contains(err.Error(), "another collection") {
		t.Errorf("a push signed for another session: %v, want 409", err)
	}
	// Signed for this session, of a run made before the batch began.
	old := pushed(t, 0)
	old.Started = b1.Began.Add(-time.Minute)
	if err := agent.Push(ctx, srv.URL+"/runs/r1", got, old); err == nil || !strings.Contains(err.Error(), "409") ||
		!strings.Contains(err.Error(), "before this collection") {
		t.Errorf("a record of a run before the collection: %v, want 409", err)
	}
	// Shard 0 is still free.
	for i := range 2 {
		if err := agent.Push(ctx, srv.URL+"/runs/r1", got, pushed(t, i)); err != nil {
			t.Fatalf("the real agent %d: %v", i, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if runs, err := b1.Wait(wctx); err != nil || len(runs) != 2 {
		t.Fatalf("Wait: %d records, %v", len(runs), err)
	}
}

// TestMissingWording: the deadline's message names the agents that
// reported, or says none did (no empty list).
func TestMissingWording(t *testing.T) {
	c := agent.NewCollector(testToken)
	b := c.Expect("r1", 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Wait(ctx)
	const want = "none of the 2 agents of run r1 reported; missing shards 0/2, 1/2"
	if err == nil || strings.Contains(err.Error(), "()") || !strings.Contains(err.Error(), want) {
		t.Errorf("no agent reported: %v", err)
	}
}
