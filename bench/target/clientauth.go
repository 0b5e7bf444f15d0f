package target

import (
	"crypto/tls"
	"errors"

	"github.com/tlsbench/tlsbench/profiles"
)

// Client certificates (mutual TLS, docs/MTLS.md). Config.ClientAuth, when
// set, applies to every listener; left at NoClientCert with ClientCAs set,
// the listeners of the profiles that require a client certificate
// (client_cert) require one verified by ClientCAs, and the others ask for
// none: each profile is served as it says.

// checkClientAuth refuses a mode that verifies client certificates without
// ClientCAs: crypto/tls would verify them against the system's roots.
func checkClientAuth(cfg Config) error {
	switch cfg.ClientAuth {
	case tls.VerifyClientCertIfGiven, tls.RequireAndVerifyClientCert:
		if cfg.ClientCAs == nil {
			return errors.New("target: verifying client certificates needs the CAs that issue them (ClientCAs)")
		}
	}
	return nil
}

// withClientAuth sets the client authentication of profile p's listener
// in its configuration cfg, and returns cfg.
func (t *Target) withClientAuth(p *profiles.Profile, cfg *tls.Config) *tls.Config {
	mode := t.cfg.ClientAuth
	if mode == tls.NoClientCert && t.cfg.ClientCAs != nil && !p.ClientCertKey().IsZero() {
		mode = tls.RequireAndVerifyClientCert
	}
	cfg.ClientAuth, cfg.ClientCAs = mode, t.cfg.ClientCAs
	return cfg
}

// countClientCert counts a full handshake whose client certificate was
// verified (a certificate only requested, not verified, is not counted).
func (c *tlsConn) countClientCert(cs *tls.ConnectionState) {
	if len(cs.VerifiedChains) > 0 {
		c.client = true
		c.tl.l.clientCerts.Add(1)
	}
}

// uncountClientCert takes back a connection that came to read /stats, as
// its handshake is.
func (c *tlsConn) uncountClientCert() {
	if c.client {
		c.client = false
		c.tl.l.clientCerts.Add(-1)
	}
}
