package target_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// clientConfig is a client configuration of profile p for tg, offering
// alpn (none when empty).
func clientConfig(tg *target.Target, p *profiles.Profile, alpn ...string) *tls.Config {
	cfg := p.ClientConfig(&tls.Config{RootCAs: tg.CA.Pool(), ServerName: "localhost"})
	cfg.NextProtos = alpn
	return cfg
}

// h2Client is an HTTP/2 client of p's listener (net/http's Transport,
// HTTP/2 only: x/net's, bundled; one connection, its streams at once).
func h2Client(tg *target.Target, p *profiles.Profile, cert ...tls.Certificate) *http.Client {
	cfg := clientConfig(tg, p, "h2")
	cfg.Certificates = cert
	tr := &http.Transport{TLSClientConfig: cfg, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP2(true)
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}

// h1Client is an HTTP/1.1 client of p's listener that offers alpn.
func h1Client(tg *target.Target, p *profiles.Profile, cert []tls.Certificate, alpn ...string) *http.Client {
	cfg := clientConfig(tg, p, alpn...)
	cfg.Certificates = cert
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// getN makes n GETs of path with c, checking each body's size and
// protocol (ALPN and HTTP version).
func getN(t *testing.T, c *http.Client, url string, n, size, major int, alpn string) {
	t.Helper()
	for range n {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(body) != size || resp.ProtoMajor != major || resp.TLS.NegotiatedProtocol != alpn {
			t.Fatalf("%s: %d bytes (%v) over %s, ALPN %q; want %d over HTTP/%d, ALPN %q", url, len(body), err,
				resp.Proto, resp.TLS.NegotiatedProtocol, size, major, alpn)
		}
	}
}

// TestH2BesideHTTP1: one listener serves HTTP/2 and HTTP/1.1 by ALPN, and
// counts each protocol's requests apart, exactly; every connection's
// handshake once (the one that reads /stats, over HTTP/2, not); client
// certificates and server names as over HTTP/1.1. The TLS 1.2 profile's
// suite (AES-CBC) is one RFC 9113 prohibits: served all the same.
func TestH2BesideHTTP1(t *testing.T) {
	set := profiles.Builtin()
	clientCA, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "client CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := clientCA.ClientLeaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "client", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*profiles.Profile
	for _, name := range []string{"tls13-aes128-gcm-x25519", "ecdhe-ecdsa-aes128-sha256-p256",
		"ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls"} {
		p, _ := set.Get(name)
		ps = append(ps, p)
	}
	tg, err := target.Start(target.Config{Profiles: ps, ClientCAs: clientCA.Pool(), Names: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for i, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			var cert []tls.Certificate
			if i == 2 {
				cert = []tls.Certificate{leaf}
			}
			url := "https://" + tg.Listener(p.Name).Addr
			h2, h1 := h2Client(tg, p, cert...), h1Client(tg, p, cert, "http/1.1")
			getN(t, h2, url+"/1k", 7, 1024, 2, "h2")
			getN(t, h1, url+"/1k", 5, 1024, 1, "http/1.1")
			getN(t, h2, url+"/1m", 2, 1<<20, 2, "h2")
			// The streams of one connection at once.
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() { getN(t, h2, url+"/bytes/3k", 1, 3<<10, 2, "h2") })
			}
			wg.Wait()
			st := h2Stats(t, h2Client(tg, p, cert...), url)
			want := map[string]int64{"http/2": 17, "http/1.1": 5}
			if !reflect.DeepEqual(st.ByProtocol, want) || st.Requests != 22 || st.Handshakes != 2 {
				t.Errorf("requests %d %v, handshakes %d; want 22 %v, 2 (one connection per protocol)", st.Requests,
					st.ByProtocol, st.Handshakes, want)
			}
			if wantCerts := int64(2 * len(cert)); st.ClientCerts != wantCerts {
				t.Errorf("client certificates %d, want %d", st.ClientCerts, wantCerts)
			}
			if st.Names == nil || st.Names.Handshakes != 3 {
				t.Errorf("names %+v, want 3 handshakes naming localhost (/stats's too)", st.Names)
			}
		})
	}
}

