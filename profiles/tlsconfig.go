package profiles

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

// ErrResumed is returned by Verify when a session was resumed that was
// not offered for resumption: a full handshake was meant (SR=0).
var ErrResumed = errors.New("session resumed; the profile requires a full handshake (SR=0)")

// ErrNotResumed is returned by VerifyResumption when the client offered a
// session and the server made a full handshake instead.
var ErrNotResumed = errors.New("session not resumed: the client offered one, the server made a full handshake")

// MismatchError says which negotiated parameter differs from the profile.
type MismatchError struct {
	Profile string
	Field   string // "version", "cipher_suite", "group", "cert_key", "alpn" or "chain_depth"
	Want    string
	Got     string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("negotiated %s %s, profile %s expects %s", e.Field, e.Got, e.Profile, e.Want)
}

// Verify checks a completed handshake against the profile's expectations. It
// returns ErrResumed or a *MismatchError.
func (p *Profile) Verify(cs tls.ConnectionState) error {
	return p.VerifyResumption(cs, false)
}

// VerifyResumption is Verify for a connection that offered a session
// (offered) or did not: a resumed session that was not offered is
// ErrResumed, a full handshake that was offered one is ErrNotResumed. A
// resumed TLS 1.2 session has no key exchange: its group is not checked.
func (p *Profile) VerifyResumption(cs tls.ConnectionState, offered bool) error {
	switch {
	case cs.DidResume && !offered:
		return ErrResumed
	case !cs.DidResume && offered:
		return ErrNotResumed
	}
	return p.verify(cs, !cs.DidResume || cs.Version == tls.VersionTLS13)
}

// verify checks cs's parameters; when complete is false (inside
// VerifyConnection during a TLS 1.2 full handshake, or of a resumed TLS 1.2
// session) the group is not known and is not checked.
func (p *Profile) verify(cs tls.ConnectionState, complete bool) error {
	if cipher.Version(cs.Version) != p.exp.version {
		return &MismatchError{p.Name, "version", p.exp.version.Short(), cipher.Version(cs.Version).Short()}
	}
	if s := p.exp.suite; s != nil && cs.CipherSuite != s.ID {
		return &MismatchError{p.Name, "cipher_suite", s.IANA, cipher.SuiteName(cs.CipherSuite)}
	}
	if g := p.exp.group; g != nil && (complete || cs.Version == tls.VersionTLS13) && cs.CurveID != g.ID {
		return &MismatchError{p.Name, "group", groupName(g.ID), groupName(cs.CurveID)}
	}
	if !p.exp.certKey.IsZero() {
		if len(cs.PeerCertificates) == 0 {
			return &MismatchError{p.Name, "cert_key", p.exp.certKey.String(), "no certificate"}
		}
		got, ok := cipher.KeyTypeOf(cs.PeerCertificates[0].PublicKey)
		if !ok || !p.exp.certKey.Matches(got) {
			name := got.String()
			if !ok {
				name = fmt.Sprintf("%T", cs.PeerCertificates[0].PublicKey)
			}
			return &MismatchError{p.Name, "cert_key", p.exp.certKey.String(), name}
		}
	}
	if want := p.exp.alpn; want != "" && cs.NegotiatedProtocol != want {
		return &MismatchError{p.Name, "alpn", want, cmp.Or(cs.NegotiatedProtocol, "none")}
	}
	if want := p.exp.depth; want != 0 {
		if got := ChainDepth(cs.PeerCertificates); got != want {
			return &MismatchError{p.Name, "chain_depth", strconv.Itoa(want), strconv.Itoa(got)}
		}
	}
	return nil
}

// ChainDepth is the depth of the chain a server presented, counted from the
// leaf to the root inclusive: the certificates presented, plus the root when
// it was left out, as TLS allows (a last certificate that is not self-issued
// is taken to be issued by a root the client holds). A leaf issued by the
// root is 2 whether the root is sent or not, one intermediate CA makes 3, a
// self-signed leaf alone is 1, no certificate is 0.
func ChainDepth(certs []*x509.Certificate) int {
	if len(certs) == 0 {
		return 0
	}
	last := certs[len(certs)-1]
	if bytes.Equal(last.RawSubject, last.RawIssuer) {
		return len(certs)
	}
	return len(certs) + 1
}

func groupName(id tls.CurveID) string {
	if id == 0 {
		return "none (RSA key exchange)"
	}
	return cipher.GroupName(id)
}

// LoadRoots reads the verification roots of a client configuration from a
// PEM file: the one CA-pool loader of every command and package. Its error
// is a *RootsError.
func LoadRoots(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, &RootsError{File: file, Err: err}
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		return nil, &RootsError{File: file}
	}
	return p, nil
}

