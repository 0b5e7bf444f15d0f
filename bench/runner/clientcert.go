package runner

import (
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// checkClientCertAsked fails a preflight that passed when profile p
// requires a client certificate (client_cert) and the server did not ask
// for it (cc) on every one of its handshakes: the run would measure TLS
// without the client's certificate under the name of mutual TLS. The class
// is a mismatch, as for any other expectation of the profile not met.
func checkClientCertAsked(pf *metrics.Preflight, p *profiles.Profile, cc *tlsconn.ClientCert) {
	if !pf.OK || cc == nil || p.ClientCertKey().IsZero() || cc.Requests() >= pf.Handshakes {
		return
	}
	err := tlsconn.NotAsked(p, pf.Handshakes, cc.Requests())
	pf.OK, pf.Class, pf.Error = false, vocab.ClassMismatch, err.Error()
}
