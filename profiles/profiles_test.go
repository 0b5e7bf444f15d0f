package profiles_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// The built-in profiles the tests refer to by name.
const (
	p384Name   = "ecdhe-ecdsa-aes128-sha256-p384"
	p256Name   = "ecdhe-ecdsa-aes128-sha256-p256"
	rsaKexName = "rsa2048-aes128-gcm-sha256"
	tls13Name  = "tls13-aes128-gcm-x25519"
	mlkemName  = "tls13-x25519mlkem768"
)

// builtin returns the named built-in profile.
func builtin(t *testing.T, name string) *profiles.Profile {
	t.Helper()
	return mustGet(t, profiles.Builtin(), name)
}

func mustGet(t *testing.T, set *profiles.Set, name string) *profiles.Profile {
	t.Helper()
	p, err := set.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testPKI is one CA and its leaves for "localhost", one per key type, made
// on first use and shared by every test of the package.
var testPKI struct {
	mu     sync.Mutex
	ca     *cipher.CA
	leaves map[cipher.KeyType]tls.Certificate
}

func testCA(t *testing.T) *cipher.CA {
	t.Helper()
	testPKI.mu.Lock()
	defer testPKI.mu.Unlock()
	if testPKI.ca == nil {
		ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "profiles test CA", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		testPKI.ca = ca
		testPKI.leaves = map[cipher.KeyType]tls.Certificate{}
	}
	return testPKI.ca
}

// leaf returns a certificate for localhost with a key of type k.
func leaf(t *testing.T, k cipher.KeyType) tls.Certificate {
	t.Helper()
	ca := testCA(t)
	testPKI.mu.Lock()
	defer testPKI.mu.Unlock()
	if c, ok := testPKI.leaves[k]; ok {
		return c
	}
	c, err := ca.Leaf(k, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	testPKI.leaves[k] = c
	return c
}

// localOpts verifies "localhost" against the test CA.
func localOpts(t *testing.T) *tls.Config {
	t.Helper()
	return &tls.Config{ServerName: "localhost", RootCAs: testCA(t).Pool()}
}

func mustKeyType(t *testing.T, s string) cipher.KeyType {
	t.Helper()
	k, err := cipher.ParseKeyType(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// peer returns the PeerCertificates of a connection that saw a leaf of
// key type k.
func peer(t *testing.T, k string) []*x509.Certificate {
	t.Helper()
	return []*x509.Certificate{leaf(t, mustKeyType(t, k)).Leaf}
}

func TestBuiltinCoversEmbeddedFiles(t *testing.T) {
	set := profiles.Builtin()
	names := set.Names()
	if got, want := names[:len(profiles.SeedProfiles)], profiles.SeedProfiles; !slices.Equal(got, want) {
		t.Errorf("Builtin().Names() starts with %q, want SeedProfiles %q", got, want)
	}
	if got, want := profiles.SeedProfiles, []string{p384Name, p256Name, rsaKexName}; !slices.Equal(got, want) {
		t.Errorf("SeedProfiles = %q, want the reference study's rows %q", got, want)
	}

	// The embed pattern is *.yaml in the package directory: the files on disk.
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.yaml in the package directory (%v)", err)
	}
	var fromFiles []string
	for _, f := range files {
		fromFiles = append(fromFiles, strings.TrimSuffix(f, ".yaml"))
	}
	// Sorted by name: Glob sorts "x-chain.yaml" before "x.yaml".
	slices.Sort(fromFiles)
	sorted := slices.Sorted(slices.Values(names))
	slices.Sort(fromFiles) // "a-mtls.yaml" comes before "a.yaml", "a" before "a-mtls"
	if !slices.Equal(sorted, fromFiles) {
		t.Errorf("built-in names %q, want one per embedded file %q", sorted, fromFiles)
	}

	for _, p := range set.All() {
		if got, want := p.Source, "builtin"; got != want {
			t.Errorf("%s: Source = %q, want %q", p.Name, got, want)
		}
		// Each file holds exactly the profile named after it.
		data, err := os.ReadFile(p.Name + ".yaml")
		if err != nil {
			t.Error(err)
			continue
		}
		ps, err := profiles.Parse(p.Name+".yaml", data)
		if err != nil {
			t.Errorf("%s.yaml: %v", p.Name, err)
			continue
		}
		if len(ps) != 1 || ps[0].Name != p.Name {
			t.Errorf("%s.yaml holds %d profiles, first %q; want one named after the file", p.Name, len(ps), ps[0].Name)
		}
		if p.Description == "" {
			t.Errorf("%s: no description", p.Name)
		}
	}

	// Every call returns a new set.
	if profiles.Builtin() == set {
		t.Error("Builtin() returned the same set twice")
	}
}

func TestBuiltinProfiles(t *testing.T) {
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	p384 := cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}
	p521 := cipher.KeyType{Alg: "ECDSA", Curve: "P-521"}
	rsa2048 := cipher.KeyType{Alg: "RSA", Bits: 2048}
	rsa4096 := cipher.KeyType{Alg: "RSA", Bits: 4096}
	tests := []struct {
		name       string
		min, max   uint16
		suites     []uint16
		groups     []tls.CurveID
		version    uint16
		suite      uint16 // 0: any
		pinned     bool
		group      tls.CurveID
		groupOK    bool
		certKey    cipher.KeyType
		server     cipher.KeyType
		suiteLabel string
		groupLabel string
	}{
		// Row 1: P-384 negotiated, P-256 offered for the certificate, any ECDSA leaf.
		{p384Name, tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC023}, []tls.CurveID{tls.CurveP384, tls.CurveP256},
			tls.VersionTLS12, 0xC023, true, tls.CurveP384, true, cipher.KeyType{Alg: "ECDSA"}, p256,
			"ECDHE-ECDSA-AES128-SHA256", "P-384 (secp384r1)"},
		// Row 2: P-256 everywhere.
		{p256Name, tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC023}, []tls.CurveID{tls.CurveP256},
			tls.VersionTLS12, 0xC023, true, tls.CurveP256, true, p256, p256,
			"ECDHE-ECDSA-AES128-SHA256", "P-256 (prime256v1)"},
		// Row 3: RSA key exchange: the expected group is "none" (ID 0).
		{rsaKexName, tls.VersionTLS12, tls.VersionTLS12, []uint16{0x009C}, []tls.CurveID{tls.CurveP256},
			tls.VersionTLS12, 0x009C, true, 0, true, rsa2048, rsa2048,
			"AES128-GCM-SHA256", "— (RSA key exchange)"},
		// ECDHE-RSA with GCM.
		{"ecdhe-rsa-aes128-gcm-sha256-p256", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC02F}, []tls.CurveID{tls.CurveP256},
			tls.VersionTLS12, 0xC02F, true, tls.CurveP256, true, rsa2048, rsa2048,
			"ECDHE-RSA-AES128-GCM-SHA256", "P-256 (prime256v1)"},
		// ECDHE-ECDSA with GCM.
		{"ecdhe-ecdsa-aes128-gcm-sha256-p256", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC02B}, []tls.CurveID{tls.CurveP256},
			tls.VersionTLS12, 0xC02B, true, tls.CurveP256, true, p256, p256,
			"ECDHE-ECDSA-AES128-GCM-SHA256", "P-256 (prime256v1)"},
		// TLS 1.3: the suite is observed, not pinned, and nothing is offered explicitly.
		{tls13Name, tls.VersionTLS13, tls.VersionTLS13, nil, []tls.CurveID{tls.X25519},
			tls.VersionTLS13, 0x1301, false, tls.X25519, true, p256, p256,
			"TLS_AES_128_GCM_SHA256 (observed)", "X25519"},
		// TLS 1.3 hybrid post-quantum group; any suite.
		{mlkemName, tls.VersionTLS13, tls.VersionTLS13, nil, []tls.CurveID{tls.X25519MLKEM768},
			tls.VersionTLS13, 0, false, tls.X25519MLKEM768, true, p256, p256,
			"(any TLS 1.3 suite, observed)", "X25519MLKEM768"},
		// RFC 9411's matrix: AES-256 with ECDSA on P-384, certificate and group alike.
		{"ecdhe-ecdsa-aes256-gcm-sha384-p384", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC02C},
			[]tls.CurveID{tls.CurveP384}, tls.VersionTLS12, 0xC02C, true, tls.CurveP384, true, p384, p384,
			"ECDHE-ECDSA-AES256-GCM-SHA384", "P-384 (secp384r1)"},
		// ...and on P-521.
		{"ecdhe-ecdsa-aes256-gcm-sha384-p521", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC02C},
			[]tls.CurveID{tls.CurveP521}, tls.VersionTLS12, 0xC02C, true, tls.CurveP521, true, p521, p521,
			"ECDHE-ECDSA-AES256-GCM-SHA384", "P-521 (secp521r1)"},
		// ECDHE-RSA with AES-256 and an RSA 4096 certificate.
		{"ecdhe-rsa-aes256-gcm-sha384-p256", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC030},
			[]tls.CurveID{tls.CurveP256}, tls.VersionTLS12, 0xC030, true, tls.CurveP256, true, rsa4096, rsa4096,
			"ECDHE-RSA-AES256-GCM-SHA384", "P-256 (prime256v1)"},
		// RSA key exchange with RSA 4096: no group.
		{"rsa4096-aes256-gcm-sha384", tls.VersionTLS12, tls.VersionTLS12, []uint16{0x009D}, []tls.CurveID{tls.CurveP256},
			tls.VersionTLS12, 0x009D, true, 0, true, rsa4096, rsa4096,
			"AES256-GCM-SHA384", "— (RSA key exchange)"},
		// Row 1 of the matrix with an intermediate CA (its depth: TestBuiltinChainDepths).
		{"ecdhe-ecdsa-aes128-gcm-sha256-p256-chain", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC02B},
			[]tls.CurveID{tls.CurveP256}, tls.VersionTLS12, 0xC02B, true, tls.CurveP256, true, p256, p256,
			"ECDHE-ECDSA-AES128-GCM-SHA256", "P-256 (prime256v1)"},
		// Mutual TLS: ECDHE-ECDSA with GCM and a client certificate (TestClientCertField).
		{"ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls", tls.VersionTLS12, tls.VersionTLS12, []uint16{0xC02B},
			[]tls.CurveID{tls.CurveP256}, tls.VersionTLS12, 0xC02B, true, tls.CurveP256, true, p256, p256,
			"ECDHE-ECDSA-AES128-GCM-SHA256", "P-256 (prime256v1)"},
	}
	set := profiles.Builtin()
	if got, want := len(set.Names()), len(tests); got != want {
		t.Errorf("%d built-in profiles, the table covers %d", got, want)
	}
	for _, tt := range tests {
		p, err := set.Get(tt.name)
		if err != nil {
			t.Error(err)
			continue
		}
		if got, want := uint16(p.MinTLS()), tt.min; got != want {
			t.Errorf("%s: MinTLS = %#04x, want %#04x", tt.name, got, want)
		}
		if got, want := uint16(p.MaxTLS()), tt.max; got != want {
			t.Errorf("%s: MaxTLS = %#04x, want %#04x", tt.name, got, want)
		}
		if got, want := suiteIDs(p.Suites()), tt.suites; !slices.Equal(got, want) {
			t.Errorf("%s: Suites = %#04x, want %#04x", tt.name, got, want)
		}
		if got, want := groupIDs(p.OfferedGroups()), tt.groups; !slices.Equal(got, want) {
			t.Errorf("%s: OfferedGroups = %v, want %v", tt.name, got, want)
		}
		if got, want := uint16(p.ExpectedVersion()), tt.version; got != want {
			t.Errorf("%s: ExpectedVersion = %#04x, want %#04x", tt.name, got, want)
		}
		s, ok := p.ExpectedSuite()
		if got, want := ok, tt.suite != 0; got != want {
			t.Errorf("%s: ExpectedSuite ok = %v, want %v", tt.name, got, want)
		}
		if got, want := s.ID, tt.suite; got != want {
			t.Errorf("%s: ExpectedSuite = %#04x, want %#04x", tt.name, got, want)
		}
		if got, want := p.SuitePinned(), tt.pinned; got != want {
			t.Errorf("%s: SuitePinned = %v, want %v", tt.name, got, want)
		}
		g, ok := p.ExpectedGroup()
		if got, want := ok, tt.groupOK; got != want {
			t.Errorf("%s: ExpectedGroup ok = %v, want %v", tt.name, got, want)
		}
		if got, want := g.ID, tt.group; got != want {
			t.Errorf("%s: ExpectedGroup = %v, want %v", tt.name, got, want)
		}
		if got, want := p.ExpectedCertKey(), tt.certKey; got != want {
			t.Errorf("%s: ExpectedCertKey = %v, want %v", tt.name, got, want)
		}
		if got, want := p.ServerCertKey(), tt.server; got != want {
			t.Errorf("%s: ServerCertKey = %v, want %v", tt.name, got, want)
		}
		if got, want := p.SuiteLabel(), tt.suiteLabel; got != want {
			t.Errorf("%s: SuiteLabel = %q, want %q", tt.name, got, want)
		}
		if got, want := p.GroupLabel(), tt.groupLabel; got != want {
			t.Errorf("%s: GroupLabel = %q, want %q", tt.name, got, want)
		}
		// The server's key always satisfies the expectation and can be generated.
		if !p.ServerCertKey().Concrete() {
			t.Errorf("%s: ServerCertKey %v cannot be generated", tt.name, p.ServerCertKey())
		}
		if k := p.ExpectedCertKey(); !k.IsZero() && !k.Matches(p.ServerCertKey()) {
			t.Errorf("%s: ServerCertKey %v does not satisfy ExpectedCertKey %v", tt.name, p.ServerCertKey(), k)
		}
	}
}

