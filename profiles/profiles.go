// Package profiles defines cipher profiles: what a client offers (TLS
// versions, cipher suites, key-exchange groups) and what it must find
// negotiated on every connection (version, suite, group, certificate key, and
// never a resumed session). Built-in profiles are YAML files embedded in the
// binary; users add their own with LoadFile.
//
// A Profile is immutable once loaded and safe for concurrent use; the
// *tls.Config values it builds are new on every call and owned by the caller.
package profiles

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
)

//go:embed *.yaml
var builtinFS embed.FS

// Profile is one cipher profile. The exported fields mirror the YAML file;
// the resolved values are read through methods.
type Profile struct {
	Name         string   `yaml:"name" json:"name"`
	Description  string   `yaml:"description,omitempty" json:"description,omitempty"`
	MinVersion   string   `yaml:"min_version" json:"min_version"`
	MaxVersion   string   `yaml:"max_version" json:"max_version"`
	CipherSuites []string `yaml:"cipher_suites,omitempty" json:"cipher_suites,omitempty"`
	Groups       []string `yaml:"groups" json:"groups"`
	Expect       Expect   `yaml:"expect" json:"expect"`
	Server       Server   `yaml:"server,omitempty" json:"server,omitempty"`
	// ClientCert, if set, is the key type of the client certificate every
	// connection must present (mutual TLS, docs/MTLS.md): "ecdsa-p256",
	// "rsa-2048", … (concrete: the run may generate one).
	ClientCert string `yaml:"client_cert,omitempty" json:"client_cert,omitempty"`
	// ALPN, if set, are the application protocols offered in the
	// ClientHello (ALPN, RFC 7301), in order: "http/1.1", … Unset offers
	// none (the handshake tlsbench always made).
	ALPN []string `yaml:"alpn,omitempty" json:"alpn,omitempty"`

	// Source is "builtin" or the file the profile came from.
	Source string `yaml:"-" json:"source"`

	min, max cipher.Version
	suites   []cipher.Suite
	groups   []cipher.Group
	exp      expectation
	raw      []byte // the YAML document as written
}

// Expect is what every connection must negotiate. A resumed session is
// always an error: tlsbench measures full handshakes (SR=0).
type Expect struct {
	Version     string `yaml:"version" json:"version"`
	CipherSuite string `yaml:"cipher_suite,omitempty" json:"cipher_suite,omitempty"`
	// Group is the key-exchange group, or "none" for RSA key exchange.
	Group string `yaml:"group,omitempty" json:"group,omitempty"`
	// CertKey is the leaf key ("ECDSA P-256", "RSA 2048", or "ECDSA" for any
	// curve). Optional.
	CertKey string `yaml:"cert_key,omitempty" json:"cert_key,omitempty"`
	// ChainDepth is the length of the chain the device presents, counted
	// from the leaf to the root inclusive (see ChainDepth); 0: not checked.
	ChainDepth int `yaml:"chain_depth,omitempty" json:"chain_depth,omitempty"`
	// ALPN is the protocol every connection must negotiate, one of the
	// profile's alpn; its only one by default.
	ALPN string `yaml:"alpn,omitempty" json:"alpn,omitempty"`
}

// Server says how the reference target serves this profile.
type Server struct {
	CertKey string `yaml:"cert_key,omitempty" json:"cert_key,omitempty"`
	// ChainDepth is the reference target's chain, from the leaf to the
	// root inclusive: 2 (the default) is a leaf issued by the root, 3 puts
	// one intermediate CA between them, up to MaxChainDepth.
	ChainDepth int `yaml:"chain_depth,omitempty" json:"chain_depth,omitempty"`
}

type expectation struct {
	version  cipher.Version
	suite    *cipher.Suite // nil: not checked
	group    *cipher.Group // nil: not checked; ID 0: RSA key exchange
	certKey  cipher.KeyType
	serverKT cipher.KeyType
	depth    int            // expected chain depth; 0: not checked
	serverCD int            // the reference target's chain depth
	clientKT cipher.KeyType // zero: no client certificate required
	alpn     string         // the application protocol required; "": none offered
}

