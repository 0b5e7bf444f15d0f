package runner

import (
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// checkClientCert reads the preflight in the light of the client
// certificate cc (mutual TLS):
//
//   - a preflight that passed fails, a mismatch as for any other
//     expectation of the profile not met, when profile p requires a client
//     certificate (client_cert) and the server did not ask for it on every
//     full handshake (a resumed session is the certificate's of the
//     handshake that made it: no server asks again): the run would measure
//     TLS without the client's certificate under the name of mutual TLS;
//   - a preflight that failed with handshake_failure after the server asked
//     for a client certificate the run does not have is a refused client
//     certificate: TLS 1.2 servers (OpenSSL's, Go's) send that alert, and
//     not a certificate alert, when they get none.
func checkClientCert(pf *metrics.Preflight, p *profiles.Profile, cc *tlsconn.ClientCert) {
	switch {
	case pf.OK && !cc.None() && !p.ClientCertKey().IsZero() && cc.Requests() < pf.Handshakes-pf.Resumed:
		err := tlsconn.NotAsked(p, pf.Handshakes-pf.Resumed, cc.Requests())
		pf.OK, pf.Class, pf.Error = false, vocab.ClassMismatch, err.Error()
	case !pf.OK && cc.None() && cc.Requests() > 0 && pf.Class == vocab.TLSAlert("handshake_failure"):
		pf.Class = vocab.ClassClientCertRefused
		pf.Error = "the server asked for a client certificate and the run has none: " + pf.Error
	}
}
