package target

import (
	"crypto/x509"

	"github.com/tlsbench/tlsbench/profiles"
)

// chainDepth is profiles.ChainDepth of a chain in DER (0 if it does not
// parse): the depth a client counts of a certificate given to the target.
func chainDepth(chain [][]byte) int {
	var certs []*x509.Certificate
	for _, der := range chain {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return 0
		}
		certs = append(certs, c)
	}
	return profiles.ChainDepth(certs)
}