func suiteIDs(ss []cipher.Suite) []uint16 {
	var ids []uint16
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	return ids
}

func groupIDs(gs []cipher.Group) []tls.CurveID {
	var ids []tls.CurveID
	for _, g := range gs {
		ids = append(ids, g.ID)
	}
	return ids
}

// TestYAMLRoundTrip checks that YAML() is the profile's own document and
// parses back to the same profile.
func TestYAMLRoundTrip(t *testing.T) {
	for _, p := range profiles.Builtin().All() {
		ps, err := profiles.Parse("roundtrip.yaml", p.YAML())
		if err != nil {
			t.Errorf("%s: Parse(YAML()): %v", p.Name, err)
			continue
		}
		if len(ps) != 1 {
			t.Errorf("%s: YAML() holds %d profiles, want 1", p.Name, len(ps))
			continue
		}
		q := ps[0]
		if q.Name != p.Name || q.ExpectedVersion() != p.ExpectedVersion() || q.ServerCertKey() != p.ServerCertKey() ||
			!slices.Equal(suiteIDs(q.Suites()), suiteIDs(p.Suites())) || !slices.Equal(groupIDs(q.OfferedGroups()), groupIDs(p.OfferedGroups())) {
			t.Errorf("%s: YAML() parses to a different profile %+v", p.Name, q)
		}
	}
	// In a multi-document file each profile keeps only its own document.
	ps, err := profiles.Parse("multi.yaml", readFile(t, "testdata/good/multi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		y := string(p.YAML())
		if !strings.Contains(y, "name: "+p.Name) {
			t.Errorf("%s: YAML() lacks its name:\n%s", p.Name, y)
		}
		if strings.Count(y, "name:") != 1 {
			t.Errorf("%s: YAML() holds more than its own document:\n%s", p.Name, y)
		}
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// profileError asserts that err is a one-line *profiles.Error for file at
// line, whose message contains substr.
func profileError(t *testing.T, err error, file string, line int, substr string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want line %d %q", file, line, substr)
		return
	}
	var pe *profiles.Error
	if !errors.As(err, &pe) {
		t.Errorf("%s: error %T %q is not a *profiles.Error", file, err, err)
		return
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("%s: error is not one line: %q", file, msg)
	}
	if got, want := pe.File, file; got != want {
		t.Errorf("%s: Error.File = %q, want %q", file, got, want)
	}
	if got, want := pe.Line, line; got != want {
		t.Errorf("%s: Error.Line = %d, want %d (%s)", file, got, want, msg)
	}
	prefix := "profile " + file + ": "
	if line > 0 {
		prefix = "profile " + file + ":" + strconv.Itoa(line) + ": "
	}
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("%s: error %q does not start with %q", file, msg, prefix)
	}
	if !strings.Contains(msg, substr) {
		t.Errorf("%s: error %q does not contain %q", file, msg, substr)
	}
}

func TestBadProfiles(t *testing.T) {
	tests := []struct {
		file   string
		line   int
		substr string
	}{
		// Strict decoding: a typo of a top-level field.
		{"unknown-field.yaml", 7, "field cipher_suite is not a profile field"},
		// Strict decoding inside expect.
		{"unknown-expect-field.yaml", 10, "field curve is not an expect field"},
		// Strict decoding inside server.
		{"unknown-server-field.yaml", 11, "field key_file is not a server field"},
		// A suite crypto/tls does not know.
		{"unknown-suite.yaml", 5, `unknown cipher suite "ECDHE-ECDSA-AES128-SHA999"`},
		// A group crypto/tls does not know.
		{"unknown-group.yaml", 6, `unknown group "brainpoolP256r1"`},
		// Versions upside down: reported at min_version.
		{"min-above-max.yaml", 4, "min_version TLS1.3 is above max_version TLS1.2"},
		// No such version.
		{"bad-version.yaml", 4, `max_version: unknown TLS version "TLS1.4"`},
		// Expected group not offered.
		{"expect-group-not-offered.yaml", 10, "expect.group P-384 is not in groups"},
		// Expected suite not offered (block list).
		{"expect-suite-not-offered.yaml", 11, "expect.cipher_suite ECDHE-ECDSA-AES128-SHA256 is not in cipher_suites"},
		// TLS 1.3 suites cannot be pinned by crypto/tls: the message says so.
		{"tls13-suite-listed.yaml", 5, "crypto/tls cannot pin TLS 1.3 suites"},
		// A hybrid group in a TLS 1.2-only profile.
		{"tls13-group-tls12.yaml", 6, "X25519MLKEM768 exists only in TLS 1.3, but max_version is TLS1.2"},
		// An RSA certificate cannot serve an ECDHE-ECDSA suite.
		{"cert-key-suite.yaml", 10, "expect.cert_key: ECDHE-ECDSA-AES128-SHA256 needs an ECDSA certificate, not RSA 2048"},
		// An ECDSA server key cannot serve an ECDHE-RSA suite.
		{"server-key-suite.yaml", 11, "server.cert_key: ECDHE-RSA-AES128-GCM-SHA256 needs an RSA certificate, not ECDSA P-256"},
		// The reference target's key would fail the profile's own check.
		{"server-key-expect.yaml", 11, "server.cert_key ECDSA P-256 does not satisfy expect.cert_key ECDSA P-384"},
		// The reference target cannot generate a key without a curve.
		{"server-key-abstract.yaml", 10, "server.cert_key ECDSA needs a size or curve"},
		// Required fields: reported at the document when absent...
		{"missing-name.yaml", 2, "name is required"},
		{"missing-min-version.yaml", 2, "min_version is required"},
		// ...and at the field when present but empty.
		{"missing-max-version.yaml", 4, "max_version is required"},
		// TLS 1.2 offered without an explicit suite list.
		{"missing-cipher-suites.yaml", 2, "cipher_suites is required when TLS 1.2 or older is offered"},
		// No groups: crypto/tls's default would offer post-quantum groups.
		{"missing-groups.yaml", 2, "groups is required"},
		// expect present without version: reported inside expect.
		{"missing-expect-version.yaml", 8, "expect.version is required"},
		// expect.version outside the range (field is the second under expect).
		{"expect-version-outside.yaml", 9, "expect.version TLS1.3 is outside min_version..max_version"},
		// A TLS 1.3 suite cannot be negotiated in TLS 1.2.
		{"expect-suite-wrong-version.yaml", 9, "expect.cipher_suite TLS_AES_128_GCM_SHA256 cannot be negotiated in TLS1.2"},
		// "none" needs RSA key exchange.
		{"group-none-ecdhe.yaml", 9, "expect.group none (RSA key exchange) needs an RSA key-exchange expect.cipher_suite"},
		// RSA key exchange has no group.
		{"group-with-rsa-kex.yaml", 10, "uses RSA key exchange (no group): use none"},
		// One group under two names.
		{"duplicate-group.yaml", 6, "groups: P-256 is listed twice"},
		// Names become file and metric labels: no spaces.
		{"name-with-space.yaml", 4, `name "my profile" must not contain spaces or slashes`},
		// Wrong YAML type.
		{"wrong-type.yaml", 6, "cannot unmarshal !!str `P-256` into []string"},
		// A sequence document.
		{"not-a-mapping.yaml", 2, "cannot unmarshal !!seq into profiles.Profile"},
		// A null document.
		{"null-document.yaml", 3, "a profile is a mapping of fields"},
		// Nothing at all: no line to point at.
		{"empty.yaml", 0, "no profile in file"},
		// Only comments.
		{"comment-only.yaml", 0, "no profile in file"},
		// Later documents report lines of the file, not of the document.
		{"second-doc-scalar.yaml", 9, "cannot unmarshal !!str"},
		{"second-doc-unknown-field.yaml", 16, "field cipher is not an expect field"},
		{"third-doc-bad-group.yaml", 22, "expect.group P-256 is not in groups"},
		// A key given twice.
		{"duplicate-key.yaml", 5, `mapping key "name" already defined at line 2`},
		// YAML syntax: tabs cannot indent.
		{"tab-indent.yaml", 5, "found character that cannot start any token"},
		// Chain depths count from the leaf to the root inclusive: 2 at least...
		{"expect-chain-depth-one.yaml", 9, "expect.chain_depth 1: counts the certificates from the leaf to the root " +
			"inclusive, 2 (a leaf issued by the root) to 5"},
		{"chain-depth-negative.yaml", 9, "expect.chain_depth -3: counts the certificates"},
		// ...and MaxChainDepth at most.
		{"server-chain-depth-deep.yaml", 11, "server.chain_depth 9: counts the certificates"},
		// The reference target's chain would fail the profile's own check.
		{"server-chain-depth-expect.yaml", 11, "server.chain_depth 2 does not satisfy expect.chain_depth 3"},
		// A depth is a number.
		{"chain-depth-word.yaml", 10, "cannot unmarshal !!str `deep` into int"},
	}
	covered := map[string]bool{"block-list-unknown-suite.yaml": true} // see TestBlockListErrorLine
	for _, tt := range tests {
		covered[tt.file] = true
		file := filepath.Join("testdata", "bad", tt.file)

		// Through LoadFile: the error names the path given.
		var set profiles.Set
		profileError(t, set.LoadFile(file), file, tt.line, tt.substr)
		if n := len(set.Names()); n != 0 {
			t.Errorf("%s: %d profiles added by a failed LoadFile", tt.file, n)
		}

		// Through Parse: the error names the file argument.
		ps, err := profiles.Parse("x/"+tt.file, readFile(t, file))
		if ps != nil {
			t.Errorf("%s: Parse returned %d profiles with the error", tt.file, len(ps))
		}
		profileError(t, err, "x/"+tt.file, tt.line, tt.substr)
	}

	// Every fixture is in the table.
	all, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	for _, f := range all {
		if !covered[filepath.Base(f)] {
			t.Errorf("fixture %s is not tested", f)
		}
	}
}

// TestBlockListErrorLine: an unknown entry in a block-style list should be
// reported at its own line.
func TestBlockListErrorLine(t *testing.T) {
	file := filepath.Join("testdata", "bad", "block-list-unknown-suite.yaml")
	var set profiles.Set
	profileError(t, set.LoadFile(file), file, 7, `unknown cipher suite "ECDHE-ECDSA-AES128-SHA999"`)
}

// TestUnreachableExpectedGroup: a TLS 1.3-only group can never be negotiated
// when the expected version is TLS 1.2, so such a profile fails every
// connection and should be rejected when loaded.
func TestUnreachableExpectedGroup(t *testing.T) {
	doc := `name: unreachable
min_version: TLS1.2
max_version: TLS1.3
cipher_suites: [ECDHE-ECDSA-AES128-GCM-SHA256]
groups: [X25519MLKEM768, P-256]
expect:
  version: TLS1.2
  group: X25519MLKEM768
`
	_, err := profiles.Parse("unreachable.yaml", []byte(doc))
	profileError(t, err, "unreachable.yaml", 8, "X25519MLKEM768")
}

func TestLoadFileMultiDocument(t *testing.T) {
	set := profiles.Builtin()
	builtins := set.Names()
	file := filepath.Join("testdata", "good", "multi.yaml")
	if err := set.LoadFile(file); err != nil {
		t.Fatal(err)
	}
	want := append(builtins, "custom-tls12-two-suites", "custom-tls13-chacha", "custom-rsa-kex")
	if got := set.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q (built-ins, then the file's in order)", got, want)
	}

	two := mustGet(t, set, "custom-tls12-two-suites")
	if got, want := two.Source, file; got != want {
		t.Errorf("Source = %q, want %q", got, want)
	}
	// Two suites offered and none expected: any of them is accepted.
	if s, ok := two.ExpectedSuite(); ok {
		t.Errorf("ExpectedSuite = %v, want none (two offered, none expected)", s)
	}
	if got, want := two.SuiteLabel(), "(any)"; got != want {
		t.Errorf("SuiteLabel = %q, want %q", got, want)
	}
	// No cert_key and no single suite: the reference target serves ECDSA P-256.
	if got, want := two.ServerCertKey(), (cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}); got != want {
		t.Errorf("ServerCertKey = %v, want %v", got, want)
	}

	chacha := mustGet(t, set, "custom-tls13-chacha")
	if s, ok := chacha.ExpectedSuite(); !ok || s.ID != tls.TLS_CHACHA20_POLY1305_SHA256 {
		t.Errorf("ExpectedSuite = %v, %v; want TLS_CHACHA20_POLY1305_SHA256", s, ok)
	}
	if chacha.SuitePinned() {
		t.Error("a TLS 1.3 suite is reported as pinned")
	}
	if g, ok := chacha.ExpectedGroup(); ok {
		t.Errorf("ExpectedGroup = %v, want none expected", g)
	}
	if got, want := chacha.GroupLabel(), "(any)"; got != want {
		t.Errorf("GroupLabel = %q, want %q", got, want)
	}

	rsa := mustGet(t, set, "custom-rsa-kex")
	// The single offered suite is the expected one; RSA key exchange means an
	// RSA 2048 reference certificate and no group.
	if s, ok := rsa.ExpectedSuite(); !ok || s.ID != tls.TLS_RSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("ExpectedSuite = %v, %v; want the only suite offered", s, ok)
	}
	if g, ok := rsa.ExpectedGroup(); !ok || g.ID != 0 {
		t.Errorf("ExpectedGroup = %v, %v; want ID 0", g, ok)
	}
	if got, want := rsa.ServerCertKey(), (cipher.KeyType{Alg: "RSA", Bits: 2048}); got != want {
		t.Errorf("ServerCertKey = %v, want %v", got, want)
	}
}

