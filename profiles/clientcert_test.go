package profiles_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

const clientCertDoc = `name: x
min_version: TLS1.3
max_version: TLS1.3
groups: [X25519]
expect: {version: TLS1.3}
client_cert: %s
`

// TestClientCertField: client_cert is parsed into ClientCertKey, must be a
// key type that can be generated, and the built-in mTLS profile has one;
// profiles without it require none. ClientConfig takes the client
// certificate from its base.
func TestClientCertField(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  cipher.KeyType
		err   string
	}{
		{"ecdsa-p256", cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, ""},
		{"rsa-2048", cipher.KeyType{Alg: "RSA", Bits: 2048}, ""},
		{"RSA 4096", cipher.KeyType{Alg: "RSA", Bits: 4096}, ""},
		{"ecdsa", cipher.KeyType{}, "x.yaml:6: client_cert ECDSA needs a size or curve"},
		{"dsa-1024", cipher.KeyType{}, `x.yaml:6: client_cert: unknown certificate key "dsa-1024"`},
	} {
		ps, err := profiles.Parse("x.yaml", []byte(strings.Replace(clientCertDoc, "%s", tc.value, 1)))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("client_cert %s: error %v, want %q", tc.value, err, tc.err)
			}
		case err != nil:
			t.Errorf("client_cert %s: %v", tc.value, err)
		case ps[0].ClientCertKey() != tc.want:
			t.Errorf("client_cert %s: ClientCertKey %v, want %v", tc.value, ps[0].ClientCertKey(), tc.want)
		}
	}
	set := profiles.Builtin()
	for _, p := range set.All() {
		want := strings.HasSuffix(p.Name, "-mtls")
		if got := !p.ClientCertKey().IsZero(); got != want {
			t.Errorf("%s: requires a client certificate: %v, want %v", p.Name, got, want)
		}
	}
	p, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls")
	called := false
	base := &tls.Config{GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		called = true
		return &tls.Certificate{}, nil
	}}
	cfg := p.ClientConfig(base)
	if cfg.GetClientCertificate == nil {
		t.Fatal("ClientConfig dropped the base's GetClientCertificate")
	}
	_, _ = cfg.GetClientCertificate(nil)
	if !called {
		t.Error("ClientConfig's GetClientCertificate is not the base's")
	}
}