// h2Stats reads url's /stats with c (its own connection, not counted).
func h2Stats(t *testing.T, c *http.Client, url string) target.Stats {
	t.Helper()
	resp, err := c.Get(url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st target.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.ProtoMajor != 2 {
		t.Fatalf("/stats over %s: %v", resp.Proto, err)
	}
	return st
}

// TestObjectsH2: the objects over HTTP/2, as TestObjects over HTTP/1.1.
func TestObjectsH2(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	checkObjects(t, h2Client(tg, p), "https://"+tg.Listener(p.Name).Addr, 2)
}

// TestHTTP1Unchanged: a client that offers no ALPN, or http/1.1, gets the
// HTTP/1.1 responses it always got, byte for byte (the Date aside), and
// no protocol is negotiated without ALPN; a listener that cannot
// negotiate TLS 1.2 offers no ALPN, as before (h2 needs TLS 1.2).
func TestHTTP1Unchanged(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	const head = "HTTP/1.1 %s\r\nServer: tlsbench\r\nDate: D\r\nContent-Type: %s\r\nContent-Length: %d\r\n" +
		"Connection: close\r\n\r\n"
	octets, text := "application/octet-stream", "text/plain; charset=utf-8"
	notFound := "not found; objects: /1k, /1m, /bytes/N[k|m|g], /stats"
	badSize := `size "x" is not a size in bytes (e.g. 1024, 16k, 1m, 2g)`
	want := map[string]string{
		"/1k":      fmt.Sprintf(head, "200 OK", octets, 1024) + patternBytes(1024),
		"/bytes/5": fmt.Sprintf(head, "200 OK", octets, 5) + "AHOVc",
		"/nope":    fmt.Sprintf(head, "404 Not Found", text, len(notFound)) + notFound,
		"/bytes/x": fmt.Sprintf(head, "400 Bad Request", text, len(badSize)) + badSize,
	}
	faults := map[string]string{
		"status-503": fmt.Sprintf(head, "503 Service Unavailable", text, 26) + "fault injected: status-503",
		"short-body": fmt.Sprintf(head, "200 OK", text, 2) + "AH",
	}
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	for _, alpn := range [][]string{nil, {"http/1.1"}} {
		for path, w := range want {
			if got, proto := rawGet(t, tg.Listener(p.Name).Addr, path, clientConfig(tg, p, alpn...)); got != w ||
				proto != strings.Join(alpn, "") {
				t.Errorf("ALPN %q, %s: %q (negotiated %q), want %q", alpn, path, got, proto, w)
			}
		}
	}
	for kind, w := range faults {
		ft, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Faults: []target.Fault{{Kind: kind, Fraction: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := rawGet(t, ft.Listeners[0].Addr, "/bytes/5", clientConfig(ft, p)); got != w {
			t.Errorf("%s: %q, want %q", kind, got, w)
		}
		ft.Close()
	}
	old, err := profiles.Parse("tls10.yaml", []byte("name: tls10\nmin_version: TLS1.0\nmax_version: TLS1.1\n"+
		"cipher_suites: [ECDHE-ECDSA-AES128-SHA]\ngroups: [P-256]\nexpect:\n  version: TLS1.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	ot := startTarget(t, old, nil)
	if resp, proto := rawGet(t, ot.Listeners[0].Addr, "/1k", clientConfig(ot, old[0], "h2", "http/1.1")); proto != "" ||
		!strings.HasPrefix(resp, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("a TLS 1.1 listener negotiated %q, want no ALPN as before (h2 needs TLS 1.2), and HTTP/1.1", proto)
	}
}

// dialTLS opens a TLS connection to addr, closed at the test's end, with
// a deadline.
func dialTLS(t *testing.T, addr string, cfg *tls.Config) *tls.Conn {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return c
}

// patternBytes is the first n bytes of the pattern.
func patternBytes(n int) string {
	return string(bytes.Repeat(target.Pattern, n/target.PatternPeriod+1)[:n])
}

// rawGet makes one HTTP/1.1 request on a new TLS connection and returns
// the response's bytes, its Date masked, and the ALPN protocol negotiated.
func rawGet(t *testing.T, addr, path string, cfg *tls.Config) (resp, proto string) {
	t.Helper()
	c := dialTLS(t, addr, cfg)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path)
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	date := regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)
	return date.ReplaceAllString(string(b), "\r\nDate: D\r\n"), c.ConnectionState().NegotiatedProtocol
}

// h2Seen is what the server sent on a raw HTTP/2 connection for one GET.
type h2Seen struct {
	settings  map[http2.SettingID]uint32
	connWin   uint32 // the connection's window increments
	status    string
	length    string // content-length
	data      int
	endStream bool
	end       error // how the connection ended (untilEnd), or nil
}

// h2Get makes one GET for path on a new HTTP/2 connection to addr, with
// x/net's Framer and hpack and windows of 1 GiB, and reads the server's
// frames until the stream ends or, with untilEnd, the connection does.
func h2Get(t *testing.T, addr, path string, cfg *tls.Config, untilEnd bool) h2Seen {
	t.Helper()
	c := dialTLS(t, addr, cfg)
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", path}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	_, _ = io.WriteString(c, http2.ClientPreface)
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	_ = fr.WriteWindowUpdate(0, 1<<30-65535)
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true})
	s := h2Seen{settings: map[http2.SettingID]uint32{}}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			s.end = err
			return s
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = f.ForeachSetting(func(st http2.Setting) error { s.settings[st.ID] = st.Val; return nil })
				_ = fr.WriteSettingsAck()
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				s.connWin += f.Increment
			}
		case *http2.MetaHeadersFrame:
			s.status, s.length = f.PseudoValue("status"), headerValue(f, "content-length")
		case *http2.DataFrame:
			s.data += len(f.Data())
			s.endStream = f.StreamEnded()
		}
		if s.endStream && !untilEnd {
			return s
		}
	}
}

