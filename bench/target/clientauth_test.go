package target_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// getOver makes one HTTP/1.0 request over TLS with cfg to addr and returns
// the response, or the error of the handshake or of the read.
func getOver(addr, path string, cfg *tls.Config) (string, error) {
	d := &net.Dialer{Timeout: 2 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path); err != nil {
		return "", err
	}
	body, err := io.ReadAll(c)
	return string(body), err
}

// TestClientAuth: with a client CA, the listener of a client_cert profile
// requires a certificate verified by it and counts it (client_certs; a
// connection that reads /stats is taken back, as its handshake is), the
// other profile's listener asks for none; a verifying mode without CAs is
// refused at Start.
func TestClientAuth(t *testing.T) {
	set := profiles.Builtin()
	mtls, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls")
	plain, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	clientCA, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "client CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := target.Start(target.Config{Profiles: []*profiles.Profile{mtls},
		ClientAuth: tls.RequireAndVerifyClientCert}); err == nil || !strings.Contains(err.Error(), "ClientCAs") {
		t.Errorf("Start verifying client certificates without CAs: %v, want refused", err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{mtls, plain}, ClientCAs: clientCA.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	leaf, err := clientCA.ClientLeaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "client", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	base := func(p *profiles.Profile, cert *tls.Certificate) *tls.Config {
		b := &tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()}
		if cert != nil {
			b.Certificates = []tls.Certificate{*cert}
		}
		return p.ClientConfig(b)
	}
	m, pl := tg.Listener(mtls.Name), tg.Listener(plain.Name)
	for i := 0; i < 3; i++ {
		if _, err := getOver(m.Addr, "/1k", base(mtls, &leaf)); err != nil {
			t.Fatalf("with the client certificate: %v", err)
		}
	}
	if _, err := getOver(m.Addr, "/1k", base(mtls, nil)); err == nil {
		t.Error("without a client certificate: the client_cert profile's listener answered")
	}
	if _, err := getOver(pl.Addr, "/1k", base(plain, nil)); err != nil {
		t.Errorf("the other profile's listener: %v", err)
	}
	resp, err := getOver(m.Addr, "/stats", base(mtls, &leaf))
	if err != nil {
		t.Fatal(err)
	}
	var st target.Stats
	if err := json.Unmarshal([]byte(resp[strings.Index(resp, "\r\n\r\n")+4:]), &st); err != nil {
		t.Fatalf("/stats: %v (%q)", err, resp)
	}
	if st.Handshakes != 3 || st.ClientCerts != 3 {
		t.Errorf("client_cert listener: %+v, want 3 handshakes and 3 client certificates (/stats's not counted)", st)
	}
	if got := pl.Stats(); got.Handshakes != 1 || got.ClientCerts != 0 {
		t.Errorf("other listener: %+v, want 1 handshake, no client certificate", got)
	}
}
