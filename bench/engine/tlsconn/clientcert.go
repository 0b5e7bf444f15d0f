package tlsconn

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// ClientAuth says where a run's client certificate (mutual TLS,
// docs/MTLS.md) comes from: a certificate and key given as files, presented
// with any profile; else, for a profile that requires one (client_cert), a
// certificate of the profile's key type issued for the run by a CA: the
// CA of the files ClientCAFile and ClientCAKeyFile, or ClientCA, made in
// memory by this process. Nothing set and no client_cert: no certificate.
type ClientAuth struct {
	ClientCertFile  string `json:"client_cert_file,omitempty"`
	ClientKeyFile   string `json:"client_key_file,omitempty"`
	ClientCAFile    string `json:"client_ca_file,omitempty"`
	ClientCAKeyFile string `json:"client_ca_key_file,omitempty"`
	// ClientCA is this process's own: a CA in memory (not sent to agents).
	ClientCA *cipher.CA `json:"-"`
}

// clientLeafValidity is how long a client certificate issued for a run is
// valid (at most as long as its CA): longer than any run.
const clientLeafValidity = 30 * 24 * time.Hour

// Validate reports settings that do not go together: a file without its
// pair, or both a certificate and a CA.
func (a *ClientAuth) Validate() error {
	bad := func(field, msg string) error { return &vocab.FieldError{Field: field, Msg: msg} }
	switch {
	case a.ClientCertFile != "" && a.ClientKeyFile == "":
		return bad("client_key_file", "missing (client_cert_file is given)")
	case a.ClientKeyFile != "" && a.ClientCertFile == "":
		return bad("client_cert_file", "missing (client_key_file is given)")
	case a.ClientCAFile != "" && a.ClientCAKeyFile == "":
		return bad("client_ca_key_file", "missing (client_ca_file is given)")
	case a.ClientCAKeyFile != "" && a.ClientCAFile == "":
		return bad("client_ca_file", "missing (client_ca_key_file is given)")
	case a.ClientCertFile != "" && (a.ClientCAFile != "" || a.ClientCA != nil):
		return bad("client_ca_file", "not with client_cert_file, which gives the client certificate")
	}
	return nil
}

// ValidateFor reports a profile that requires a client certificate when
// the settings give no way to get one.
func (a *ClientAuth) ValidateFor(p *profiles.Profile) error {
	if p.ClientCertKey().IsZero() || a.ClientCertFile != "" || a.ClientCAFile != "" || a.ClientCA != nil {
		return nil
	}
	return &vocab.FieldError{Field: "client_cert_file", Msg: fmt.Sprintf("profile %s requires a client certificate: "+
		"give client_cert_file and client_key_file, or client_ca_file and client_ca_key_file", p.Name)}
}

// ClientCertError is a client certificate, key or CA file that cannot be
// used: Field names the setting (client_cert_file, client_ca_file, …).
type ClientCertError struct {
	Field, File string
	Err         error
}

func (e *ClientCertError) Error() string { return fmt.Sprintf("%s %s: %v", e.Field, e.File, e.Err) }
func (e *ClientCertError) Unwrap() error { return e.Err }

// ClientKeyMismatchError is a given client certificate whose key is not
// the type the profile requires.
type ClientKeyMismatchError struct {
	Profile   string
	Want, Got cipher.KeyType
}

func (e *ClientKeyMismatchError) Error() string {
	return fmt.Sprintf("profile %s requires client_cert %s, the given certificate's key is %s", e.Profile, e.Want, e.Got)
}

// ClientCert is a run's client certificate and what the record says of it,
// or the absence of one (None), which a server may ask for all the same.
type ClientCert struct {
	Cert   tls.Certificate
	Record metrics.ClientCert
	none   bool
	// requests counts the handshakes in which the server asked for it.
	requests atomic.Int64
}

// None reports whether the run has no client certificate to present.
func (c *ClientCert) None() bool { return c.none }

