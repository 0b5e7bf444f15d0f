package cipher

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// Reissue issues a certificate like leaf, one this CA issued (the same
// key, key usages and validity), for other hosts, with the chain [leaf, CA]
// ready for crypto/tls. Many names served with one key cost a signature
// each, not a key each: a thousand names' certificates take a fraction of a
// second, where as many RSA keys would take minutes.
func (ca *CA) Reissue(leaf tls.Certificate, hosts []string) (tls.Certificate, error) {
	signer, ok := leaf.PrivateKey.(crypto.Signer)
	if !ok || leaf.Leaf == nil || len(hosts) == 0 {
		return tls.Certificate{}, errors.New("cipher: reissue needs a parsed leaf with its key, and a host")
	}
	old := leaf.Leaf
	tmpl := &x509.Certificate{NotBefore: old.NotBefore, NotAfter: old.NotAfter, KeyUsage: old.KeyUsage,
		ExtKeyUsage: old.ExtKeyUsage}
	addHosts(tmpl, hosts)
	return ca.sign(tmpl, hosts[0], signer, [][]byte{ca.Cert.Raw}, "reissuing a leaf for "+hosts[0])
}
