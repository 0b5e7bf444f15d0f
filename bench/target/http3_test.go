package target_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// h3Client is an HTTP/3 client of p's listener (quic-go's http3), its
// handshake bounded by 2 s; cache, if set, keeps its session tickets (the
// profile's verification, which refuses a resumption, left out).
func h3Client(tg *target.Target, p *profiles.Profile, cache tls.ClientSessionCache) (*http.Client, *http3.Transport) {
	cfg := clientConfig(tg, p, http3.NextProtoH3)
	if cache != nil {
		cfg.ClientSessionCache, cfg.SessionTicketsDisabled, cfg.VerifyConnection = cache, false, nil
	}
	tr := &http3.Transport{TLSClientConfig: cfg, QUICConfig: &quic.Config{HandshakeIdleTimeout: 2 * time.Second}}
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}, tr
}

// h3URL is the https URL of p's HTTP/3 side, checked to be at the port of
// its TCP listener.
func h3URL(t *testing.T, tg *target.Target, p *profiles.Profile) string {
	t.Helper()
	l := tg.Listener(p.Name)
	_, tcp, _ := net.SplitHostPort(l.Addr)
	_, udp, _ := net.SplitHostPort(l.QUICAddr)
	if udp == "" || udp != tcp {
		t.Fatalf("HTTP/3 on %q, TCP on %s: want the same port", l.QUICAddr, l.Addr)
	}
	return "https://" + l.QUICAddr
}

// TestObjectsH3: the objects over HTTP/3, as TestObjects over HTTP/1.1
// (sizes, status, Server header, Content-Length).
func TestObjectsH3(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	c, tr := h3Client(tg, p, nil)
	defer tr.Close()
	checkObjects(t, c, h3URL(t, tg, p), 3)
}

// TestH3Counts: a TLS 1.3 listener serves HTTP/3 beside HTTP/2 and
// HTTP/1.1 and counts each protocol's requests exactly; QUIC's full
// handshakes, resumptions (PSK) and accepted 0-RTT apart, and in the
// totals; the connection that reads /stats over HTTP/3 not.
func TestH3Counts(t *testing.T) {
	set := profiles.Builtin()
	for _, name := range []string{"tls13-aes128-gcm-x25519", "tls13-x25519mlkem768"} {
		t.Run(name, func(t *testing.T) {
			p, err := set.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p},
				Resumption: target.Resumption{PSK: true}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			url, tcp := h3URL(t, tg, p), "https://"+tg.Listener(p.Name).Addr
			h3, tr := h3Client(tg, p, nil)
			getN(t, h3, url+"/1k", 7, 1024, 3, "h3")
			getN(t, h3, url+"/1m", 2, 1<<20, 3, "h3")
			var wg sync.WaitGroup
			for range 8 { // the streams of one connection at once
				wg.Go(func() { getN(t, h3, url+"/bytes/3k", 1, 3<<10, 3, "h3") })
			}
			wg.Wait()
			tr.Close()
			getN(t, h2Client(tg, p), tcp+"/1k", 3, 1024, 2, "h2")
			getN(t, h1Client(tg, p, nil, "http/1.1"), tcp+"/1k", 2, 1024, 1, "http/1.1")
			// A full handshake, then two resumptions, each with 0-RTT
			// accepted (quic-go's client offers it whenever it
			// resumes), the second's GET in it: three connections.
			cache := tls.NewLRUClientSessionCache(4)
			for i, method := range []string{http.MethodGet, http.MethodGet, http3.MethodGet0RTT} {
				c, tr := h3Client(tg, p, cache)
				req, _ := http.NewRequest(method, url+"/bytes/5k", nil)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if n := len(body); n != 5<<10 || resp.TLS.DidResume != (i > 0) {
					t.Fatalf("connection %d: %d bytes, resumed %v", i, n, resp.TLS.DidResume)
				}
				tr.Close()
			}
			st := h3Stats(t, tg, p)
			want := map[string]int64{"http/3": 20, "http/2": 3, "http/1.1": 2}
			wantQ := target.QUICStats{Address: tg.Listener(p.Name).QUICAddr, Handshakes: 2, Resumed: 2, EarlyData: 2}
			if !reflect.DeepEqual(st.ByProtocol, want) || st.Requests != 25 || st.QUIC == nil || *st.QUIC != wantQ ||
				st.Handshakes != 4 || st.Resumed != 2 {
				t.Errorf("requests %d %v, handshakes %d, resumed %d, QUIC %+v; want 25 %v, 4, 2, %+v", st.Requests,
					st.ByProtocol, st.Handshakes, st.Resumed, st.QUIC, want, wantQ)
			}
		})
	}
}

