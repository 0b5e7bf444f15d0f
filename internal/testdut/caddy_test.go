package testdut

import (
	"crypto/tls"
	"io"
	"net/http"
	"os/exec"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/tlsbench/tlsbench/cipher"
)

// TestCaddy: one Caddy serves the objects over HTTP/1.1 and HTTP/2 (h2load)
// and HTTP/3 (quic-go's client) on one port, TLS 1.3 with a P-256 ECDSA
// certificate of our CA, and its access log counts each protocol's
// requests exactly; the admin API, asked for, answers on its own loopback
// port only.
func TestCaddy(t *testing.T) {
	h2load, err := exec.LookPath("h2load")
	require(t, "h2load", err)
	dir := t.TempDir()
	ca := NewCA(t)
	cert := Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	c := StartCaddyT(t, CaddyConfig{Dir: dir, Cert: cert, Curves: []string{"x25519"}, Admin: true})
	for _, run := range [][]string{{"-n", "12", "-c", "3"}, {"--h1", "-n", "5", "-c", "1"}} {
		args := append(run, "https://"+c.Addr+"/1k")
		out, err := exec.Command(h2load, args...).CombinedOutput()
		if m := regexp.MustCompile(`(\d+) succeeded`).FindSubmatch(out); err != nil || m == nil || string(m[1]) != run[len(run)-3] {
			t.Fatalf("h2load %v: %v: %s", args, err, out)
		}
	}
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS13,
			CurvePreferences: []tls.CurveID{tls.X25519}},
		QUICConfig: &quic.Config{HandshakeIdleTimeout: 3 * time.Second}}
	defer tr.Close()
	h3 := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	for i, path := range []string{"/1k", "/1m", "/1k", "/nope"} {
		resp, err := h3.Get("https://" + c.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		size := map[string]int{"/1k": 1024, "/1m": 1 << 20, "/nope": 0}[path]
		if err != nil || resp.ProtoMajor != 3 || (i < 3 && len(body) != size) {
			t.Fatalf("%s over %s: %d bytes (%v), status %d; want HTTP/3, %d bytes", path, resp.Proto, len(body), err,
				resp.StatusCode, size)
		}
	}
	want := map[string]int64{"HTTP/2.0 200": 12, "HTTP/1.1 200": 5, "HTTP/3.0 200": 3, "HTTP/3.0 404": 1}
	if got := c.Requests(t, 21); !reflect.DeepEqual(got, want) {
		t.Errorf("caddy's access log: %v, want %v", got, want)
	}
	resp, err := http.Get("http://" + c.AdminAddr + "/config/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("admin API: status %d", resp.StatusCode)
	}
}
