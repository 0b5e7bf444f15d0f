package cipher_test

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

func TestSuiteByName(t *testing.T) {
	tests := []struct {
		name    string
		id      uint16
		tls13   bool
		keyExch string
	}{
		// IANA name, exact case.
		{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 0xC023, false, "ECDHE-ECDSA"},
		// OpenSSL name of the reference study's first suite.
		{"ECDHE-ECDSA-AES128-SHA256", 0xC023, false, "ECDHE-ECDSA"},
		// OpenSSL name, lower case.
		{"ecdhe-ecdsa-aes128-sha256", 0xC023, false, "ECDHE-ECDSA"},
		// OpenSSL name, mixed case and surrounding blanks.
		{"  Ecdhe-Ecdsa-Aes128-Sha256\t", 0xC023, false, "ECDHE-ECDSA"},
		// Hex code point, upper-case digits.
		{"0xC023", 0xC023, false, "ECDHE-ECDSA"},
		// Hex code point, lower case and upper-case prefix.
		{"0Xc023", 0xC023, false, "ECDHE-ECDSA"},
		// RSA key exchange by OpenSSL name (no "RSA-" prefix in OpenSSL).
		{"AES128-GCM-SHA256", 0x009C, false, "RSA"},
		// RSA key exchange by IANA name, lower case.
		{"tls_rsa_with_aes_128_gcm_sha256", 0x009C, false, "RSA"},
		// Hex with leading zeros.
		{"0x009c", 0x009C, false, "RSA"},
		// ECDHE-RSA by OpenSSL name.
		{"ECDHE-RSA-AES128-GCM-SHA256", 0xC02F, false, "ECDHE-RSA"},
		// ChaCha20 suite whose OpenSSL name drops the hash.
		{"ECDHE-ECDSA-CHACHA20-POLY1305", 0xCCA9, false, "ECDHE-ECDSA"},
		// TLS 1.3 suite: OpenSSL uses the IANA name; no key exchange in the suite.
		{"TLS_AES_128_GCM_SHA256", 0x1301, true, ""},
		// TLS 1.3 suite, lower case.
		{"tls_chacha20_poly1305_sha256", 0x1303, true, ""},
		// TLS 1.3 suite by hex code point.
		{"0x1302", 0x1302, true, ""},
	}
	for _, tt := range tests {
		s, err := cipher.SuiteByName(tt.name)
		if err != nil {
			t.Errorf("SuiteByName(%q): %v", tt.name, err)
			continue
		}
		type view struct {
			ID      uint16
			TLS13   bool
			KeyExch string
		}
		if got, want := (view{s.ID, s.TLS13, s.KeyExch}), (view{tt.id, tt.tls13, tt.keyExch}); got != want {
			t.Errorf("SuiteByName(%q) = %+v, want %+v", tt.name, got, want)
		}
	}
}

func TestSuiteByNameUnknown(t *testing.T) {
	tests := []string{
		// A plausible but nonexistent OpenSSL name.
		"ECDHE-ECDSA-AES128-SHA999",
		// Empty input.
		"",
		// A valid code point crypto/tls does not implement.
		"0x1234",
		// Not hex.
		"0xZZZZ",
		// Too large for a 16-bit code point (0xC023 + a digit).
		"0x1C023",
		// Hex digits without the 0x prefix.
		"C023",
		// Prefix alone.
		"0x",
		// OpenSSL name of a suite crypto/tls does not implement.
		"DHE-RSA-AES128-GCM-SHA256",
	}
	for i, s := range rejects(t, "SuiteByName", cipher.SuiteByName, tests...) {
		if s != (cipher.Suite{}) {
			t.Errorf("SuiteByName(%q) returned non-zero suite %+v with an error", tests[i], s)
		}
	}
}

// rejects checks that parse refuses every input with an error that names
// it (as %q), and returns what parse returned with each error.
func rejects[T any](t *testing.T, fn string, parse func(string) (T, error), inputs ...string) []T {
	t.Helper()
	out := make([]T, len(inputs))
	for i, in := range inputs {
		v, err := parse(in)
		out[i] = v
		if err == nil {
			t.Errorf("%s(%q) = %+v, want an error", fn, in, v)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("%s(%q) error %q does not name the input", fn, in, err)
		}
	}
	return out
}