// MinTLS and MaxTLS return the version range offered.
func (p *Profile) MinTLS() cipher.Version { return p.min }
func (p *Profile) MaxTLS() cipher.Version { return p.max }

// Suites returns the TLS 1.2 suites offered (empty for TLS 1.3-only profiles).
func (p *Profile) Suites() []cipher.Suite { return p.suites }

// OfferedGroups returns the groups offered.
func (p *Profile) OfferedGroups() []cipher.Group { return p.groups }

// ExpectedVersion returns the version every connection must negotiate.
func (p *Profile) ExpectedVersion() cipher.Version { return p.exp.version }

// ExpectedSuite returns the expected suite; ok is false when any is accepted.
func (p *Profile) ExpectedSuite() (cipher.Suite, bool) {
	if p.exp.suite == nil {
		return cipher.Suite{}, false
	}
	return *p.exp.suite, true
}

// SuitePinned reports whether the client's offer forces the suite (TLS 1.2);
// a TLS 1.3 suite is only observed.
func (p *Profile) SuitePinned() bool { return p.exp.suite != nil && !p.exp.suite.TLS13 }

// ExpectedGroup returns the expected group (ID 0 for RSA key exchange); ok is
// false when any is accepted.
func (p *Profile) ExpectedGroup() (cipher.Group, bool) {
	if p.exp.group == nil {
		return cipher.Group{}, false
	}
	return *p.exp.group, true
}

// ExpectedCertKey returns the expected leaf key type (zero: not checked).
func (p *Profile) ExpectedCertKey() cipher.KeyType { return p.exp.certKey }

// ServerCertKey returns the key type the reference target serves.
func (p *Profile) ServerCertKey() cipher.KeyType { return p.exp.serverKT }

// ExpectedChainDepth returns the chain depth every connection must present
// (see ChainDepth); 0: not checked.
func (p *Profile) ExpectedChainDepth() int { return p.exp.depth }

// ServerChainDepth returns the depth of the reference target's chain: 2
// (leaf and root) unless the profile asks for intermediate CAs.
func (p *Profile) ServerChainDepth() int { return p.exp.serverCD }

// ClientCertKey returns the key type of the client certificate the profile
// requires (client_cert), or the zero KeyType when it requires none.
func (p *Profile) ClientCertKey() cipher.KeyType { return p.exp.clientKT }

// YAML returns the profile's document as written.
func (p *Profile) YAML() []byte { return p.raw }

// SuiteLabel is the suite column of listings: the OpenSSL name, marked as
// observed when the protocol does not let the client pin it.
func (p *Profile) SuiteLabel() string {
	s, ok := p.ExpectedSuite()
	switch {
	case !ok && p.exp.version == cipher.Version(tls.VersionTLS13):
		return "(any TLS 1.3 suite, observed)"
	case !ok:
		return "(any)"
	case s.TLS13:
		return s.OpenSSL + " (observed)"
	}
	return s.OpenSSL
}

// GroupLabel is the group column of listings: "P-384 (secp384r1)", or "— (RSA
// key exchange)".
func (p *Profile) GroupLabel() string {
	g, ok := p.ExpectedGroup()
	switch {
	case !ok:
		return "(any)"
	case g.ID == 0:
		return "— (RSA key exchange)"
	case !strings.EqualFold(g.OpenSSL, g.Name):
		return fmt.Sprintf("%s (%s)", g.Name, g.OpenSSL)
	}
	return g.Name
}

// Error is a problem in a profile file: the file, the line (0 if unknown)
// and what is wrong, all on one line.
type Error struct {
	Kind string // what the file is: "profile" when empty, "plan", …
	File string
	Line int
	Msg  string
	Err  error // the typed cause, if any (e.g. *cipher.UnknownSuiteError), whose text Msg holds
}