// RootsError is a CA file that gives no roots: unreadable (Err), or with
// no PEM certificate in it (Err nil).
type RootsError struct {
	File string
	Err  error
}

func (e *RootsError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("cacert %s: no PEM certificate in it", e.File)
	}
	return fmt.Sprintf("cacert: %v", e.Err)
}

func (e *RootsError) Unwrap() error { return e.Err }

// ClientConfig returns a new client configuration for the profile: exactly the
// profile's offer, no session cache and no tickets (so no resumption can be
// offered), and VerifyConnection checking the profile on every handshake.
//
// In a TLS 1.2 full handshake crypto/tls calls VerifyConnection when it
// processes the server's Certificate, before ServerKeyExchange, so the group
// is not known yet: callers must also call Verify once the handshake is done.
//
// The configuration is a clone of base (nil: the zero Config), so the run's
// own choices are kept whatever they are: its ServerName (SNI and the name
// verified; empty sends no SNI), RootCAs (nil: the system pool),
// InsecureSkipVerify (skips chain and name verification; the profile's
// checks, the certificate key's included, still run), KeyLogWriter
// (debugging: serialises handshakes), the client certificate of mutual TLS
// (Certificates, GetClientCertificate) and NextProtos when the profile
// offers no ALPN. The profile's offer replaces base's versions, suites,
// groups and, when it has one, ALPN protocols; the session cache and
// tickets are off. Unless InsecureSkipVerify is set, the server's chain is
// verified against RootCAs and ServerName as crypto/tls would, with the
// intermediate CAs the server presents, but each distinct chain once: a
// later handshake that presents the same, already verified chain within its
// validity is not verified again. That saves
// a signature check per handshake (≈0.12 ms with a P-256 CA, ≈1.1 ms with
// P-384) without accepting anything crypto/tls would refuse. The
// ServerKeyExchange signature is verified on every handshake regardless.
func (p *Profile) ClientConfig(base *tls.Config) *tls.Config {
	o := base
	if o == nil {
		o = &tls.Config{}
	}
	cfg := o.Clone()
	cfg.MinVersion, cfg.MaxVersion = uint16(p.min), uint16(p.max)
	cfg.CurvePreferences, cfg.CipherSuites = p.curveIDs(), nil
	cfg.SessionTicketsDisabled, cfg.ClientSessionCache = true, nil
	cfg.InsecureSkipVerify = true // the chain is verified below
	if len(p.ALPN) > 0 {
		cfg.NextProtos = slices.Clone(p.ALPN)
	}
	var chains *chainCache
	if !o.InsecureSkipVerify {
		chains = newChainCache(o.RootCAs, 1)
	}
	cfg.VerifyConnection = p.verifyConnection(chains, o.ServerName)
	for _, s := range p.suites {
		cfg.CipherSuites = append(cfg.CipherSuites, s.ID)
	}
	return cfg
}

// verifyConnection is the VerifyConnection of a client configuration whose
// ServerName is name: a resumed session is refused (tickets are off: none
// was offered), then the chain is verified (unless chains is nil:
// verification skipped), then the profile.
func (p *Profile) verifyConnection(chains *chainCache, name string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if cs.DidResume {
			return ErrResumed
		}
		if chains != nil {
			if err := chains.verify(cs.PeerCertificates, name); err != nil {
				return err
			}
		}
		return p.verify(cs, false)
	}
}

// chainCache verifies server chains, each distinct chain once, and each
// distinct (chain, server name) pair once. It is safe for concurrent use.
//
// A chain is verified without a name, then the leaf against the name
// (x509.Certificate.VerifyHostname): what x509.Verify with DNSName checks,
// the same certificates accepted and refused, but a chain that is both
// untrusted and for another name is reported as untrusted (the chain's
// error first), and a trusted chain for another name as an
// x509.HostnameError alone, which the engines class apart (cert_name).
// With many names and one certificate, the chain's signatures are checked
// once, not once per name.
type chainCache struct {
	roots *x509.CertPool
	// max bounds the leaves and the (leaf, name) pairs kept: a DUT
	// serves a handful of certificates per name.
	max   int
	mu    sync.Mutex
	pairs int
	// leaves maps a leaf's DER to what was verified of it: the chain is
	// the whole one presented, not the leaf alone (the same leaf presented
	// without the intermediate it was verified with must be verified
	// again, and fail, as crypto/tls would).
	leaves map[string]*verifiedLeaf
}

// verifiedLeaf is a leaf whose chain was verified: until the end of the
// validity of the chain it was verified with, and the names it was found
// valid for.
type verifiedLeaf struct {
	// rest is the DER of the certificates presented after the leaf,
	// concatenated (DER is self-delimiting).
	rest  string
	until time.Time
	names map[string]struct{}
}

