package profiles_test

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

const alpnDoc = `name: x
min_version: TLS1.3
max_version: TLS1.3
groups: [X25519]
expect: {version: TLS1.3%s}
%s`

func alpnProfile(t *testing.T, expect, alpn string) (*profiles.Profile, error) {
	t.Helper()
	ps, err := profiles.Parse("x.yaml", []byte(strings.Replace(strings.Replace(alpnDoc, "%s", expect, 1), "%s", alpn, 1)))
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// TestALPNField: alpn is a list of protocol IDs, expect.alpn one of them
// (the only one by default); bad values are one-line errors at their line.
func TestALPNField(t *testing.T) {
	for _, tc := range []struct{ expect, alpn, want, err string }{
		{"", "", "", ""},
		{"", "alpn: [http/1.1]\n", "http/1.1", ""},
		{", alpn: http/1.1", "alpn: [h2, http/1.1]\n", "http/1.1", ""},
		{"", "alpn: [h2, http/1.1]\n", "", "x.yaml:5: expect.alpn is required when alpn offers several protocols"},
		{", alpn: h2", "alpn: [http/1.1]\n", "", `x.yaml:5: expect.alpn "h2" is not offered`},
		{"", `alpn: [""]` + "\n", "", `x.yaml:6: alpn "": protocol IDs are 1 to 255 bytes`},
		{"", "alpn: [h2, h2]\n", "", `x.yaml:6: alpn "h2": protocol IDs are 1 to 255 bytes, each given once`},
		{"", "alpn: http/1.1\n", "", "x.yaml:6: "},
	} {
		p, err := alpnProfile(t, tc.expect, tc.alpn)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q %q: error %v, want one line with %q", tc.expect, tc.alpn, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q %q: %v", tc.expect, tc.alpn, err)
		case p.ExpectedALPN() != tc.want:
			t.Errorf("%q %q: ExpectedALPN %q, want %q", tc.expect, tc.alpn, p.ExpectedALPN(), tc.want)
		}
	}
}

// TestALPNHandshake: the profile's alpn is offered, the reference target
// announces the expected protocol, and a server that selects another
// protocol, or none, is a mismatch naming what it chose. Without alpn
// nothing is offered (the handshake is the one tlsbench always made).
func TestALPNHandshake(t *testing.T) {
	srvCert := leaf(t, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	one, err := alpnProfile(t, "", "alpn: [http/1.1]\n")
	if err != nil {
		t.Fatal(err)
	}
	two, err := alpnProfile(t, ", alpn: http/1.1", "alpn: [h2, http/1.1]\n")
	if err != nil {
		t.Fatal(err)
	}
	none, err := alpnProfile(t, "", "")
	if err != nil {
		t.Fatal(err)
	}
	server := func(protos ...string) *tls.Config {
		c := one.ServerConfig(srvCert)
		c.NextProtos = protos
		return c
	}
	for _, tc := range []struct {
		name    string
		p       *profiles.Profile
		server  *tls.Config
		got     string // the protocol of a mismatch; "" no error
		offered []string
	}{
		{"reference target", one, one.ServerConfig(srvCert), "", []string{"http/1.1"}},
		{"server prefers h2", two, server("h2", "http/1.1"), "h2", []string{"h2", "http/1.1"}},
		{"h2-only server", one, server("h2"), "none", []string{"http/1.1"}},
		{"no alpn", none, server("h2", "http/1.1"), "", nil},
	} {
		var offered []string
		srv := tc.server.Clone()
		srv.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
			offered = hi.SupportedProtos
			return nil, nil
		}
		r := handshake(t, tc.p.ClientConfig(localOpts(t)), srv)
		if strings.Join(offered, ",") != strings.Join(tc.offered, ",") {
			t.Errorf("%s: offered %q, want %q", tc.name, offered, tc.offered)
		}
		var me *profiles.MismatchError
		switch {
		case tc.got == "" && r.clientErr != nil:
			t.Errorf("%s: %v", tc.name, r.clientErr)
		case tc.got == "" && r.client.NegotiatedProtocol != tc.p.ExpectedALPN():
			t.Errorf("%s: negotiated %q, want %q", tc.name, r.client.NegotiatedProtocol, tc.p.ExpectedALPN())
		case tc.got != "" && (!errors.As(r.clientErr, &me) || me.Field != "alpn" || me.Got != tc.got):
			t.Errorf("%s: error %v, want an alpn mismatch naming %s", tc.name, r.clientErr, tc.got)
		}
	}
}

// TestClientConfigClones: the client configuration is a clone of its base,
// fields the profile does not set included, not a copy of chosen fields.
func TestClientConfigClones(t *testing.T) {
	now := func() time.Time { return time.Unix(1e9, 0) }
	base := &tls.Config{Time: now, NextProtos: []string{"x"}, ServerName: "localhost",
		ClientSessionCache: tls.NewLRUClientSessionCache(1)}
	p, err := alpnProfile(t, "", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.ClientConfig(base)
	if cfg.Time == nil || cfg.ServerName != "localhost" || len(cfg.NextProtos) != 1 || cfg.ClientSessionCache != nil ||
		!cfg.SessionTicketsDisabled {
		t.Errorf("ClientConfig(base): Time set %v, ServerName %q, NextProtos %q, cache %v, tickets off %v", cfg.Time != nil,
			cfg.ServerName, cfg.NextProtos, cfg.ClientSessionCache, cfg.SessionTicketsDisabled)
	}
	p, _ = alpnProfile(t, "", "alpn: [http/1.1]\n")
	if got := p.ClientConfig(base).NextProtos; len(got) != 1 || got[0] != "http/1.1" || base.NextProtos[0] != "x" {
		t.Errorf("the profile's alpn: NextProtos %q (base's %q)", got, base.NextProtos)
	}
}