// Unwrap returns the typed cause, if any.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	kind := cmp.Or(e.Kind, "profile")
	if e.Line > 0 {
		return fmt.Sprintf("%s %s:%d: %s", kind, e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s %s: %s", kind, e.File, e.Msg)
}

// Set is a collection of profiles by name. The zero Set is empty; a Set is
// not safe for concurrent modification.
type Set struct {
	byName map[string]*Profile
	order  []string
}

// builtinOrder lists the built-in profiles: the reference study's three
// first, then the modern ones, then the rest of RFC 9411's key matrix. A test checks it names every embedded file.
var builtinOrder = []string{
	"ecdhe-ecdsa-aes128-sha256-p384",
	"ecdhe-ecdsa-aes128-sha256-p256",
	"rsa2048-aes128-gcm-sha256",
	"ecdhe-rsa-aes128-gcm-sha256-p256",
	"ecdhe-ecdsa-aes128-gcm-sha256-p256",
	"tls13-aes128-gcm-x25519",
	"tls13-x25519mlkem768",
	// RFC 9411's key matrix (§4.3.1.4), beyond the rows above.
	"ecdhe-ecdsa-aes256-gcm-sha384-p384",
	"ecdhe-ecdsa-aes256-gcm-sha384-p521",
	"ecdhe-rsa-aes256-gcm-sha384-p256",
	"rsa4096-aes256-gcm-sha384",
	"ecdhe-ecdsa-aes128-gcm-sha256-p256-chain",
	"ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls",
}

// SeedProfiles are the reference study's profiles, in its table's order.
var SeedProfiles = builtinOrder[:3:3]

// Builtin returns a new Set holding the built-in profiles.
func Builtin() *Set {
	s := &Set{}
	for _, name := range builtinOrder {
		file := name + ".yaml"
		data, err := builtinFS.ReadFile(file)
		if err != nil {
			panic(err)
		}
		ps, err := Parse(path.Join("builtin", file), data)
		if err != nil {
			panic(fmt.Sprintf("built-in profile invalid: %v", err)) // caught by tests
		}
		for _, p := range ps {
			p.Source = "builtin"
			if err := s.Add(p); err != nil {
				panic(err)
			}
		}
	}
	return s
}

// Add adds p; a name that is already present is an error.
func (s *Set) Add(p *Profile) error {
	if s.byName == nil {
		s.byName = make(map[string]*Profile)
	}
	if old, ok := s.byName[p.Name]; ok {
		return fmt.Errorf("profile %q from %s is already defined (%s)", p.Name, p.Source, old.Source)
	}
	s.byName[p.Name] = p
	s.order = append(s.order, p.Name)
	return nil
}

// LoadFile parses a profile file (one or more YAML documents) and adds its
// profiles.
func (s *Set) LoadFile(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("profile file: %w", err)
	}
	ps, err := Parse(file, data)
	if err != nil {
		return err
	}
	// All or nothing: check every name before adding any.
	seen := map[string]bool{}
	for _, p := range ps {
		p.Source = file
		if old, ok := s.byName[p.Name]; ok {
			return fmt.Errorf("profile %q from %s is already defined (%s)", p.Name, file, old.Source)
		}
		if seen[p.Name] {
			return fmt.Errorf("profile %q from %s is already defined (earlier in the same file)", p.Name, file)
		}
		seen[p.Name] = true
	}
	for _, p := range ps {
		if err := s.Add(p); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the named profile or an error listing the known names.
func (s *Set) Get(name string) (*Profile, error) {
	if p, ok := s.byName[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(s.Names(), ", "))
}

// Names returns the profile names, built-ins in file order then user
// profiles in load order.
func (s *Set) Names() []string { return append([]string(nil), s.order...) }

// All returns the profiles in Names order.
func (s *Set) All() []*Profile {
	out := make([]*Profile, len(s.order))
	for i, n := range s.order {
		out[i] = s.byName[n]
	}
	return out
}

// Parse decodes every YAML document in data strictly (unknown fields are
// errors) and validates each profile. file names the source in errors.
func Parse(file string, data []byte) ([]*Profile, error) {
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	loose := yaml.NewDecoder(bytes.NewReader(data))
	var out []*Profile
	for {
		var node yaml.Node
		if err := loose.Decode(&node); err == io.EOF {
			break
		} else if err != nil {
			return nil, YAMLError(file, err)
		}
		var p Profile
		if err := strict.Decode(&p); err != nil {
			return nil, YAMLError(file, err)
		}
		if node.Kind == 0 || (len(node.Content) > 0 && node.Content[0].Kind != yaml.MappingNode) {
			return nil, &Error{File: file, Line: node.Line, Msg: "a profile is a mapping of fields (name, min_version, …)"}
		}
		raw, _ := yaml.Marshal(&node)
		p.raw = raw
		if err := p.resolve(); err != nil {
			var fe *vocab.FieldError
			if errors.As(err, &fe) && fe.Field == "" {
				return nil, &Error{File: file, Line: LineOf(&node, fe.Path...), Msg: fe.Msg, Err: fe.Err}
			}
			return nil, &Error{File: file, Line: node.Line, Msg: err.Error()}
		}
		out = append(out, &p)
	}
	if len(out) == 0 {
		return nil, &Error{File: file, Msg: "no profile in file"}
	}
	return out, nil
}

// YAMLError turns a yaml.v3 decoding error into an *Error: one line, the
// first problem, with its line. Other strict YAML files (plans) use it too.
func YAMLError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		var line int
		if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		}
		msg = strings.Replace(msg, "not found in type profiles.Profile", "is not a profile field", 1)
		msg = strings.Replace(msg, "not found in type profiles.Expect", "is not an expect field", 1)
		msg = strings.Replace(msg, "not found in type profiles.Server", "is not a server field", 1)
		if i := strings.Index(msg, " not found in type "); i >= 0 {
			msg = msg[:i] + " is not a known field"
		}
		return &Error{File: file, Line: line, Msg: oneLine(msg)}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	return &Error{File: file, Line: line, Msg: oneLine(msg)}
}