// TestSuitesCatalogue checks the catalogue against crypto/tls itself.
func TestSuitesCatalogue(t *testing.T) {
	all := cipher.Suites()
	if len(all) == 0 {
		t.Fatal("Suites() is empty")
	}
	if !slices.IsSortedFunc(all, func(a, b cipher.Suite) int { return int(a.ID) - int(b.ID) }) {
		t.Error("Suites() is not sorted by ID")
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID == all[i-1].ID {
			t.Errorf("suite %#04x listed twice", all[i].ID)
		}
	}
	check := func(cs *tls.CipherSuite, insecure bool) {
		t.Helper()
		s, ok := cipher.SuiteByID(cs.ID)
		if !ok {
			t.Errorf("SuiteByID(%#04x) (%s) not found", cs.ID, cs.Name)
			return
		}
		if got, want := s.IANA, cs.Name; got != want {
			t.Errorf("suite %#04x IANA = %q, want %q", cs.ID, got, want)
		}
		if got, want := s.TLS13, slices.Contains(cs.SupportedVersions, tls.VersionTLS13); got != want {
			t.Errorf("%s TLS13 = %v, want %v", cs.Name, got, want)
		}
		if got, want := s.Insecure, insecure; got != want {
			t.Errorf("%s Insecure = %v, want %v", cs.Name, got, want)
		}
	}
	for _, cs := range tls.CipherSuites() {
		check(cs, false)
	}
	for _, cs := range tls.InsecureCipherSuites() {
		check(cs, true)
	}
	if got, want := len(all), len(tls.CipherSuites())+len(tls.InsecureCipherSuites()); got != want {
		t.Errorf("len(Suites()) = %d, want %d (crypto/tls's secure + insecure)", got, want)
	}
	for _, s := range all {
		if s.OpenSSL == "" {
			t.Errorf("%s has no OpenSSL name", s.IANA)
			continue
		}
		if s.TLS13 && s.OpenSSL != s.IANA {
			t.Errorf("TLS 1.3 suite %s has OpenSSL name %q, want its IANA name", s.IANA, s.OpenSSL)
		}
		if s.TLS13 && s.KeyExch != "" {
			t.Errorf("TLS 1.3 suite %s has KeyExch %q, want none", s.IANA, s.KeyExch)
		}
		for _, name := range []string{s.IANA, s.OpenSSL, strings.ToLower(s.OpenSSL)} {
			got, err := cipher.SuiteByName(name)
			if err != nil {
				t.Errorf("SuiteByName(%q): %v", name, err)
			} else if got.ID != s.ID {
				t.Errorf("SuiteByName(%q).ID = %#04x, want %#04x", name, got.ID, s.ID)
			}
		}
		if got, want := s.String(), s.IANA; got != want {
			t.Errorf("Suite.String() = %q, want %q", got, want)
		}
	}

	// Suites returns a copy: changing it must not change the catalogue.
	all[0].IANA = "MUTATED"
	if cipher.Suites()[0].IANA == "MUTATED" {
		t.Error("Suites() exposes the catalogue's backing array")
	}
}