// Requests returns how many handshakes so far the server asked for the
// certificate in (each was presented it, or told there is none).
func (c *ClientCert) Requests() int64 { return c.requests.Load() }

// ClientCertificate returns the client certificate of a run with profile p:
// the files' (whose key must be p's client_cert type, if set), or one of
// p's type issued now by the CA, or none (ClientCert.None).
func (a *ClientAuth) ClientCertificate(p *profiles.Profile) (*ClientCert, error) {
	want := p.ClientCertKey()
	if a.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.ClientCertFile, a.ClientKeyFile)
		if err != nil {
			return nil, &ClientCertError{Field: "client_cert_file", File: a.ClientCertFile, Err: err}
		}
		got, _ := cipher.KeyTypeOf(cert.Leaf.PublicKey)
		if !want.IsZero() && !want.Matches(got) {
			return nil, &ClientKeyMismatchError{Profile: p.Name, Want: want, Got: got}
		}
		return newClientCert(cert, "file"), nil
	}
	if want.IsZero() {
		return &ClientCert{none: true}, nil
	}
	ca, source := a.ClientCA, "generated"
	if a.ClientCAFile != "" {
		var err error
		if ca, err = LoadClientCA(a.ClientCAFile, a.ClientCAKeyFile); err != nil {
			return nil, err
		}
		source = "ca_file"
	}
	if ca == nil {
		return nil, a.ValidateFor(p)
	}
	cert, err := ca.ClientLeaf(want, "tlsbench client", clientLeafValidity)
	if err != nil {
		return nil, err
	}
	return newClientCert(cert, source), nil
}

// LoadClientCA reads a CA certificate and its key (PEM files) to issue
// client certificates; its error is a *ClientCertError.
func LoadClientCA(certFile, keyFile string) (*cipher.CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, &ClientCertError{Field: "client_ca_file", File: certFile, Err: err}
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, &ClientCertError{Field: "client_ca_key_file", File: keyFile, Err: err}
	}
	ca, err := cipher.LoadCA(certPEM, keyPEM)
	if err != nil {
		return nil, &ClientCertError{Field: "client_ca_file", File: certFile, Err: err}
	}
	return ca, nil
}

func newClientCert(cert tls.Certificate, source string) *ClientCert {
	leaf := cert.Leaf
	if leaf == nil {
		leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	sum := sha256.Sum256(cert.Certificate[0])
	kt, _ := cipher.KeyTypeOf(leaf.PublicKey)
	return &ClientCert{Cert: cert, Record: metrics.ClientCert{
		Key: kt.String(), SHA256: hex.EncodeToString(sum[:]), Source: source,
	}}
}

// Apply makes base present the certificate whenever the server asks for
// one, whatever CAs the server names (a device that lists other CAs then
// refuses it, an error the run reports, instead of getting no
// certificate), or none, as crypto/tls would, and count the requests. A
// nil ClientCert leaves base as it is.
func (c *ClientCert) Apply(base *tls.Config) {
	if c == nil {
		return
	}
	base.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		c.requests.Add(1)
		if c.none {
			return &tls.Certificate{}, nil
		}
		return &c.Cert, nil
	}
}

// NotAsked is the error of a run whose profile requires a client
// certificate (client_cert) when the server did not ask for it: the run
// would not measure mutual TLS.
func NotAsked(p *profiles.Profile, handshakes, requests int64) error {
	return &profiles.MismatchError{Profile: p.Name, Field: "client_cert",
		Want: fmt.Sprintf("%s, asked for on every full handshake", p.ClientCertKey()),
		Got:  fmt.Sprintf("not asked for (%d requests in %d full handshakes)", requests, handshakes)}
}

// Recorded returns what the record says of the certificate, with the
// requests so far; nil when there is none.
func (c *ClientCert) Recorded() *metrics.ClientCert {
	if c == nil || c.none {
		return nil
	}
	r := c.Record
	r.Requested = c.Requests()
	return &r
}