// oneLine keeps a message on one line: a YAML error may quote a value that
// spans lines.
func oneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

func ferr(msg string, path ...string) error { return &vocab.FieldError{Path: path, Msg: msg} }

// LineOf finds the line of the value at path in a document: mapping keys,
// or decimal indexes into sequences.
func LineOf(doc *yaml.Node, path ...string) int {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, key := range path {
		if i, err := strconv.Atoi(key); err == nil && n.Kind == yaml.SequenceNode {
			if i < len(n.Content) {
				n = n.Content[i]
				line = n.Line
			}
			continue
		}
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				k := n.Content[i]
				n = n.Content[i+1]
				line = cmp.Or(n.Line, k.Line) // the key's line if the value has none
				found = true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

// resolve checks the profile and fills in the resolved values: the offer,
// then the expectations, then the reference target's key.
func (p *Profile) resolve() error {
	for _, step := range []func() error{p.resolveName, p.resolveVersions, p.resolveSuites, p.resolveGroups,
		p.resolveExpectVersion, p.resolveExpectSuite, p.resolveExpectGroup, p.resolveExpectCertKey,
		p.resolveClientCert, p.resolveServerKey, p.resolveALPN, p.resolveChainDepth} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// resolveClientCert parses client_cert: a concrete key type, so that a
// run can generate the certificate.
func (p *Profile) resolveClientCert() error {
	if p.ClientCert == "" {
		return nil
	}
	kt, err := cipher.ParseKeyType(p.ClientCert)
	if err != nil {
		return ferr("client_cert: "+err.Error(), "client_cert")
	}
	if !kt.Concrete() {
		return ferr(fmt.Sprintf("client_cert %s needs a size or curve to generate a key (e.g. ecdsa-p256, rsa-2048)",
			kt), "client_cert")
	}
	p.exp.clientKT = kt
	return nil
}

// resolveALPN checks alpn (protocol IDs of 1 to 255 bytes, each once) and
// expect.alpn: one of them, and given when alpn has several.
func (p *Profile) resolveALPN() error {
	for i, id := range p.ALPN {
		if id == "" || len(id) > 255 || slices.Contains(p.ALPN[:i], id) {
			return ferr(fmt.Sprintf("alpn %q: protocol IDs are 1 to 255 bytes, each given once (e.g. http/1.1)", id),
				"alpn")
		}
	}
	switch want := p.Expect.ALPN; {
	case want == "" && len(p.ALPN) == 1:
		p.exp.alpn = p.ALPN[0]
	case want == "" && len(p.ALPN) > 1:
		return ferr("expect.alpn is required when alpn offers several protocols", "expect", "alpn")
	case want != "" && !slices.Contains(p.ALPN, want):
		return ferr(fmt.Sprintf("expect.alpn %q is not offered (alpn %q)", want, p.ALPN), "expect", "alpn")
	default:
		p.exp.alpn = want
	}
	return nil
}

// ExpectedALPN returns the application protocol every connection must
// negotiate (ALPN), or "" when the profile offers none.
func (p *Profile) ExpectedALPN() string { return p.exp.alpn }

// Speaking returns p offering the application protocol alpn (a protocol's
// ALPN ID), then fallback, and requiring alpn, when p requires none; else
// p itself (whose own requirement the caller checks against alpn). A device
// that chooses a fallback fails the profile's verification as a mismatch
// naming it.
func (p *Profile) Speaking(alpn string, fallback ...string) *Profile {
	if p.exp.alpn != "" || alpn == "" {
		return p
	}
	q := *p
	q.ALPN, q.exp.alpn = append([]string{alpn}, fallback...), alpn
	return &q
}

func (p *Profile) resolveName() error {
	if p.Name == "" {
		return ferr("name is required", "name")
	}
	if strings.ContainsAny(p.Name, " \t/\\") {
		return ferr(fmt.Sprintf("name %q must not contain spaces or slashes", p.Name), "name")
	}
	return nil
}

// resolveVersions parses min_version and max_version (both required).
func (p *Profile) resolveVersions() error {
	var err error
	if p.MinVersion == "" {
		return ferr("min_version is required", "min_version")
	}
	if p.min, err = cipher.ParseVersion(p.MinVersion); err != nil {
		return ferr("min_version: "+err.Error(), "min_version")
	}
	if p.MaxVersion == "" {
		return ferr("max_version is required", "max_version")
	}
	if p.max, err = cipher.ParseVersion(p.MaxVersion); err != nil {
		return ferr("max_version: "+err.Error(), "max_version")
	}
	if p.min > p.max {
		msg := fmt.Sprintf("min_version %s is above max_version %s", p.min.Short(), p.max.Short())
		return ferr(msg, "min_version")
	}
	return nil
}

// resolveSuites parses the offered cipher suites (TLS 1.2 and older only).
func (p *Profile) resolveSuites() error {
	for i, name := range p.CipherSuites {
		at := []string{"cipher_suites", strconv.Itoa(i)}
		s, err := cipher.SuiteByName(name)
		if err != nil {
			return &vocab.FieldError{Path: at, Msg: "cipher_suites: " + err.Error(), Err: err}
		}
		if s.TLS13 {
			return ferr(fmt.Sprintf("cipher_suites: %s is a TLS 1.3 suite, and crypto/tls cannot pin TLS 1.3 suites "+
				"(the client always offers all three); remove it and put it under expect.cipher_suite, "+
				"where it is observed and checked", s.IANA), at...)
		}
		p.suites = append(p.suites, s)
	}
	if p.min <= tls.VersionTLS12 && len(p.suites) == 0 {
		return ferr("cipher_suites is required when TLS 1.2 or older is offered (the offer must be explicit)",
			"cipher_suites")
	}
	return nil
}

// resolveGroups parses the offered key-exchange groups (required, no repeats).
func (p *Profile) resolveGroups() error {
	if len(p.Groups) == 0 {
		return ferr("groups is required (crypto/tls's default offer includes post-quantum groups; "+
			"the offer must be explicit)", "groups")
	}
	for i, name := range p.Groups {
		at := []string{"groups", strconv.Itoa(i)}
		g, err := cipher.GroupByName(name)
		if err != nil {
			return ferr("groups: "+err.Error(), at...)
		}
		if g.TLS13Only && p.max < tls.VersionTLS13 {
			msg := fmt.Sprintf("groups: %s exists only in TLS 1.3, but max_version is %s", g.Name, p.max.Short())
			return ferr(msg, at...)
		}
		if p.offersGroup(g.ID) {
			return ferr(fmt.Sprintf("groups: %s is listed twice", g.Name), at...)
		}
		p.groups = append(p.groups, g)
	}
	return nil
}

func (p *Profile) offersGroup(id tls.CurveID) bool {
	for _, g := range p.groups {
		if g.ID == id {
			return true
		}
	}
	return false
}

// resolveExpectVersion parses expect.version (required, inside the offer).
func (p *Profile) resolveExpectVersion() error {
	var err error
	if p.Expect.Version == "" {
		return ferr("expect.version is required", "expect", "version")
	}
	if p.exp.version, err = cipher.ParseVersion(p.Expect.Version); err != nil {
		return ferr("expect.version: "+err.Error(), "expect", "version")
	}
	if p.exp.version < p.min || p.exp.version > p.max {
		msg := fmt.Sprintf("expect.version %s is outside min_version..max_version", p.exp.version.Short())
		return ferr(msg, "expect", "version")
	}
	return nil
}

// resolveExpectSuite parses expect.cipher_suite; without it, the only
// offered TLS 1.2 suite is expected.
func (p *Profile) resolveExpectSuite() error {
	if p.Expect.CipherSuite == "" {
		if p.exp.version != tls.VersionTLS13 && len(p.suites) == 1 {
			s := p.suites[0]
			p.exp.suite = &s
		}
		return nil
	}
	s, err := cipher.SuiteByName(p.Expect.CipherSuite)
	if err != nil {
		return &vocab.FieldError{Path: []string{"expect", "cipher_suite"}, Msg: "expect.cipher_suite: " + err.Error(),
			Err: err}
	}
	if s.TLS13 != (p.exp.version == tls.VersionTLS13) {
		msg := fmt.Sprintf("expect.cipher_suite %s cannot be negotiated in %s", s.IANA, p.exp.version.Short())
		return ferr(msg, "expect", "cipher_suite")
	}
	if !s.TLS13 && !containsSuite(p.suites, s.ID) {
		return ferr(fmt.Sprintf("expect.cipher_suite %s is not in cipher_suites", s.OpenSSL), "expect", "cipher_suite")
	}
	p.exp.suite = &s
	return nil
}

// resolveExpectGroup parses expect.group: an offered group, or none for an
// RSA key exchange.
func (p *Profile) resolveExpectGroup() error {
	if p.Expect.Group == "" {
		return nil
	}
	var g cipher.Group
	if strings.EqualFold(p.Expect.Group, "none") {
		if s := p.exp.suite; s == nil || s.KeyExch != "RSA" {
			return ferr("expect.group none (RSA key exchange) needs an RSA key-exchange expect.cipher_suite",
				"expect", "group")
		}
		p.exp.group = &g
		return nil
	}
	var err error
	if g, err = cipher.GroupByName(p.Expect.Group); err != nil {
		return ferr("expect.group: "+err.Error(), "expect", "group")
	}
	if !p.offersGroup(g.ID) {
		return ferr(fmt.Sprintf("expect.group %s is not in groups", g.Name), "expect", "group")
	}
	if g.TLS13Only && p.exp.version < tls.VersionTLS13 {
		msg := fmt.Sprintf("expect.group %s exists only in TLS 1.3, but expect.version is %s",
			g.Name, p.exp.version.Short())
		return ferr(msg, "expect", "group")
	}
	if s := p.exp.suite; s != nil && s.KeyExch == "RSA" {
		msg := fmt.Sprintf("expect.group %s, but %s uses RSA key exchange (no group): use none", g.Name, s.OpenSSL)
		return ferr(msg, "expect", "group")
	}
	p.exp.group = &g
	return nil
}

// resolveExpectCertKey parses expect.cert_key, which the expected suite must accept.
func (p *Profile) resolveExpectCertKey() error {
	if p.Expect.CertKey == "" {
		return nil
	}
	var err error
	if p.exp.certKey, err = cipher.ParseKeyType(p.Expect.CertKey); err != nil {
		return ferr("expect.cert_key: "+err.Error(), "expect", "cert_key")
	}
	if err := suiteAcceptsKey(p.exp.suite, p.exp.certKey); err != nil {
		return ferr("expect.cert_key: "+err.Error(), "expect", "cert_key")
	}
	return nil
}

// resolveServerKey chooses the reference target's key: server.cert_key, else
// the expected key when it is concrete, else one the expected suite accepts.
func (p *Profile) resolveServerKey() error {
	switch {
	case p.Server.CertKey != "":
		return p.resolveServerCertKey()
	case p.exp.certKey.Concrete():
		p.exp.serverKT = p.exp.certKey
	case p.exp.suite != nil && strings.HasSuffix(p.exp.suite.KeyExch, "RSA"):
		p.exp.serverKT = cipher.KeyType{Alg: "RSA", Bits: 2048}
	default:
		p.exp.serverKT = cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	}
	return nil
}

func (p *Profile) resolveServerCertKey() error {
	var err error
	if p.exp.serverKT, err = cipher.ParseKeyType(p.Server.CertKey); err != nil {
		return ferr("server.cert_key: "+err.Error(), "server", "cert_key")
	}
	if !p.exp.serverKT.Concrete() {
		msg := fmt.Sprintf("server.cert_key %s needs a size or curve to generate a key", p.exp.serverKT)
		return ferr(msg, "server", "cert_key")
	}
	if !p.exp.certKey.IsZero() && !p.exp.certKey.Matches(p.exp.serverKT) {
		msg := fmt.Sprintf("server.cert_key %s does not satisfy expect.cert_key %s", p.exp.serverKT, p.exp.certKey)
		return ferr(msg, "server", "cert_key")
	}
	if err := suiteAcceptsKey(p.exp.suite, p.exp.serverKT); err != nil {
		return ferr("server.cert_key: "+err.Error(), "server", "cert_key")
	}
	return nil
}

func suiteAcceptsKey(s *cipher.Suite, k cipher.KeyType) error {
	if s == nil || s.TLS13 {
		return nil
	}
	switch {
	case s.KeyExch == "ECDHE-ECDSA" && k.Alg != "ECDSA":
		return fmt.Errorf("%s needs an ECDSA certificate, not %s", s.OpenSSL, k)
	case (s.KeyExch == "ECDHE-RSA" || s.KeyExch == "RSA") && k.Alg != "RSA":
		return fmt.Errorf("%s needs an RSA certificate, not %s", s.OpenSSL, k)
	}
	return nil
}

func containsSuite(ss []cipher.Suite, id uint16) bool {
	for _, s := range ss {
		if s.ID == id {
			return true
		}
	}
	return false
}

// MaxChainDepth is the deepest chain a profile may name: a leaf, three
// intermediate CAs and the root.
const MaxChainDepth = 5

// resolveChainDepth checks expect.chain_depth and server.chain_depth; the
// reference target serves the expected depth unless told otherwise, and 2
// (leaf and root) by default.
func (p *Profile) resolveChainDepth() error {
	for _, f := range []struct {
		depth int
		field string
	}{{p.Expect.ChainDepth, "expect"}, {p.Server.ChainDepth, "server"}} {
		if f.depth != 0 && (f.depth < 2 || f.depth > MaxChainDepth) {
			msg := fmt.Sprintf("%s.chain_depth %d: counts the certificates from the leaf to the root inclusive, "+
				"2 (a leaf issued by the root) to %d", f.field, f.depth, MaxChainDepth)
			return ferr(msg, f.field, "chain_depth")
		}
	}
	p.exp.depth = p.Expect.ChainDepth
	switch {
	case p.Server.ChainDepth != 0 && p.exp.depth != 0 && p.Server.ChainDepth != p.exp.depth:
		msg := fmt.Sprintf("server.chain_depth %d does not satisfy expect.chain_depth %d", p.Server.ChainDepth, p.exp.depth)
		return ferr(msg, "server", "chain_depth")
	case p.Server.ChainDepth != 0:
		p.exp.serverCD = p.Server.ChainDepth
	case p.exp.depth != 0:
		p.exp.serverCD = p.exp.depth
	default:
		p.exp.serverCD = 2
	}
	return nil
}