func TestKeyExch(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		// ECDSA-authenticated ephemeral ECDH.
		{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA"},
		// RSA-authenticated ephemeral ECDH.
		{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA"},
		// ECDHE-RSA ChaCha20, by OpenSSL name.
		{"ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA"},
		// Static RSA key exchange, CBC.
		{"AES256-SHA", "RSA"},
		// Static RSA key exchange, 3DES (insecure, still classified).
		{"DES-CBC3-SHA", "RSA"},
		// TLS 1.3: the suite does not name a key exchange.
		{"TLS_AES_256_GCM_SHA384", ""},
	}
	for _, tt := range tests {
		s, err := cipher.SuiteByName(tt.name)
		if err != nil {
			t.Errorf("SuiteByName(%q): %v", tt.name, err)
			continue
		}
		if got, want := s.KeyExch, tt.want; got != want {
			t.Errorf("%s KeyExch = %q, want %q", tt.name, got, want)
		}
	}
}

func TestSuiteNameAndOpenSSLName(t *testing.T) {
	tests := []struct {
		id      uint16
		iana    string
		openSSL string
	}{
		// Known TLS 1.2 suite: both names differ.
		{0xC023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
		// RSA key exchange.
		{0x009C, "TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
		// TLS 1.3 suite: OpenSSL name is the IANA name.
		{0x1301, "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"},
		// Unknown code point: hex, 4 digits, upper case.
		{0x00FF, "0x00FF", "0x00FF"},
		// Unknown code point with letters.
		{0xABCD, "0xABCD", "0xABCD"},
	}
	for _, tt := range tests {
		if got, want := cipher.SuiteName(tt.id), tt.iana; got != want {
			t.Errorf("SuiteName(%#04x) = %q, want %q", tt.id, got, want)
		}
		if got, want := cipher.OpenSSLName(tt.id), tt.openSSL; got != want {
			t.Errorf("OpenSSLName(%#04x) = %q, want %q", tt.id, got, want)
		}
	}
	if s, ok := cipher.SuiteByID(0x00FF); ok {
		t.Errorf("SuiteByID(0x00FF) = %v, true; want not found", s)
	}
	// Neighbours of the last and first suites are not found by the binary search.
	all := cipher.Suites()
	for _, id := range []uint16{0, all[0].ID - 1, all[len(all)-1].ID + 1, 0xFFFF} {
		if s, ok := cipher.SuiteByID(id); ok {
			t.Errorf("SuiteByID(%#04x) = %v, true; want not found", id, s)
		}
	}
}

func TestGroupByName(t *testing.T) {
	tests := []struct {
		name      string
		id        tls.CurveID
		canonical string
		tls13Only bool
	}{
		// Canonical crypto/tls-style name.
		{"P-256", tls.CurveP256, "P-256", false},
		// OpenSSL name of P-256.
		{"prime256v1", tls.CurveP256, "P-256", false},
		// SEC name of P-256.
		{"secp256r1", tls.CurveP256, "P-256", false},
		// SEC name, upper case.
		{"SECP256R1", tls.CurveP256, "P-256", false},
		// Short alias.
		{"p256", tls.CurveP256, "P-256", false},
		// Canonical P-384.
		{"P-384", tls.CurveP384, "P-384", false},
		// OpenSSL name of P-384, with blanks.
		{" secp384r1 ", tls.CurveP384, "P-384", false},
		// Lower-case canonical.
		{"p-384", tls.CurveP384, "P-384", false},
		// P-521 by OpenSSL name.
		{"secp521r1", tls.CurveP521, "P-521", false},
		// X25519 canonical.
		{"X25519", tls.X25519, "X25519", false},
		// X25519 by its older name.
		{"curve25519", tls.X25519, "X25519", false},
		// Hybrid post-quantum group: TLS 1.3 only.
		{"X25519MLKEM768", tls.X25519MLKEM768, "X25519MLKEM768", true},
		// Hybrid, lower case.
		{"x25519mlkem768", tls.X25519MLKEM768, "X25519MLKEM768", true},
		// The other hybrids are TLS 1.3 only too.
		{"SecP256r1MLKEM768", tls.SecP256r1MLKEM768, "SecP256r1MLKEM768", true},
		{"SecP384r1MLKEM1024", tls.SecP384r1MLKEM1024, "SecP384r1MLKEM1024", true},
	}
	for _, tt := range tests {
		g, err := cipher.GroupByName(tt.name)
		if err != nil {
			t.Errorf("GroupByName(%q): %v", tt.name, err)
			continue
		}
		type view struct {
			ID        tls.CurveID
			Name, Str string
			TLS13Only bool
		}
		if got, want := (view{g.ID, g.Name, g.String(), g.TLS13Only}), (view{tt.id, tt.canonical, tt.canonical, tt.tls13Only}); got != want {
			t.Errorf("GroupByName(%q) = %+v, want %+v", tt.name, got, want)
		}
	}
}

func TestGroupByNameUnknown(t *testing.T) {
	tests := []string{
		// A curve crypto/tls does not implement.
		"secp256k1",
		// Empty.
		"",
		// "none" is a profile keyword, not a group.
		"none",
		// A KEM without the hybrid.
		"MLKEM768",
	}
	rejects(t, "GroupByName", cipher.GroupByName, tests...)
	// The message lists the known groups.
	_, err := cipher.GroupByName("secp256k1")
	for _, g := range cipher.Groups() {
		if !strings.Contains(err.Error(), g.Name) {
			t.Errorf("GroupByName error %q does not list %s", err, g.Name)
		}
	}
}

func TestGroupName(t *testing.T) {
	tests := []struct {
		id   tls.CurveID
		want string
	}{
		// 0 is RSA key exchange: no group.
		{0, "none"},
		// Known groups use the canonical name.
		{tls.CurveP256, "P-256"},
		{tls.CurveP384, "P-384"},
		{tls.X25519, "X25519"},
		{tls.X25519MLKEM768, "X25519MLKEM768"},
		// Unknown code point: hex.
		{0x0099, "0x0099"},
	}
	for _, tt := range tests {
		if got, want := cipher.GroupName(tt.id), tt.want; got != want {
			t.Errorf("GroupName(%d) = %q, want %q", tt.id, got, want)
		}
	}
	if g, ok := cipher.GroupByID(0); ok {
		t.Errorf("GroupByID(0) = %v, true; want not found", g)
	}
}

func TestGroupsCatalogue(t *testing.T) {
	seen := map[tls.CurveID]bool{}
	names := map[string]bool{}
	for _, g := range cipher.Groups() {
		if seen[g.ID] {
			t.Errorf("group %v listed twice", g.ID)
		}
		seen[g.ID] = true
		// Every name a group answers to must lead back to it, and to no other.
		for _, n := range append([]string{g.Name, g.OpenSSL}, g.Aliases...) {
			key := strings.ToLower(n)
			if names[key] && !strings.EqualFold(n, g.Name) {
				t.Errorf("name %q is used by two groups", n)
			}
			names[key] = true
			got, err := cipher.GroupByName(n)
			if err != nil {
				t.Errorf("GroupByName(%q): %v", n, err)
			} else if got.ID != g.ID {
				t.Errorf("GroupByName(%q).ID = %v, want %v", n, got.ID, g.ID)
			}
		}
		if got, ok := cipher.GroupByID(g.ID); !ok || got.Name != g.Name {
			t.Errorf("GroupByID(%v) = %v, %v; want %s", g.ID, got, ok, g.Name)
		}
		if got, want := g.TLS13Only, strings.Contains(g.Name, "MLKEM"); got != want {
			t.Errorf("%s TLS13Only = %v, want %v (hybrid post-quantum groups only)", g.Name, got, want)
		}
	}
	for _, id := range []tls.CurveID{tls.CurveP256, tls.CurveP384, tls.CurveP521, tls.X25519, tls.X25519MLKEM768} {
		if !seen[id] {
			t.Errorf("Groups() lacks %v", id)
		}
	}
	gs := cipher.Groups()
	gs[0].Name = "MUTATED"
	if cipher.Groups()[0].Name == "MUTATED" {
		t.Error("Groups() exposes the catalogue's backing array")
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in    string
		want  uint16
		short string
	}{
		// Bare number.
		{"1.2", tls.VersionTLS12, "TLS1.2"},
		// Compact form used in profiles.
		{"TLS1.2", tls.VersionTLS12, "TLS1.2"},
		// crypto/tls's name, with a space.
		{"TLS 1.3", tls.VersionTLS13, "TLS1.3"},
		// OpenSSL's form.
		{"TLSv1.3", tls.VersionTLS13, "TLS1.3"},
		// OpenSSL's form, mixed case.
		{"Tlsv1.1", tls.VersionTLS11, "TLS1.1"},
		// Surrounding blanks.
		{"  tls1.0 ", tls.VersionTLS10, "TLS1.0"},
		// Bare number with v.
		{"v1.2", tls.VersionTLS12, "TLS1.2"},
	}
	for _, tt := range tests {
		v, err := cipher.ParseVersion(tt.in)
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", tt.in, err)
			continue
		}
		if got, want := uint16(v), tt.want; got != want {
			t.Errorf("ParseVersion(%q) = %#04x, want %#04x", tt.in, got, want)
		}
		if got, want := v.Short(), tt.short; got != want {
			t.Errorf("ParseVersion(%q).Short() = %q, want %q", tt.in, got, want)
		}
		if got, want := v.String(), tls.VersionName(tt.want); got != want {
			t.Errorf("ParseVersion(%q).String() = %q, want %q", tt.in, got, want)
		}
	}

	bad := []string{
		// SSL 3.0 is not a TLS version.
		"SSLv3",
		// No such version.
		"1.4",
		// Empty.
		"",
		// Trailing garbage.
		"TLS1.2.1",
		// Prefix only.
		"TLS",
		// Integer form of a version is not accepted.
		"771",
	}
	rejects(t, "ParseVersion", cipher.ParseVersion, bad...)
}

func TestParseKeyType(t *testing.T) {
	tests := []struct {
		in   string
		want cipher.KeyType
		str  string
	}{
		// Canonical ECDSA form.
		{"ECDSA P-256", cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "ECDSA P-256"},
		// Compact lower-case form.
		{"ecdsa-p384", cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}, "ECDSA P-384"},
		// Compact without separator.
		{"ecdsap521", cipher.KeyType{Alg: "ECDSA", Curve: "P-521"}, "ECDSA P-521"},
		// OpenSSL curve name.
		{"ECDSA prime256v1", cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "ECDSA P-256"},
		// SEC curve name, EC prefix.
		{"EC secp384r1", cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}, "ECDSA P-384"},
		// Compact RSA.
		{"rsa2048", cipher.KeyType{Alg: "RSA", Bits: 2048}, "RSA 2048"},
		// RSA with a space.
		{"RSA 3072", cipher.KeyType{Alg: "RSA", Bits: 3072}, "RSA 3072"},
		// RSA with a dash.
		{"rsa-4096", cipher.KeyType{Alg: "RSA", Bits: 4096}, "RSA 4096"},
		// Underscore separator.
		{"RSA_2048", cipher.KeyType{Alg: "RSA", Bits: 2048}, "RSA 2048"},
		// Ed25519, any case.
		{"ED25519", cipher.KeyType{Alg: "Ed25519"}, "Ed25519"},
		// Algorithm only: any curve.
		{"ECDSA", cipher.KeyType{Alg: "ECDSA"}, "ECDSA"},
		// Algorithm only, short.
		{"ec", cipher.KeyType{Alg: "ECDSA"}, "ECDSA"},
		// Algorithm only: any size.
		{" rsa ", cipher.KeyType{Alg: "RSA"}, "RSA"},
	}
	for _, tt := range tests {
		k, err := cipher.ParseKeyType(tt.in)
		if err != nil {
			t.Errorf("ParseKeyType(%q): %v", tt.in, err)
			continue
		}
		if got, want := k, tt.want; got != want {
			t.Errorf("ParseKeyType(%q) = %+v, want %+v", tt.in, got, want)
		}
		if got, want := k.String(), tt.str; got != want {
			t.Errorf("ParseKeyType(%q).String() = %q, want %q", tt.in, got, want)
		}
		// The canonical form parses back to the same key type.
		if back, err := cipher.ParseKeyType(k.String()); err != nil || back != k {
			t.Errorf("ParseKeyType(%q) = %+v, %v; want %+v", k.String(), back, err, k)
		}
	}

	bad := []string{
		// Too small to be offered.
		"RSA 1024",
		// Unknown curve.
		"ECDSA P-192",
		// Curve without algorithm.
		"P-256",
		// DSA is not supported.
		"DSA",
		// Empty.
		"",
		// Ed448 is not supported.
		"Ed448",
	}
	rejects(t, "ParseKeyType", cipher.ParseKeyType, bad...)
}

