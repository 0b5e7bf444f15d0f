package cipher

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
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
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"tlsbench"}},
		NotBefore:    old.NotBefore,
		NotAfter:     old.NotAfter,
		KeyUsage:     old.KeyUsage,
		ExtKeyUsage:  old.ExtKeyUsage,
	}
	addHosts(tmpl, hosts)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, signer.Public(), ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cipher: reissuing a leaf for %s: %w", hosts[0], err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: leaf.PrivateKey, Leaf: parsed}, nil
}
