package profiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/cipher"
)

// ErrResumed is returned by Verify when a session was resumed: every
// connection must be a full handshake (SR=0).
var ErrResumed = errors.New("session resumed; the profile requires a full handshake (SR=0)")

// MismatchError says which negotiated parameter differs from the profile.
type MismatchError struct {
	Profile string
	Field   string // "version", "cipher_suite", "group" or "cert_key"
	Want    string
	Got     string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("negotiated %s %s, profile %s expects %s", e.Field, e.Got, e.Profile, e.Want)
}

// Verify checks a completed handshake against the profile's expectations. It
// returns ErrResumed or a *MismatchError.
func (p *Profile) Verify(cs tls.ConnectionState) error {
	return p.verify(cs, true)
}

// verify checks cs; when complete is false (inside VerifyConnection during a
// TLS 1.2 full handshake) the group is not known yet and is left to Verify.
func (p *Profile) verify(cs tls.ConnectionState, complete bool) error {
	if cs.DidResume {
		return ErrResumed
	}
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
	return nil
}

func groupName(id tls.CurveID) string {
	if id == 0 {
		return "none (RSA key exchange)"
	}
	return cipher.GroupName(id)
}

// ClientOptions are the per-run choices that are not part of a profile.
type ClientOptions struct {
	ServerName string         // SNI and name verified; empty sends no SNI
	RootCAs    *x509.CertPool // nil: the system pool
	// InsecureSkipVerify skips certificate chain and name verification. The
	// profile's checks (including the certificate key) still run.
	InsecureSkipVerify bool
	KeyLogWriter       io.Writer // debugging only: serialises handshakes
}

// ClientConfig returns a new client configuration for the profile: exactly the
// profile's offer, no session cache and no tickets (so no resumption can be
// offered), and VerifyConnection checking the profile on every handshake.
//
// In a TLS 1.2 full handshake crypto/tls calls VerifyConnection when it
// processes the server's Certificate, before ServerKeyExchange, so the group
// is not known yet: callers must also call Verify once the handshake is done.
func (p *Profile) ClientConfig(o ClientOptions) *tls.Config {
	cfg := &tls.Config{
		MinVersion:             uint16(p.min),
		MaxVersion:             uint16(p.max),
		CurvePreferences:       p.curveIDs(),
		SessionTicketsDisabled: true,
		ServerName:             o.ServerName,
		RootCAs:                o.RootCAs,
		InsecureSkipVerify:     o.InsecureSkipVerify,
		KeyLogWriter:           o.KeyLogWriter,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return p.verify(cs, false)
		},
	}
	for _, s := range p.suites {
		cfg.CipherSuites = append(cfg.CipherSuites, s.ID)
	}
	return cfg
}

// ServerConfig returns a new server configuration that serves the profile as
// the reference target: the same versions and suites, only the expected group
// (so the server cannot choose another), no tickets and no session cache.
func (p *Profile) ServerConfig(cert tls.Certificate) *tls.Config {
	cfg := &tls.Config{
		MinVersion:                  uint16(p.min),
		MaxVersion:                  uint16(p.max),
		Certificates:                []tls.Certificate{cert},
		SessionTicketsDisabled:      true,
		DynamicRecordSizingDisabled: true,
		CurvePreferences:            p.curveIDs(),
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