func TestKeyTypeMatches(t *testing.T) {
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	p384 := cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}
	rsa2048 := cipher.KeyType{Alg: "RSA", Bits: 2048}
	rsa3072 := cipher.KeyType{Alg: "RSA", Bits: 3072}
	anyECDSA := cipher.KeyType{Alg: "ECDSA"}
	anyRSA := cipher.KeyType{Alg: "RSA"}
	ed := cipher.KeyType{Alg: "Ed25519"}
	tests := []struct {
		want, got cipher.KeyType
		match     bool
	}{
		// Same curve.
		{p256, p256, true},
		// Different curve.
		{p256, p384, false},
		// ECDSA alone matches any curve.
		{anyECDSA, p256, true},
		{anyECDSA, p384, true},
		// ECDSA alone does not match RSA.
		{anyECDSA, rsa2048, false},
		// Same RSA size.
		{rsa2048, rsa2048, true},
		// Different RSA size.
		{rsa2048, rsa3072, false},
		// RSA alone matches any size.
		{anyRSA, rsa3072, true},
		// RSA alone does not match ECDSA.
		{anyRSA, p256, false},
		// A concrete expectation is not satisfied by an algorithm-only key.
		{p256, anyECDSA, false},
		// Ed25519.
		{ed, ed, true},
		{ed, p256, false},
	}
	for _, tt := range tests {
		if got, want := tt.want.Matches(tt.got), tt.match; got != want {
			t.Errorf("%v.Matches(%v) = %v, want %v", tt.want, tt.got, got, want)
		}
	}
}

