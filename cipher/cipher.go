// Package cipher is the catalogue of what a TLS client can offer and a server
// can negotiate: protocol versions, cipher suites (by IANA and OpenSSL name),
// key-exchange groups and certificate key types. It also generates
// certificate authorities and leaf certificates in memory.
//
// Everything here is immutable data and pure functions; it is safe for
// concurrent use.
package cipher

import (
	"crypto/tls"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Version is a TLS protocol version as used by crypto/tls.
type Version uint16

// String returns the name crypto/tls uses ("TLS 1.2").
func (v Version) String() string { return tls.VersionName(uint16(v)) }

// Short returns the compact form used in profiles and tables ("TLS1.2").
func (v Version) Short() string { return strings.ReplaceAll(v.String(), " ", "") }

// ParseVersion accepts "1.2", "TLS1.2", "TLS 1.2", "TLSv1.2" (any case).
func ParseVersion(s string) (Version, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	n = strings.TrimPrefix(n, "tls")
	n = strings.TrimPrefix(strings.TrimSpace(n), "v")
	if v, ok := versions[n]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("unknown TLS version %q (known: TLS1.0, TLS1.1, TLS1.2, TLS1.3)", s)
}

var versions = map[string]Version{"1.0": tls.VersionTLS10, "1.1": tls.VersionTLS11, "1.2": tls.VersionTLS12,
	"1.3": tls.VersionTLS13}

// Suite is a cipher suite that crypto/tls implements.
type Suite struct {
	ID       uint16
	IANA     string // e.g. TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256
	OpenSSL  string // e.g. ECDHE-ECDSA-AES128-SHA256
	TLS13    bool   // a TLS 1.3 suite (cannot be pinned by a crypto/tls client)
	Insecure bool   // listed by tls.InsecureCipherSuites
	KeyExch  string // "ECDHE-ECDSA", "ECDHE-RSA", "RSA", or "" for TLS 1.3
}

// String returns the IANA name.
func (s Suite) String() string { return s.IANA }

// openSSLNames maps IANA names to OpenSSL names. TLS 1.3 suites keep their
// IANA name in OpenSSL.
var openSSLNames = map[string]string{
	"TLS_RSA_WITH_RC4_128_SHA":                      "RC4-SHA",
	"TLS_RSA_WITH_3DES_EDE_CBC_SHA":                 "DES-CBC3-SHA",
	"TLS_RSA_WITH_AES_128_CBC_SHA":                  "AES128-SHA",
	"TLS_RSA_WITH_AES_256_CBC_SHA":                  "AES256-SHA",
	"TLS_RSA_WITH_AES_128_CBC_SHA256":               "AES128-SHA256",
	"TLS_RSA_WITH_AES_128_GCM_SHA256":               "AES128-GCM-SHA256",
	"TLS_RSA_WITH_AES_256_GCM_SHA384":               "AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA":              "ECDHE-ECDSA-RC4-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_RC4_128_SHA":                "ECDHE-RSA-RC4-SHA",
	"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA":           "ECDHE-RSA-DES-CBC3-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256":       "ECDHE-ECDSA-AES128-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256":         "ECDHE-RSA-AES128-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}

var (
	suites     []Suite          // sorted by ID
	suiteIndex map[string]Suite // lower-case IANA, OpenSSL and legacy names
)

func init() {
	suiteIndex = make(map[string]Suite)
	add := func(cs *tls.CipherSuite, insecure bool) {
		s := Suite{ID: cs.ID, IANA: cs.Name, Insecure: insecure}
		s.TLS13 = slices.Contains(cs.SupportedVersions, tls.VersionTLS13)
		s.OpenSSL = openSSLNames[cs.Name]
		if s.TLS13 {
			s.OpenSSL = cs.Name
		}
		switch {
		case s.TLS13:
		case strings.HasPrefix(cs.Name, "TLS_ECDHE_ECDSA_"):
			s.KeyExch = "ECDHE-ECDSA"
		case strings.HasPrefix(cs.Name, "TLS_ECDHE_RSA_"):
			s.KeyExch = "ECDHE-RSA"
		case strings.HasPrefix(cs.Name, "TLS_RSA_"):
			s.KeyExch = "RSA"
		}
		suites = append(suites, s)
		suiteIndex[strings.ToLower(s.IANA)] = s
		if s.OpenSSL != "" {
			suiteIndex[strings.ToLower(s.OpenSSL)] = s
		}
	}
	for _, cs := range tls.CipherSuites() {
		add(cs, false)
	}
	for _, cs := range tls.InsecureCipherSuites() {
		add(cs, true)
	}
	sort.Slice(suites, func(i, j int) bool { return suites[i].ID < suites[j].ID })
}

// Suites returns every suite crypto/tls implements, ordered by ID.
func Suites() []Suite { return append([]Suite(nil), suites...) }

// SuiteByName finds a suite by IANA name, OpenSSL name or hex code point
// ("0xC023"), case-insensitively.
func SuiteByName(name string) (Suite, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if s, ok := suiteIndex[n]; ok {
		return s, nil
	}
	if strings.HasPrefix(n, "0x") {
		if id, err := strconv.ParseUint(n[2:], 16, 16); err == nil {
			if s, ok := SuiteByID(uint16(id)); ok {
				return s, nil
			}
		}
	}
	return Suite{}, &UnknownSuiteError{Name: name}
}

// UnknownSuiteError is SuiteByName's error: no suite is called Name.
type UnknownSuiteError struct{ Name string }

func (e *UnknownSuiteError) Error() string {
	return fmt.Sprintf("unknown cipher suite %q (IANA or OpenSSL name, e.g. ECDHE-ECDSA-AES128-SHA256)", e.Name)
}

// SuiteByID finds a suite by its code point.
func SuiteByID(id uint16) (Suite, bool) {
	i := sort.Search(len(suites), func(i int) bool { return suites[i].ID >= id })
	if i < len(suites) && suites[i].ID == id {
		return suites[i], true
	}
	return Suite{}, false
}

// SuiteName returns the IANA name of id, or its hex code point if unknown.
func SuiteName(id uint16) string {
	if s, ok := SuiteByID(id); ok {
		return s.IANA
	}
	return fmt.Sprintf("0x%04X", id)
}

// OpenSSLName returns the OpenSSL name of id, or its IANA name if OpenSSL has
// none we know.
func OpenSSLName(id uint16) string {
	if s, ok := SuiteByID(id); ok && s.OpenSSL != "" {
		return s.OpenSSL
	}
	return SuiteName(id)
}

// Group is a key-exchange group ("curve" in crypto/tls).
type Group struct {
	ID        tls.CurveID
	Name      string   // canonical name: P-256, P-384, P-521, X25519, X25519MLKEM768, …
	OpenSSL   string   // OpenSSL/IANA name: prime256v1, secp384r1, x25519, X25519MLKEM768
	Aliases   []string // other accepted names
	TLS13Only bool     // hybrid post-quantum groups exist only in TLS 1.3
}

// String returns the canonical name.
func (g Group) String() string { return g.Name }

var groups = []Group{
	{ID: tls.CurveP256, Name: "P-256", OpenSSL: "prime256v1", Aliases: []string{"secp256r1", "p256"}},
	{ID: tls.CurveP384, Name: "P-384", OpenSSL: "secp384r1", Aliases: []string{"p384"}},
	{ID: tls.CurveP521, Name: "P-521", OpenSSL: "secp521r1", Aliases: []string{"p521"}},
	{ID: tls.X25519, Name: "X25519", OpenSSL: "x25519", Aliases: []string{"curve25519"}},
	{ID: tls.X25519MLKEM768, Name: "X25519MLKEM768", OpenSSL: "X25519MLKEM768", TLS13Only: true},
	{ID: tls.SecP256r1MLKEM768, Name: "SecP256r1MLKEM768", OpenSSL: "SecP256r1MLKEM768", TLS13Only: true},
	{ID: tls.SecP384r1MLKEM1024, Name: "SecP384r1MLKEM1024", OpenSSL: "SecP384r1MLKEM1024", TLS13Only: true},
}

// Groups returns the groups crypto/tls implements.
func Groups() []Group { return append([]Group(nil), groups...) }

// GroupByName accepts the canonical, OpenSSL or alias name, case-insensitively.
func GroupByName(name string) (Group, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, g := range groups {
		if n == strings.ToLower(g.Name) || n == strings.ToLower(g.OpenSSL) || slices.Contains(g.Aliases, n) {
			return g, nil
		}
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return Group{}, fmt.Errorf("unknown group %q (known: %s)", name, strings.Join(names, ", "))
}

// GroupByID finds a group by its code point.
func GroupByID(id tls.CurveID) (Group, bool) {
	for _, g := range groups {
		if g.ID == id {
			return g, true
		}
	}
	return Group{}, false
}

// GroupName returns the canonical name of id; "none" for 0 (RSA key
// exchange), or the numeric code point if unknown.
func GroupName(id tls.CurveID) string {
	if id == 0 {
		return "none"
	}
	if g, ok := GroupByID(id); ok {
		return g.Name
	}
	return fmt.Sprintf("0x%04X", uint16(id))
}
