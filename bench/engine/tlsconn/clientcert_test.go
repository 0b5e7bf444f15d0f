package tlsconn_test

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestClientAuthSettings: the client-certificate settings that do not go
// together are refused, naming the setting; a profile without client_cert
// gets no certificate (None), and one with it a certificate of its type
// from the CA, presented whenever the server asks, the requests counted.
func TestClientAuthSettings(t *testing.T) {
	for _, tc := range []struct {
		a    tlsconn.ClientAuth
		want string
	}{
		{tlsconn.ClientAuth{ClientCertFile: "c"}, "client_key_file: missing"},
		{tlsconn.ClientAuth{ClientKeyFile: "k"}, "client_cert_file: missing"},
		{tlsconn.ClientAuth{ClientCAFile: "c"}, "client_ca_key_file: missing"},
		{tlsconn.ClientAuth{ClientCAKeyFile: "k"}, "client_ca_file: missing"},
		{tlsconn.ClientAuth{ClientCertFile: "c", ClientKeyFile: "k", ClientCAFile: "a", ClientCAKeyFile: "b"},
			"client_ca_file: not with client_cert_file"},
	} {
		if err := tc.a.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
	set := profiles.Builtin()
	plain, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	mtls, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls")
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}, "client CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a := tlsconn.ClientAuth{ClientCA: ca}
	none, err := a.ClientCertificate(plain)
	if err != nil || !none.None() || none.Recorded() != nil {
		t.Errorf("profile without client_cert: %+v, %v: want none", none, err)
	}
	cc, err := a.ClientCertificate(mtls)
	if err != nil || cc.None() {
		t.Fatalf("client_cert profile: %+v, %v", cc, err)
	}
	base := &tls.Config{}
	cc.Apply(base)
	for i := 0; i < 2; i++ {
		got, err := base.GetClientCertificate(&tls.CertificateRequestInfo{})
		if err != nil || got.Leaf == nil || got.Leaf.Issuer.CommonName != "client CA" {
			t.Errorf("presented %+v, %v: want the CA's certificate", got, err)
		}
	}
	rec := cc.Recorded()
	if rec.Key != "ECDSA P-256" || rec.Source != "generated" || rec.Requested != 2 {
		t.Errorf("recorded %+v, want the generated ECDSA P-256 certificate requested twice", rec)
	}
}