func TestKeyTypeConcreteAndZero(t *testing.T) {
	tests := []struct {
		k        cipher.KeyType
		concrete bool
		zero     bool
	}{
		// Unset.
		{cipher.KeyType{}, false, true},
		// Algorithm only: cannot generate.
		{cipher.KeyType{Alg: "ECDSA"}, false, false},
		{cipher.KeyType{Alg: "RSA"}, false, false},
		// Sized.
		{cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}, true, false},
		{cipher.KeyType{Alg: "RSA", Bits: 2048}, true, false},
		// Ed25519 has one size.
		{cipher.KeyType{Alg: "Ed25519"}, true, false},
	}
	for _, tt := range tests {
		if got, want := tt.k.Concrete(), tt.concrete; got != want {
			t.Errorf("%+v.Concrete() = %v, want %v", tt.k, got, want)
		}
		if got, want := tt.k.IsZero(), tt.zero; got != want {
			t.Errorf("%+v.IsZero() = %v, want %v", tt.k, got, want)
		}
	}
}

func TestGenerateKeyErrors(t *testing.T) {
	tests := []cipher.KeyType{
		// ECDSA without a curve.
		{Alg: "ECDSA"},
		// Unknown curve.
		{Alg: "ECDSA", Curve: "P-192"},
		// RSA without a size.
		{Alg: "RSA"},
		// RSA too small.
		{Alg: "RSA", Bits: 1024},
		// Unknown algorithm.
		{Alg: "DSA"},
		// Unset.
		{},
	}
	for _, k := range tests {
		if key, err := cipher.GenerateKey(k); err == nil {
			t.Errorf("GenerateKey(%+v) = %T, want an error", k, key)
		}
		if ca, err := cipher.NewCA(k, "x", time.Hour); err == nil {
			t.Errorf("NewCA(%+v) = %v, want an error", k, ca.Cert.Subject)
		}
	}
}