func TestDuplicateNames(t *testing.T) {
	tests := []struct {
		file    string
		name    string
		builtin bool // the name is a built-in's, which must be kept
	}{
		// Two documents of one file share a name.
		{"dup-names.yaml", "twice", false},
		// A user profile reuses a built-in name.
		{"clash-builtin.yaml", p384Name, true},
	}
	for _, tt := range tests {
		set := profiles.Builtin()
		file := filepath.Join("testdata", tt.file)
		err := set.LoadFile(file)
		if err == nil {
			t.Errorf("LoadFile(%s) succeeded, want a duplicate-name error", tt.file)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `"`+tt.name+`"`) || !strings.Contains(msg, "already defined") || !strings.Contains(msg, file) {
			t.Errorf("LoadFile(%s) error %q does not name %q as already defined by %s", tt.file, msg, tt.name, file)
		}
		if tt.builtin {
			if got, want := mustGet(t, set, tt.name).Source, "builtin"; got != want {
				t.Errorf("after LoadFile(%s) %s comes from %q, want %q", tt.file, tt.name, got, want)
			}
		}
	}

	var set profiles.Set
	p := builtin(t, p256Name)
	if err := set.Add(p); err != nil {
		t.Fatal(err)
	}
	err := set.Add(p)
	if err == nil {
		t.Fatal("Add of the same name twice succeeded")
	}
	if !strings.Contains(err.Error(), p256Name) {
		t.Errorf("Add error %q does not name the profile", err)
	}
	if got, want := set.Names(), []string{p256Name}; !slices.Equal(got, want) {
		t.Errorf("Names() after a rejected Add = %q, want %q", got, want)
	}
}