// newChainCache returns a cache for a run of n server names.
func newChainCache(roots *x509.CertPool, n int) *chainCache {
	return &chainCache{roots: roots, max: max(1024, 4*n), leaves: map[string]*verifiedLeaf{}}
}

// verify verifies certs, a server's chain, for the server name name.
func (c *chainCache) verify(certs []*x509.Certificate, name string) error {
	if len(certs) == 0 {
		return &tls.CertificateVerificationError{Err: errors.New("tls: server sent no certificate")}
	}
	if name == "" {
		// crypto/tls refuses this configuration; so must we, or any
		// certificate of a trusted CA would do for any host.
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: errors.New("tls: either ServerName " +
			"or InsecureSkipVerify must be specified")}
	}
	now := time.Now()
	leaf := certs[0]
	c.mu.Lock()
	v := c.leaves[string(leaf.Raw)]
	chained := v != nil && now.Before(v.until) && sameRest(v.rest, certs[1:])
	named := false
	if chained {
		_, named = v.names[name]
	}
	c.mu.Unlock()
	if named {
		return nil
	}
	until := time.Time{}
	if !chained {
		var err error
		if until, err = verifyChain(certs, c.roots, now); err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
		}
	}
	if err := leaf.VerifyHostname(name); err != nil {
		c.remember(certs, "", until) // the chain stands: a name's next try checks the name only
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	c.remember(certs, name, until)
	return nil
}

// sameRest reports whether certs' DER, concatenated, is rest, without
// making the concatenation (a handshake's path allocates nothing for it).
func sameRest(rest string, certs []*x509.Certificate) bool {
	for _, c := range certs {
		if len(c.Raw) > len(rest) || rest[:len(c.Raw)] != string(c.Raw) {
			return false
		}
		rest = rest[len(c.Raw):]
	}
	return rest == ""
}

// remember notes that the chain certs was verified for name ("": for
// none), valid until (zero: the chain was found in the cache), within the
// bound. A leaf verified again with other certificates after it takes them,
// and loses the names found for the chain before.
func (c *chainCache) remember(certs []*x509.Certificate, name string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	leaf := certs[0]
	v := c.leaves[string(leaf.Raw)]
	if v == nil {
		if len(c.leaves) >= c.max {
			return
		}
		v = &verifiedLeaf{names: map[string]struct{}{}}
		c.leaves[string(leaf.Raw)] = v
	}
	if !until.IsZero() {
		if !sameRest(v.rest, certs[1:]) {
			var rest []byte
			for _, ic := range certs[1:] {
				rest = append(rest, ic.Raw...)
			}
			c.pairs -= len(v.names)
			v.rest, v.names = string(rest), map[string]struct{}{}
		}
		v.until = until
	}
	if _, ok := v.names[name]; !ok && name != "" && c.pairs < c.max {
		v.names[name] = struct{}{}
		c.pairs++
	}
}

// verifyChain verifies the chain certs (leaf first) against roots at now,
// for no name, and returns the end of the validity of the chain found.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, now time.Time) (time.Time, error) {
	leaf := certs[0]
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), CurrentTime: now}
	for _, ic := range certs[1:] {
		opts.Intermediates.AddCert(ic)
	}
	chains, err := leaf.Verify(opts)
	if err != nil {
		return time.Time{}, err
	}
	until := leaf.NotAfter
	for _, ch := range chains[0] {
		if ch.NotAfter.Before(until) {
			until = ch.NotAfter
		}
	}
	return until, nil
}

// ServerConfig returns a new server configuration that serves the profile as
// the reference target: the same versions and suites, only the expected group
// (so the server cannot choose another), no tickets and no session cache,
// and the expected ALPN protocol alone announced (whatever it is: the
// target serves HTTP/1.1, so a profile expecting another makes it a device
// that selects a protocol it does not speak).
func (p *Profile) ServerConfig(cert tls.Certificate) *tls.Config {
	cfg := &tls.Config{
		MinVersion:                  uint16(p.min),
		MaxVersion:                  uint16(p.max),
		Certificates:                []tls.Certificate{cert},
		SessionTicketsDisabled:      true,
		DynamicRecordSizingDisabled: true,
		CurvePreferences:            p.curveIDs(),
	}
	if p.exp.alpn != "" {
		cfg.NextProtos = []string{p.exp.alpn} // the protocol the profile expects, announced
	}
	if g := p.exp.group; g != nil && g.ID != 0 {
		cfg.CurvePreferences = []tls.CurveID{g.ID}
	}
	for _, s := range p.suites {
		cfg.CipherSuites = append(cfg.CipherSuites, s.ID)
	}
	return cfg
}

func (p *Profile) curveIDs() []tls.CurveID {
	ids := make([]tls.CurveID, len(p.groups))
	for i, g := range p.groups {
		ids[i] = g.ID
	}
	return ids
}