func TestKeyTypeOf(t *testing.T) {
	tests := []cipher.KeyType{
		// The three ECDSA curves.
		{Alg: "ECDSA", Curve: "P-256"},
		{Alg: "ECDSA", Curve: "P-384"},
		{Alg: "ECDSA", Curve: "P-521"},
		// RSA reports its modulus size.
		{Alg: "RSA", Bits: 2048},
		// Ed25519 (a value type, not a pointer).
		{Alg: "Ed25519"},
	}
	for _, k := range tests {
		key, err := cipher.GenerateKey(k)
		if err != nil {
			t.Fatalf("GenerateKey(%v): %v", k, err)
		}
		got, ok := cipher.KeyTypeOf(key.Public())
		if !ok {
			t.Errorf("KeyTypeOf(%T) not known", key.Public())
			continue
		}
		if got != k {
			t.Errorf("KeyTypeOf(GenerateKey(%v)) = %+v, want %+v", k, got, k)
		}
		if !k.Matches(got) {
			t.Errorf("%v does not match its own generated key %v", k, got)
		}
	}

	// A key type the catalogue does not know.
	x, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, pub := range []crypto.PublicKey{x.PublicKey(), nil, "not a key"} {
		if got, ok := cipher.KeyTypeOf(pub); ok || !got.IsZero() {
			t.Errorf("KeyTypeOf(%T) = %+v, %v; want zero, false", pub, got, ok)
		}
	}
}

// newCA returns a CA of key type k valid for a day, failing the test on error.
func newCA(t *testing.T, k cipher.KeyType) *cipher.CA {
	t.Helper()
	ca, err := cipher.NewCA(k, "tlsbench test CA", 24*time.Hour)
	if err != nil {
		t.Fatalf("NewCA(%v): %v", k, err)
	}
	return ca
}