// TestLoadFileAtomic: a LoadFile that fails should leave the set as it was.
func TestLoadFileAtomic(t *testing.T) {
	var set profiles.Set
	if err := set.LoadFile(filepath.Join("testdata", "dup-names.yaml")); err == nil {
		t.Fatal("LoadFile(dup-names.yaml) succeeded")
	}
	if got := set.Names(); len(got) != 0 {
		t.Errorf("after a failed LoadFile the set holds %q, want nothing", got)
	}
}

func TestLoadFileMissing(t *testing.T) {
	var set profiles.Set
	file := filepath.Join(t.TempDir(), "nope.yaml")
	err := set.LoadFile(file)
	if err == nil {
		t.Fatal("LoadFile of a missing file succeeded")
	}
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), file) {
		t.Errorf("LoadFile error %q: want a not-exist error naming the file", err)
	}
}

func TestGet(t *testing.T) {
	set := profiles.Builtin()
	p, err := set.Get(p384Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Name, p384Name; got != want {
		t.Errorf("Get(%q).Name = %q", want, got)
	}
	if all := set.All(); all[0] != p {
		t.Errorf("All()[0] = %s, want the same *Profile as Get", all[0].Name)
	}

	_, err = set.Get("no-such-profile")
	if err == nil {
		t.Fatal("Get of an unknown name succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, `"no-such-profile"`) {
		t.Errorf("Get error %q does not name the input", msg)
	}
	for _, n := range set.Names() {
		if !strings.Contains(msg, n) {
			t.Errorf("Get error %q does not list %s", msg, n)
		}
	}

	// Names returns a copy.
	names := set.Names()
	names[0] = "mutated"
	if set.Names()[0] == "mutated" {
		t.Error("Names() exposes the set's order")
	}

	// The zero Set is empty and usable.
	var empty profiles.Set
	if n := len(empty.Names()) + len(empty.All()); n != 0 {
		t.Errorf("zero Set has %d entries", n)
	}
	if _, err := empty.Get(p384Name); err == nil {
		t.Error("Get on the zero Set succeeded")
	}
}

// p384State is a completed TLS 1.2 connection as the p384 profile expects it.
func p384State(t *testing.T) tls.ConnectionState {
	t.Helper()
	return tls.ConnectionState{
		HandshakeComplete: true,
		Version:           tls.VersionTLS12,
		CipherSuite:       tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
		CurveID:           tls.CurveP384,
		PeerCertificates:  peer(t, "ECDSA P-256"),
	}
}

// checkVerify asserts that err is nil (field == ""), ErrResumed (field ==
// "resumed") or a *MismatchError with field, want and got.
func checkVerify(t *testing.T, what string, p *profiles.Profile, err error, field, want, got string) {
	t.Helper()
	switch field {
	case "":
		if err != nil {
			t.Errorf("%s: %v, want nil", what, err)
		}
		return
	case "resumed":
		if !errors.Is(err, profiles.ErrResumed) {
			t.Errorf("%s: %v, want ErrResumed", what, err)
		}
		return
	}
	var me *profiles.MismatchError
	if !errors.As(err, &me) {
		t.Errorf("%s: %v, want a *MismatchError", what, err)
		return
	}
	if me.Profile != p.Name || me.Field != field || me.Want != want || me.Got != got {
		t.Errorf("%s: %+v, want {Profile:%s Field:%s Want:%s Got:%s}", what, *me, p.Name, field, want, got)
	}
	for _, s := range []string{field, want, got, p.Name} {
		if !strings.Contains(me.Error(), s) {
			t.Errorf("%s: message %q lacks %q", what, me.Error(), s)
		}
	}
}

func TestVerify(t *testing.T) {
	type mod func(*tls.ConnectionState)
	// with returns a change of the p384 state to version, suite, curve and,
	// unless key is "", a leaf of that key type.
	with := func(version, suite uint16, curve tls.CurveID, key string) mod {
		return func(cs *tls.ConnectionState) {
			cs.Version, cs.CipherSuite, cs.CurveID = version, suite, curve
			if key != "" {
				cs.PeerCertificates = peer(t, key)
			}
		}
	}
	const (
		v12, v13 = tls.VersionTLS12, tls.VersionTLS13
		cbc      = tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256
		rsaGCM   = tls.TLS_RSA_WITH_AES_128_GCM_SHA256
		aes128   = tls.TLS_AES_128_GCM_SHA256
	)
	tests := []struct {
		profile string
		desc    string
		mod     mod
		field   string // "" no error, "resumed" ErrResumed
		want    string
		got     string
	}{
		// The expected state.
		{p384Name, "match", nil, "", "", ""},
		// Resumption is always an error.
		{p384Name, "resumed", func(cs *tls.ConnectionState) { cs.DidResume = true }, "resumed", "", ""},
		// Resumption is reported before any mismatch.
		{p384Name, "resumed and mismatched", func(cs *tls.ConnectionState) { cs.DidResume = true; cs.Version = v13 }, "resumed", "", ""},
		// Wrong version, reported before the suite.
		{p384Name, "version", with(v13, aes128, tls.CurveP384, ""), "version", "TLS1.2", "TLS1.3"},
		// Another suite crypto/tls knows.
		{p384Name, "suite", with(v12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.CurveP384, ""),
			"cipher_suite", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		// A suite crypto/tls does not know.
		{p384Name, "unknown suite", with(v12, 0x1234, tls.CurveP384, ""), "cipher_suite", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "0x1234"},
		// The offered P-256 was chosen instead of P-384.
		{p384Name, "group", with(v12, cbc, tls.CurveP256, ""), "group", "P-384", "P-256"},
		// No group at all.
		{p384Name, "no group", with(v12, cbc, 0, ""), "group", "P-384", "none (RSA key exchange)"},
		// Any ECDSA leaf is accepted by this profile.
		{p384Name, "ECDSA P-384 leaf", with(v12, cbc, tls.CurveP384, "ECDSA P-384"), "", "", ""},
		// But not an RSA one.
		{p384Name, "RSA leaf", with(v12, cbc, tls.CurveP384, "RSA 2048"), "cert_key", "ECDSA", "RSA 2048"},
		// Nor Ed25519.
		{p384Name, "Ed25519 leaf", with(v12, cbc, tls.CurveP384, "Ed25519"), "cert_key", "ECDSA", "Ed25519"},
		// No certificate at all.
		{p384Name, "no certificate", func(cs *tls.ConnectionState) { cs.PeerCertificates = nil }, "cert_key", "ECDSA", "no certificate"},

		// RSA key exchange: CurveID 0 is the expected value.
		{rsaKexName, "match", with(v12, rsaGCM, 0, "RSA 2048"), "", "", ""},
		// A group where none is expected.
		{rsaKexName, "group", with(v12, rsaGCM, tls.CurveP256, "RSA 2048"), "group", "none (RSA key exchange)", "P-256"},
		// The exact size is checked.
		{rsaKexName, "ECDSA leaf", with(v12, rsaGCM, 0, ""), "cert_key", "RSA 2048", "ECDSA P-256"},

		// TLS 1.3 with the observed suite.
		{tls13Name, "match", with(v13, aes128, tls.X25519, ""), "", "", ""},
		// Another TLS 1.3 suite: observed and refused.
		{tls13Name, "suite", with(v13, tls.TLS_AES_256_GCM_SHA384, tls.X25519, ""), "cipher_suite", "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"},
		// The curve of the leaf is checked when the profile names one.
		{tls13Name, "P-384 leaf", with(v13, aes128, tls.X25519, "ECDSA P-384"), "cert_key", "ECDSA P-256", "ECDSA P-384"},
		// TLS 1.2 where TLS 1.3 is expected.
		{tls13Name, "version", nil, "version", "TLS1.3", "TLS1.2"},
		// Any suite is accepted by the hybrid profile.
		{mlkemName, "any suite", with(v13, tls.TLS_CHACHA20_POLY1305_SHA256, tls.X25519MLKEM768, ""), "", "", ""},
		// Fallback to classical X25519.
		{mlkemName, "classical group", with(v13, aes128, tls.X25519, ""), "group", "X25519MLKEM768", "X25519"},
	}
	for _, tt := range tests {
		p := builtin(t, tt.profile)
		cs := p384State(t)
		if tt.mod != nil {
			tt.mod(&cs)
		}
		checkVerify(t, tt.profile+" "+tt.desc, p, p.Verify(cs), tt.field, tt.want, tt.got)
	}
}

func TestClientConfig(t *testing.T) {
	pool := x509.NewCertPool()
	for _, p := range profiles.Builtin().All() {
		cfg := p.ClientConfig(&tls.Config{ServerName: "localhost", RootCAs: pool})
		if got, want := cfg.MinVersion, uint16(p.MinTLS()); got != want {
			t.Errorf("%s: MinVersion = %#04x, want %#04x", p.Name, got, want)
		}
		if got, want := cfg.MaxVersion, uint16(p.MaxTLS()); got != want {
			t.Errorf("%s: MaxVersion = %#04x, want %#04x", p.Name, got, want)
		}
		if p.ExpectedVersion() == tls.VersionTLS12 && cfg.MaxVersion != tls.VersionTLS12 {
			t.Errorf("%s: MaxVersion = %#04x for a TLS 1.2 profile", p.Name, cfg.MaxVersion)
		}
		if got, want := cfg.CipherSuites, suiteIDs(p.Suites()); !slices.Equal(got, want) {
			t.Errorf("%s: CipherSuites = %#04x, want exactly %#04x", p.Name, got, want)
		}
		if got, want := cfg.CurvePreferences, groupIDs(p.OfferedGroups()); len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: CurvePreferences = %v, want exactly %v", p.Name, got, want)
		}
		if !cfg.SessionTicketsDisabled {
			t.Errorf("%s: SessionTicketsDisabled = false", p.Name)
		}
		if cfg.ClientSessionCache != nil {
			t.Errorf("%s: ClientSessionCache is set", p.Name)
		}
		if cfg.VerifyConnection == nil {
			t.Errorf("%s: VerifyConnection is nil", p.Name)
		}
		if cfg.ServerName != "localhost" || cfg.RootCAs != pool {
			t.Errorf("%s: options not passed through: %q %p", p.Name, cfg.ServerName, cfg.RootCAs)
		}
		// crypto/tls's own verification is replaced by VerifyConnection's.
		if !cfg.InsecureSkipVerify {
			t.Errorf("%s: InsecureSkipVerify = false; the chain is verified in VerifyConnection", p.Name)
		}

		// Each call builds a new configuration that the caller may change.
		if len(cfg.CipherSuites) > 0 {
			cfg.CipherSuites[0] = 0
		}
		cfg.CurvePreferences[0] = 0
		again := p.ClientConfig(&tls.Config{InsecureSkipVerify: true})
		if again == cfg {
			t.Errorf("%s: ClientConfig returned the same *tls.Config twice", p.Name)
		}
		if !slices.Equal(again.CipherSuites, suiteIDs(p.Suites())) || !slices.Equal(again.CurvePreferences, groupIDs(p.OfferedGroups())) {
			t.Errorf("%s: changing one config changed the next", p.Name)
		}
		if again.ServerName != "" || again.RootCAs != nil {
			t.Errorf("%s: options not passed through on the second call", p.Name)
		}
	}
}

// TestVerifyConnectionTLS12Group: in a TLS 1.2 full handshake crypto/tls
// calls VerifyConnection before ServerKeyExchange, with CurveID 0. The
// callback must not refuse for the group then, but Verify must.
func TestVerifyConnectionTLS12Group(t *testing.T) {
	p := builtin(t, p384Name)
	vc := p.ClientConfig(localOpts(t)).VerifyConnection
	tests := []struct {
		desc  string
		mod   func(*tls.ConnectionState)
		field string // expected from VerifyConnection; Verify always adds "group"
		want  string
		got   string
	}{
		// Only the group is unknown: accepted by the callback.
		{"group unknown yet", nil, "", "", ""},
		// Everything else is still checked by the callback.
		{"resumed", func(cs *tls.ConnectionState) { cs.DidResume = true }, "resumed", "", ""},
		{"suite", func(cs *tls.ConnectionState) { cs.CipherSuite = tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA },
			"cipher_suite", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"},
		{"cert key", func(cs *tls.ConnectionState) { cs.PeerCertificates = peer(t, "RSA 2048") }, "cert_key", "ECDSA", "RSA 2048"},
	}
	for _, tt := range tests {
		cs := p384State(t)
		cs.CurveID = 0
		if tt.mod != nil {
			tt.mod(&cs)
		}
		checkVerify(t, "VerifyConnection "+tt.desc, p, vc(cs), tt.field, tt.want, tt.got)
		if tt.field == "" {
			// Once the handshake is done, CurveID 0 is a mismatch.
			checkVerify(t, "Verify "+tt.desc, p, p.Verify(cs), "group", "P-384", "none (RSA key exchange)")
		}
	}

	// In TLS 1.3 the group is known when the certificate is: the callback
	// checks it.
	p13 := builtin(t, tls13Name)
	cs := p384State(t)
	cs.Version, cs.CipherSuite, cs.CurveID = tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256, tls.CurveP256
	checkVerify(t, "VerifyConnection TLS 1.3 group", p13, p13.ClientConfig(localOpts(t)).VerifyConnection(cs), "group", "X25519", "P-256")
}

// TestVerifyConnectionChain: ClientConfig turns off crypto/tls's chain
// verification and does it in VerifyConnection instead, so that callback
// must refuse everything crypto/tls would.
func TestVerifyConnectionChain(t *testing.T) {
	p := builtin(t, p256Name)
	otherCA, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "other CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := otherCA.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	good := peer(t, "ECDSA P-256")
	pool := testCA(t).Pool()
	tests := []struct {
		desc  string
		opts  *tls.Config
		certs []*x509.Certificate
		want  string // "" nil, "mismatch" *MismatchError, else a substring of a CertificateVerificationError
	}{
		// Trusted chain for the right name.
		{"good", &tls.Config{ServerName: "localhost", RootCAs: pool}, good, ""},
		// Another name.
		{"wrong name", &tls.Config{ServerName: "example.com", RootCAs: pool}, good, "example.com"},
		// No name: crypto/tls refuses this configuration, so must the callback.
		{"no name", &tls.Config{RootCAs: pool}, good, "either ServerName or InsecureSkipVerify must be specified"},
		// A CA the pool does not hold.
		{"untrusted", &tls.Config{ServerName: "localhost", RootCAs: pool}, []*x509.Certificate{foreign.Leaf}, "unknown authority"},
		// No certificate.
		{"none", &tls.Config{ServerName: "localhost", RootCAs: pool}, nil, "no certificate"},
		// InsecureSkipVerify: an untrusted chain and no name are accepted...
		{"insecure", &tls.Config{InsecureSkipVerify: true}, []*x509.Certificate{foreign.Leaf}, ""},
		// ...but the profile's own checks still run.
		{"insecure cert key", &tls.Config{InsecureSkipVerify: true}, peer(t, "RSA 2048"), "mismatch"},
	}
	for _, tt := range tests {
		cs := tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, PeerCertificates: tt.certs}
		vc := p.ClientConfig(tt.opts).VerifyConnection
		err := vc(cs)
		var cve *tls.CertificateVerificationError
		var me *profiles.MismatchError
		switch {
		case tt.want == "":
			if err != nil {
				t.Errorf("%s: %v, want nil", tt.desc, err)
			}
		case tt.want == "mismatch":
			if !errors.As(err, &me) {
				t.Errorf("%s: %v, want a *MismatchError", tt.desc, err)
			}
		case !errors.As(err, &cve):
			t.Errorf("%s: %v, want a *tls.CertificateVerificationError", tt.desc, err)
		case !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: %q, want it to contain %q", tt.desc, err, tt.want)
		}
		// A second call with the same leaf gives the same answer (cached or not).
		if err2 := vc(cs); (err == nil) != (err2 == nil) {
			t.Errorf("%s: second call %v, first %v", tt.desc, err2, err)
		}
	}

	// One config verifies a good leaf, then still refuses a foreign one.
	vc := p.ClientConfig(localOpts(t)).VerifyConnection
	cs := tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, PeerCertificates: good}
	if err := vc(cs); err != nil {
		t.Fatalf("good leaf: %v", err)
	}
	cs.PeerCertificates = []*x509.Certificate{foreign.Leaf}
	if err := vc(cs); err == nil {
		t.Error("a foreign leaf is accepted after a good one was verified")
	}
	// A resumed session is refused as such, before any chain check.
	cs.PeerCertificates, cs.DidResume = nil, true
	if err := vc(cs); !errors.Is(err, profiles.ErrResumed) {
		t.Errorf("resumed: %v, want ErrResumed", err)
	}
}

func TestServerConfig(t *testing.T) {
	tests := []struct {
		profile string
		curves  []tls.CurveID
	}{
		// Only the expected group, although P-256 is offered too.
		{p384Name, []tls.CurveID{tls.CurveP384}},
		// RSA key exchange: no group is expected, the offer is served.
		{rsaKexName, []tls.CurveID{tls.CurveP256}},
		// TLS 1.3 groups.
		{tls13Name, []tls.CurveID{tls.X25519}},
		{mlkemName, []tls.CurveID{tls.X25519MLKEM768}},
	}
	for _, tt := range tests {
		p := builtin(t, tt.profile)
		cert := leaf(t, p.ServerCertKey())
		cfg := p.ServerConfig(cert)
		if got, want := cfg.CurvePreferences, tt.curves; !slices.Equal(got, want) {
			t.Errorf("%s: CurvePreferences = %v, want %v", tt.profile, got, want)
		}
		if got, want := cfg.CipherSuites, suiteIDs(p.Suites()); !slices.Equal(got, want) {
			t.Errorf("%s: CipherSuites = %#04x, want %#04x", tt.profile, got, want)
		}
		if cfg.MinVersion != uint16(p.MinTLS()) || cfg.MaxVersion != uint16(p.MaxTLS()) {
			t.Errorf("%s: versions %#04x..%#04x, want %v..%v", tt.profile, cfg.MinVersion, cfg.MaxVersion, p.MinTLS(), p.MaxTLS())
		}
		if len(cfg.Certificates) != 1 || cfg.Certificates[0].Leaf != cert.Leaf {
			t.Errorf("%s: Certificates is not exactly the one given", tt.profile)
		}
		if !cfg.SessionTicketsDisabled {
			t.Errorf("%s: SessionTicketsDisabled = false", tt.profile)
		}
	}
}

type handshakeResult struct {
	client, server       tls.ConnectionState
	clientErr, serverErr error
}

// handshake runs a client and a server handshake over an in-memory pipe.
func handshake(t *testing.T, client, server *tls.Config) handshakeResult {
	t.Helper()
	c, s := net.Pipe()
	deadline := time.Now().Add(20 * time.Second)
	c.SetDeadline(deadline)
	s.SetDeadline(deadline)
	var r handshakeResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv := tls.Server(s, server)
		r.serverErr = srv.Handshake()
		r.server = srv.ConnectionState()
		s.Close()
	}()
	cli := tls.Client(c, client)
	r.clientErr = cli.Handshake()
	r.client = cli.ConnectionState()
	c.Close()
	<-done
	return r
}

