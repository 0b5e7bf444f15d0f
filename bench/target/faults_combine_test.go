package target_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestFaultsCombine serves two faults over real loopback TLS (an alert in
// the handshake, a 503 for the request) and makes N connections of one
// request each: each fault goes to N×fraction connections within 1, the
// others are served, no connection gets two faults, and the target counts
// what the client saw.
func TestFaultsCombine(t *testing.T) {
	set := profiles.Builtin()
	p, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	const n = 120
	for _, share := range []float64{0.5, 0.25} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p},
				Faults: []target.Fault{{Kind: "alert", Fraction: share}, {Kind: "status-503", Fraction: share}}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			addr := tg.Listener(p.Name).Addr
			cfg := &tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()}
			seen := map[string]int{}
			for range n {
				seen[oneRequest(addr, cfg)]++
			}
			t.Logf("%d connections: %v", n, seen)
			want := float64(n) * share
			for _, k := range []string{"alert", "503"} {
				if math.Abs(float64(seen[k])-want) > 1 {
					t.Errorf("%s: %d connections, want %.0f ± 1", k, seen[k], want)
				}
			}
			if got, want := seen["ok"], n-seen["alert"]-seen["503"]; got != want || len(seen) > 3 {
				t.Errorf("%d served, want %d; outcomes %v", got, want, seen)
			}
			st := tg.Listener(p.Name).Stats()
			inj := st.Injected
			if st.Connections != n || inj["alert"] != int64(seen["alert"]) || inj["status-503"] != int64(seen["503"]) {
				t.Errorf("target: %d connections, injected %v; the client saw %v", st.Connections, st.Injected, seen)
			}
		})
	}
}

// oneRequest makes one connection and one request: "alert" when the
// handshake ends in a handshake_failure alert, the status code ("200",
// "503") when a response came, else the error.
func oneRequest(addr string, cfg *tls.Config) string {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		if strings.Contains(err.Error(), "handshake failure") {
			return "alert"
		}
		return err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c, "GET /1k HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); err != nil {
		return err.Error()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case 200:
		return "ok"
	case 503:
		return "503"
	}
	return resp.Status
}