func TestNewCA(t *testing.T) {
	k := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	before := time.Now()
	ca := newCA(t, k)
	c := ca.Cert
	if !c.IsCA || !c.BasicConstraintsValid {
		t.Errorf("CA certificate: IsCA=%v BasicConstraintsValid=%v, want both", c.IsCA, c.BasicConstraintsValid)
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("CA KeyUsage %b lacks CertSign", c.KeyUsage)
	}
	if got, want := c.Subject.CommonName, "tlsbench test CA"; got != want {
		t.Errorf("CA CommonName = %q, want %q", got, want)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("CA is not self-signed: %v", err)
	}
	if got, ok := cipher.KeyTypeOf(c.PublicKey); !ok || got != k {
		t.Errorf("CA key = %v, want %v", got, k)
	}
	// Valid from about an hour ago for the validity asked (second precision).
	if c.NotBefore.After(before.Add(-time.Hour + time.Second)) {
		t.Errorf("CA NotBefore = %v, want about an hour before %v", c.NotBefore, before)
	}
	if d := c.NotAfter.Sub(before.Add(24 * time.Hour)); d < -time.Second || d > time.Minute {
		t.Errorf("CA NotAfter = %v, want about %v", c.NotAfter, before.Add(24*time.Hour))
	}

	// CertPEM is one CERTIFICATE block holding the CA.
	block, rest := pem.Decode(ca.CertPEM())
	if block == nil || block.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("CertPEM is not one CERTIFICATE block")
	}
	if !bytes.Equal(block.Bytes, c.Raw) {
		t.Error("CertPEM does not hold the CA certificate")
	}

	// Two CAs do not share serial numbers or keys.
	other := newCA(t, k)
	if c.SerialNumber.Cmp(other.Cert.SerialNumber) == 0 {
		t.Error("two CAs have the same serial number")
	}
	if c.SerialNumber.Sign() <= 0 {
		t.Errorf("serial number %v is not positive", c.SerialNumber)
	}
}

func TestLeaf(t *testing.T) {
	tests := []struct {
		ca, leaf cipher.KeyType
		slow     bool
	}{
		// The seed profiles' certificate.
		{cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, false},
		// A P-384 leaf from a P-256 CA.
		{cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}, false},
		// RSA 2048 leaf (RSA key exchange profile) from an ECDSA CA.
		{cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, cipher.KeyType{Alg: "RSA", Bits: 2048}, false},
		// RSA CA issuing an ECDSA leaf.
		{cipher.KeyType{Alg: "RSA", Bits: 2048}, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, false},
		// Ed25519 leaf.
		{cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, cipher.KeyType{Alg: "Ed25519"}, false},
		// RSA 3072: a few hundred ms under -race.
		{cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, cipher.KeyType{Alg: "RSA", Bits: 3072}, true},
	}
	for _, tt := range tests {
		t.Run(tt.ca.String()+"/"+tt.leaf.String(), func(t *testing.T) {
			if tt.slow && testing.Short() {
				t.Skip("slow key generation in -short mode")
			}
			t.Parallel()
			ca := newCA(t, tt.ca)
			cert, err := ca.Leaf(tt.leaf, []string{"localhost", "127.0.0.1", "::1"}, time.Hour)
			if err != nil {
				t.Fatalf("Leaf(%v): %v", tt.leaf, err)
			}
			checkLeaf(t, ca, cert, tt.leaf)
		})
	}
}