// TestHandshake runs each profile's client configuration against its own
// server configuration, in the shape of crypto/tls's testHandshake.
func TestHandshake(t *testing.T) {
	tests := []struct {
		profile string
		version uint16
		suite   uint16
		curve   tls.CurveID
	}{
		// P-384 negotiated, P-256 offered too (for the certificate).
		{p384Name, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, tls.CurveP384},
		// RSA key exchange: no group.
		{rsaKexName, tls.VersionTLS12, tls.TLS_RSA_WITH_AES_128_GCM_SHA256, 0},
		// TLS 1.3 with X25519.
		{tls13Name, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256, tls.X25519},
		// TLS 1.3 hybrid post-quantum.
		{mlkemName, tls.VersionTLS13, 0, tls.X25519MLKEM768},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			p := builtin(t, tt.profile)
			cfgC := p.ClientConfig(localOpts(t))
			cfgS := p.ServerConfig(leaf(t, p.ServerCertKey()))
			r := handshake(t, cfgC, cfgS)
			if r.clientErr != nil || r.serverErr != nil {
				t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
			}
			for side, cs := range map[string]tls.ConnectionState{"client": r.client, "server": r.server} {
				if got, want := cs.Version, tt.version; got != want {
					t.Errorf("%s: Version = %#04x, want %#04x", side, got, want)
				}
				if want := tt.suite; want != 0 && cs.CipherSuite != want {
					t.Errorf("%s: CipherSuite = %s, want %s", side, tls.CipherSuiteName(cs.CipherSuite), tls.CipherSuiteName(want))
				}
				if got, want := cs.CurveID, tt.curve; got != want {
					t.Errorf("%s: CurveID = %v, want %v", side, got, want)
				}
				if cs.DidResume {
					t.Errorf("%s: DidResume", side)
				}
				if !cs.HandshakeComplete {
					t.Errorf("%s: handshake not complete", side)
				}
			}
			if r.client.CipherSuite != r.server.CipherSuite {
				t.Errorf("client and server disagree on the suite: %#04x vs %#04x", r.client.CipherSuite, r.server.CipherSuite)
			}
			if err := p.Verify(r.client); err != nil {
				t.Errorf("Verify(client state): %v", err)
			}
		})
	}
}

