package target_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestNamesOf: a pattern's names, numbered from 1; a pattern without
// exactly one %d, or no names, is refused.
func TestNamesOf(t *testing.T) {
	got, err := target.NamesOf("s%d.a.test", 3)
	if err != nil || !reflect.DeepEqual(got, []string{"s1.a.test", "s2.a.test", "s3.a.test"}) {
		t.Errorf("NamesOf = %q, %v", got, err)
	}
	for _, bad := range []struct {
		pattern string
		n       int
	}{{"plain.test", 3}, {"a%d%d.test", 3}, {"a%s.test", 3}, {"100%%-%d.test", 3}, {"a%d.test", 0}} {
		if _, err := target.NamesOf(bad.pattern, bad.n); err == nil {
			t.Errorf("NamesOf(%q, %d): no error", bad.pattern, bad.n)
		}
	}
}

// TestServeNames: each name gets its own certificate, for it alone, with
// the listener's one key; another name, or none, gets the default one;
// the counts per name and /stats' summary follow.
func TestServeNames(t *testing.T) {
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a.names.test", "b.names.test"}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	l := tg.Listeners[0]
	leafFor := func(sni string) *x509.Certificate {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", l.Addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true,
			MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0]
	}
	a, b, other, none := leafFor("A.names.test"), leafFor("b.names.test"), leafFor("c.names.test"), leafFor("")
	if !reflect.DeepEqual(a.DNSNames, names[:1]) || !reflect.DeepEqual(b.DNSNames, names[1:]) {
		t.Errorf("certificates for %q and %q, want one name each", a.DNSNames, b.DNSNames)
	}
	if !reflect.DeepEqual(a.PublicKey, b.PublicKey) || !reflect.DeepEqual(a.PublicKey, none.PublicKey) {
		t.Error("the names' certificates do not share the listener's key")
	}
	if !other.Equal(none) || other.VerifyHostname("c.names.test") == nil {
		t.Errorf("an unknown name got %q, want the default certificate, for none of the names", other.DNSNames)
	}
	per, unknown := l.NameCounts()
	if !reflect.DeepEqual(per, []int64{1, 1}) || unknown != 1 {
		t.Errorf("counts %v, %d unknown; want [1 1], 1 (no SNI is not counted)", per, unknown)
	}
	want := &target.NameStats{Count: 2, Handshakes: 2, HandshakesMin: 1, HandshakesMax: 1, Unknown: 1}
	if s := l.Stats().Names; !reflect.DeepEqual(s, want) {
		t.Errorf("/stats names %+v, want %+v", s, want)
	}
	_, err = target.Start(target.Config{Profiles: []*profiles.Profile{p}, Names: names, Cert: &tls.Certificate{}})
	if err == nil || !strings.Contains(err.Error(), "generated certificates") {
		t.Errorf("names with a given certificate: %v, want a refusal", err)
	}
}