func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.RegularFields() {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}

// TestH2Settings: the server's SETTINGS are those h2.go and the docs state.
func TestH2Settings(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	s := h2Get(t, tg.Listeners[0].Addr, "/1m", clientConfig(tg, p, "h2"), false)
	if s.settings[http2.SettingMaxConcurrentStreams] != 1024 || s.settings[http2.SettingInitialWindowSize] != 1<<20 ||
		s.connWin+65535 != 1<<20 {
		t.Errorf("settings %v, connection window 65535+%d; want 1024 streams, windows of 1 MiB", s.settings, s.connWin)
	}
	if s.status != "200" || s.length != "1048576" || s.data != 1<<20 || !s.endStream {
		t.Errorf("response %+v", s)
	}
}

// TestH2Faults: the response faults apply to HTTP/2 streams, those that
// end the connection end it as over HTTP/1.1 (FIN mid-body; RST after the
// response), and each is counted once per request.
func TestH2Faults(t *testing.T) {
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	for _, tc := range []struct {
		kind, status, length string
		data                 int
		endStream, reset     bool
	}{
		{"status-503", "503", "26", 26, true, false},
		{"short-body", "200", "512", 512, true, false},
		{"close-mid-body", "200", "1024", 512, false, false},
		{"reset-after-response", "200", "1024", 1024, true, true},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p},
				Faults: []target.Fault{{Kind: tc.kind, Fraction: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			cuts := tc.kind == "close-mid-body" || tc.kind == "reset-after-response"
			const conns = 5 // the cut races x/net's writes: each connection could lose it
			for range conns {
				s := h2Get(t, tg.Listeners[0].Addr, "/1k", clientConfig(tg, p, "h2"), cuts)
				if s.status != tc.status || s.length != tc.length || s.data != tc.data || s.endStream != tc.endStream {
					t.Errorf("status %s, content-length %s, %d bytes, END_STREAM %v; want %s, %s, %d, %v", s.status,
						s.length, s.data, s.endStream, tc.status, tc.length, tc.data, tc.endStream)
				}
				if reset := errors.Is(s.end, syscall.ECONNRESET); cuts && (reset != tc.reset || s.end == nil) {
					t.Errorf("the connection ended with %v; want a reset: %v", s.end, tc.reset)
				}
			}
			if got := tg.Listeners[0].Stats(); got.Injected[tc.kind] != conns || got.ByProtocol["http/2"] != conns {
				t.Errorf("injected %v, requests %v; want %d each", got.Injected, got.ByProtocol, conns)
			}
		})
	}
}

// TestH2ConnFault: a fault that ends the connection ends its other
// streams too, without a response, each counted (reset-after-response:
// the first stream's response is whole); a handshake fault applies before
// ALPN, to each connection the client tries.
func TestH2ConnFault(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	for kind, whole := range map[string]int{"close-mid-body": 0, "reset-after-response": 1, "alert": 0} {
		tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 50 * time.Millisecond,
			Faults: []target.Fault{{Kind: kind, Fraction: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		url := "https://" + tg.Listeners[0].Addr + "/1k"
		c := h2Client(tg, p)
		var completed atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				resp, err := c.Get(url)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err == nil {
					completed.Add(1)
				}
			})
		}
		wg.Wait()
		tg.Close()
		st := tg.Listeners[0].Stats()
		want := map[string]int64{kind: 4, "requests": 4, "whole": int64(whole)} // the streams of one connection
		if kind == "alert" {
			want = map[string]int64{kind: max(1, st.Connections), "requests": 0, "whole": 0}
		}
		got := map[string]int64{kind: st.Injected[kind], "requests": st.ByProtocol["http/2"], "whole": completed.Load()}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: injected, requests and whole responses %v, want %v", kind, got, want)
		}
	}
}