// TestHandshakeGroupMismatch: a server that only does P-256 passes the
// p384 profile's VerifyConnection (TLS 1.2: the group is not known yet), and
// Verify catches it after the handshake.
func TestHandshakeGroupMismatch(t *testing.T) {
	p := builtin(t, p384Name)
	other := builtin(t, p256Name)
	r := handshake(t,
		p.ClientConfig(localOpts(t)),
		other.ServerConfig(leaf(t, other.ServerCertKey())))
	if r.clientErr != nil || r.serverErr != nil {
		t.Fatalf("handshake: client %v, server %v", r.clientErr, r.serverErr)
	}
	if got, want := r.client.CurveID, tls.CurveP256; got != want {
		t.Fatalf("CurveID = %v, want %v", got, want)
	}
	checkVerify(t, "Verify", p, p.Verify(r.client), "group", "P-384", "P-256")
}

// TestHandshakeCertKeyMismatch: VerifyConnection refuses a wrong leaf during
// the handshake, and the client's error is the *MismatchError.
func TestHandshakeCertKeyMismatch(t *testing.T) {
	p := builtin(t, tls13Name)
	r := handshake(t,
		p.ClientConfig(localOpts(t)),
		p.ServerConfig(leaf(t, cipher.KeyType{Alg: "ECDSA", Curve: "P-384"})))
	if r.clientErr == nil {
		t.Fatal("handshake with a P-384 leaf succeeded for a profile expecting ECDSA P-256")
	}
	checkVerify(t, "client handshake", p, r.clientErr, "cert_key", "ECDSA P-256", "ECDSA P-384")
	if r.serverErr == nil {
		t.Error("server handshake succeeded although the client refused")
	}
}

// TestSeedProfilesAliasing: appending to SeedProfiles must not change the
// built-in list.
func TestSeedProfilesAliasing(t *testing.T) {
	before := profiles.Builtin().Names()
	_ = append(profiles.SeedProfiles, "user-profile")
	if got := profiles.Builtin().Names(); !slices.Equal(got, before) {
		t.Errorf("after append(SeedProfiles, …) Builtin() names %q, before %q", got, before)
	}
}
