package target_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestDelayRamp: a target with DelayRamp slows down steadily: its delay is
// Delay plus the ramp for every second since RampStart, and a response
// made now waits at least that long.
func TestDelayRamp(t *testing.T) {
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	start := time.Now().Add(-2 * time.Second)
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 10 * time.Millisecond,
		DelayRamp: 50 * time.Millisecond, RampStart: start})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	// 10 ms + 2 s × 50 ms/s = 110 ms, and more as time passes.
	if d := tg.Delay(); d < 110*time.Millisecond || d > 110*time.Millisecond+50*time.Millisecond*time.Duration(time.Since(start).Seconds()-1) {
		t.Errorf("delay %v two seconds into a 50ms/s ramp from 10ms, want about 110ms", d)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: p.ClientConfig(&tls.Config{RootCAs: tg.CA.Pool(), ServerName: "localhost"}),
	}}
	defer c.CloseIdleConnections()
	t0 := time.Now()
	resp, err := c.Get("https://" + tg.Listener(p.Name).Addr + "/1k")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if took, want := time.Since(t0), 110*time.Millisecond; took < want {
		t.Errorf("a response took %v, want at least the ramped delay %v", took, want)
	}
	// Without a ramp, the delay stays Delay.
	flat, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer flat.Close()
	if d := flat.Delay(); d != 10*time.Millisecond {
		t.Errorf("delay without a ramp %v, want 10ms", d)
	}
}