// TestH2MaxRequestsPerConn: over HTTP/2 the M-th response of a
// connection comes with a GOAWAY, and the client opens another.
func TestH2MaxRequestsPerConn(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, MaxRequestsPerConn: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	getN(t, h2Client(tg, p), "https://"+tg.Listeners[0].Addr+"/1k", 7, 1024, 2, "h2")
	if st := tg.Listeners[0].Stats(); st.Handshakes != 3 || st.ByProtocol["http/2"] != 7 {
		t.Errorf("%d handshakes, %v requests; want 3 connections for 7 requests", st.Handshakes, st.ByProtocol)
	}
}

// TestH2Close: Close ends the open HTTP/2 connections at once.
func TestH2Close(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
	if err != nil {
		t.Fatal(err)
	}
	getN(t, h2Client(tg, p), "https://"+tg.Listeners[0].Addr+"/1k", 1, 1024, 2, "h2")
	start := time.Now()
	tg.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with an idle HTTP/2 connection open", d)
	}
}

// TestH2Load: h2load over HTTP/2 and over HTTP/1.1 at once on one
// listener: each protocol's requests counted apart, equal to what h2load
// made, and one handshake per connection.
func TestH2Load(t *testing.T) {
	if _, err := exec.LookPath("h2load"); err != nil {
		t.Skip("h2load (nghttp2-client) not installed")
	}
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	url := "https://" + tg.Listeners[0].Addr + "/1k"
	var out [2][]byte
	var errs [2]error
	var wg sync.WaitGroup
	for i, args := range [][]string{{"-n", "100", "-c", "4", "-m", "4", url}, {"--h1", "-n", "60", "-c", "3", url}} {
		wg.Go(func() {
			out[i], errs[i] = exec.Command("timeout", append([]string{"60", "h2load"}, args...)...).CombinedOutput()
		})
	}
	wg.Wait()
	for i, want := range []string{"100 succeeded, 0 failed", "60 succeeded, 0 failed"} {
		if errs[i] != nil || !bytes.Contains(out[i], []byte(want)) || !bytes.Contains(out[i], []byte(fmt.Sprintf("%d) data",
			1024*[]int{100, 60}[i]))) {
			t.Fatalf("h2load: %v, want %s and 1024 bytes each:\n%s", errs[i], want, out[i])
		}
	}
	st := tg.Listeners[0].Stats()
	if want := map[string]int64{"http/2": 100, "http/1.1": 60}; !reflect.DeepEqual(st.ByProtocol, want) ||
		st.Requests != 160 || st.Handshakes != 7 {
		t.Errorf("requests %d %v, handshakes %d; want 160 %v, 7", st.Requests, st.ByProtocol, st.Handshakes, want)
	}
}

// TestH2SlowResponse: a response delayed beyond HTTP/2's write timeout
// (the slow fault, Config.Delay) still comes, as over HTTP/1.1: the
// timeout runs from the first byte written, not from the stream's start.
func TestH2SlowResponse(t *testing.T) {
	target.SetH2WriteTimeout(t, 300*time.Millisecond)
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	getN(t, h2Client(tg, p), "https://"+tg.Listeners[0].Addr+"/1k", 1, 1024, 2, "h2")
}

// TestH2Resumption: an HTTP/2 connection that resumes a session is
// counted as resumed, not as a full handshake, as over HTTP/1.1.
func TestH2Resumption(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Resumption: target.Resumption{PSK: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	cache := tls.NewLRUClientSessionCache(4)
	for range 2 { // a new client, so a new connection, each (not the profile's, which refuses to resume)
		c := h2Client(tg, p)
		c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: tg.CA.Pool(), ServerName: "localhost",
			NextProtos: []string{"h2"}, ClientSessionCache: cache}
		getN(t, c, "https://"+tg.Listeners[0].Addr+"/1k", 1, 1024, 2, "h2")
	}
	if st := tg.Listeners[0].Stats(); st.Handshakes != 1 || st.Resumed != 1 || st.ByProtocol["http/2"] != 2 {
		t.Errorf("handshakes %d, resumed %d, requests %v; want 1, 1, 2 over HTTP/2", st.Handshakes, st.Resumed,
			st.ByProtocol)
	}
}