// checkLeaf checks a leaf issued by ca for localhost, 127.0.0.1 and ::1.
func checkLeaf(t *testing.T, ca *cipher.CA, cert tls.Certificate, k cipher.KeyType) {
	t.Helper()
	if got, want := len(cert.Certificate), 2; got != want {
		t.Fatalf("chain length = %d, want %d (leaf, CA)", got, want)
	}
	if !bytes.Equal(cert.Certificate[1], ca.Cert.Raw) {
		t.Error("chain[1] is not the CA certificate")
	}
	leaf := cert.Leaf
	if leaf == nil || !bytes.Equal(leaf.Raw, cert.Certificate[0]) {
		t.Fatal("Leaf is not the parsed chain[0]")
	}
	if got, ok := cipher.KeyTypeOf(leaf.PublicKey); !ok || got != k {
		t.Errorf("leaf key = %v, want %v", got, k)
	}
	if leaf.IsCA {
		t.Error("leaf is a CA")
	}
	if got, want := leaf.Subject.CommonName, "localhost"; got != want {
		t.Errorf("leaf CommonName = %q, want %q", got, want)
	}
	if got, want := leaf.DNSNames, []string{"localhost"}; !slices.Equal(got, want) {
		t.Errorf("leaf DNSNames = %q, want %q", got, want)
	}
	if got, want := len(leaf.IPAddresses), 2; got != want {
		t.Errorf("leaf has %d IP addresses, want %d", got, want)
	}
	// RSA key exchange encrypts to the leaf key: RSA leaves need
	// KeyEncipherment; other keys must not claim it.
	if got, want := leaf.KeyUsage&x509.KeyUsageKeyEncipherment != 0, k.Alg == "RSA"; got != want {
		t.Errorf("leaf KeyEncipherment = %v, want %v", got, want)
	}
	if leaf.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		t.Error("leaf lacks DigitalSignature")
	}
	if !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("leaf ExtKeyUsage = %v, want ServerAuth", leaf.ExtKeyUsage)
	}

	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: ca.Pool()}); err != nil {
			t.Errorf("Verify(%s): %v", host, err)
		}
	}
	// Other names and a pool without the CA are refused.
	var herr x509.HostnameError
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: ca.Pool()}); !errors.As(err, &herr) {
		t.Errorf("Verify(example.com) = %v, want a HostnameError", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: x509.NewCertPool()}); err == nil {
		t.Error("Verify with an empty pool succeeded")
	}

	// The PEM forms load back with crypto/tls.
	keyPEM, err := cipher.KeyPEM(cert.PrivateKey)
	if err != nil {
		t.Fatalf("KeyPEM: %v", err)
	}
	if block, _ := pem.Decode(keyPEM); block == nil || block.Type != "PRIVATE KEY" {
		t.Errorf("KeyPEM is not a PKCS #8 PRIVATE KEY block")
	}
	pair, err := tls.X509KeyPair(cipher.ChainPEM(cert), keyPEM)
	if err != nil {
		t.Fatalf("X509KeyPair(ChainPEM, KeyPEM): %v", err)
	}
	if got, want := len(pair.Certificate), len(cert.Certificate); got != want {
		t.Fatalf("round-tripped chain length = %d, want %d", got, want)
	}
	for i := range pair.Certificate {
		if !bytes.Equal(pair.Certificate[i], cert.Certificate[i]) {
			t.Errorf("round-tripped chain[%d] differs", i)
		}
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		t.Fatalf("round-tripped key %T is not a crypto.Signer", pair.PrivateKey)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if !signer.Public().(equaler).Equal(leaf.PublicKey) {
		t.Error("round-tripped key does not match the leaf")
	}
}

func TestLeafNoHosts(t *testing.T) {
	ca := newCA(t, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	cert, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cert.Leaf.Subject.CommonName, "tlsbench"; got != want {
		t.Errorf("CommonName = %q, want %q", got, want)
	}
	if len(cert.Leaf.DNSNames) != 0 || len(cert.Leaf.IPAddresses) != 0 {
		t.Errorf("leaf without hosts has SANs %v %v", cert.Leaf.DNSNames, cert.Leaf.IPAddresses)
	}
	if _, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA"}, []string{"localhost"}, time.Hour); err == nil {
		t.Error("Leaf with an algorithm-only key type succeeded")
	}
}

// TestPoolIsolation checks that a CA's pool trusts only that CA, and that
// every call returns a new pool.
func TestPoolIsolation(t *testing.T) {
	k := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	a, b := newCA(t, k), newCA(t, k)
	leafB, err := b.Leaf(k, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leafB.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: a.Pool()}); err == nil {
		t.Error("a leaf of CA b verifies against CA a's pool")
	}
	p1, p2 := a.Pool(), a.Pool()
	if p1 == p2 {
		t.Error("Pool() returned the same pool twice")
	}
	p1.AddCert(b.Cert)
	if _, err := leafB.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: a.Pool()}); err == nil {
		t.Error("changing one Pool() result changed later ones")
	}
}

func TestKeyPEMUnsupported(t *testing.T) {
	if _, err := cipher.KeyPEM("not a key"); err == nil {
		t.Error("KeyPEM(string) succeeded, want an error")
	}
}

func TestChainPEMEmpty(t *testing.T) {
	if got := cipher.ChainPEM(tls.Certificate{}); len(got) != 0 {
		t.Errorf("ChainPEM(empty) = %q, want nothing", got)
	}
}