// h3Stats reads p's listener's /stats over HTTP/3.
func h3Stats(t *testing.T, tg *target.Target, p *profiles.Profile) target.Stats {
	t.Helper()
	c, tr := h3Client(tg, p, nil)
	defer tr.Close()
	resp, err := c.Get(h3URL(t, tg, p) + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st target.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.ProtoMajor != 3 {
		t.Fatalf("/stats over %s: %v", resp.Proto, err)
	}
	return st
}

// TestNoH3: a TLS 1.2 profile's listener has no UDP side (nothing answers
// QUIC at its port), nor has a TLS 1.3 one with NoHTTP3; /stats and the
// ready line say so.
func TestNoH3(t *testing.T) {
	set := profiles.Builtin()
	p12, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	p13, _ := set.Get("tls13-aes128-gcm-x25519")
	for _, cfg := range []target.Config{{Profiles: []*profiles.Profile{p12, p13}}, {Profiles: []*profiles.Profile{p13},
		NoHTTP3: true}} {
		tg, err := target.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		l := tg.Listeners[0]
		if l.QUICAddr != "" || l.Stats().QUIC != nil {
			t.Fatalf("%s (NoHTTP3 %v): HTTP/3 on %q, %+v; want none", l.Name(), cfg.NoHTTP3, l.QUICAddr, l.Stats().QUIC)
		}
		c, tr := h3Client(tg, p13, nil)
		tr.QUICConfig.HandshakeIdleTimeout = 300 * time.Millisecond // nothing answers: no ICMP either
		start := time.Now()
		if resp, err := c.Get("https://" + l.Addr + "/1k"); err == nil {
			resp.Body.Close()
			t.Fatalf("%s: HTTP/3 answered on UDP %s", l.Name(), l.Addr)
		}
		tr.Close()
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("HTTP/3 to a port without a UDP listener took %s", d)
		}
		var b bytes.Buffer
		if err := target.WriteReady(&b, tg, ""); err != nil {
			t.Fatal(err)
		}
		r, _, err := target.ParseReady(strings.TrimSpace(b.String()))
		last := tg.Listeners[len(tg.Listeners)-1]
		if err != nil || r.Listeners[0].QUIC != "" || r.Listeners[len(r.Listeners)-1].QUIC != last.QUICAddr {
			t.Errorf("ready line %s (%v): want quic only for %s, %q", b.String(), err, last.Name(), last.QUICAddr)
		}
	}
}

// TestH3CloseBounded: Close does not wait for an HTTP/3 response the
// target delays (10 s) beyond its bound (300 ms here, 5 s otherwise); the
// client's request ends.
func TestH3CloseBounded(t *testing.T) {
	target.SetH3CloseWait(t, 300*time.Millisecond)
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, tr := h3Client(tg, p, nil)
	defer tr.Close()
	got := make(chan error, 1)
	go func() {
		resp, err := c.Get(h3URL(t, tg, p) + "/1k")
		if err == nil {
			resp.Body.Close()
		}
		got <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); tg.Listeners[0].Stats().Requests == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the target")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	tg.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s with a response delayed 10 s", d)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Error("the delayed request succeeded")
		}
	case <-time.After(3 * time.Second):
		t.Error("the client's request did not end at Close")
	}
}

// TestH3FailedStartFreesUDP: a Start that fails after a listener took its
// UDP port (server names with a given certificate) gives the port back.
func TestH3FailedStartFreesUDP(t *testing.T) {
	p, _ := profiles.Builtin().Get("tls13-aes128-gcm-x25519")
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	cfg := target.Config{Profiles: []*profiles.Profile{p}, Port: port, Cert: &cert, Names: []string{"a.test"}}
	if tg, err := target.Start(cfg); err == nil {
		tg.Close()
		t.Fatal("server names with a given certificate started")
	}
	pc, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatalf("UDP port %d after the failed start: %v", port, err)
	}
	pc.Close()
}
