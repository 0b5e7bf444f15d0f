package cipher

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"time"
)

// ClientLeaf issues a client certificate (extended key usage clientAuth,
// which servers that verify client certificates require) with a new key of
// type k and the chain [leaf, CA] ready for crypto/tls.
func (ca *CA) ClientLeaf(k KeyType, commonName string, validity time.Duration) (tls.Certificate, error) {
	key, err := GenerateKey(k)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	notAfter := now.Add(validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter // a leaf outliving its CA would be refused once the CA expires anyway
	}
	tmpl := &x509.Certificate{
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.sign(tmpl, commonName, key, [][]byte{ca.Cert.Raw}, fmt.Sprintf("issuing %s client certificate", k))
}

// sign issues the leaf of tmpl for commonName (a new serial, organization
// tlsbench) with key, signed by the CA, and returns it with the chain
// [leaf, rest…] ready for crypto/tls; what names the act in an error.
func (ca *CA) sign(tmpl *x509.Certificate, commonName string, key crypto.Signer, rest [][]byte, what string) (
	tls.Certificate, error) {
	tmpl.SerialNumber = randomSerial()
	tmpl.Subject = pkix.Name{CommonName: commonName, Organization: []string{"tlsbench"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cipher: %s: %w", what, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: append([][]byte{der}, rest...), PrivateKey: key, Leaf: leaf}, nil
}

// KeyPEM returns the CA's private key as PKCS #8 PEM, for a user who asked
// to keep the CA (callers write it with mode 0600).
func (ca *CA) KeyPEM() ([]byte, error) { return KeyPEM(ca.key) }

// LoadCA makes a CA of a certificate and its private key (PEM, the key
// PKCS #1, PKCS #8 or SEC 1): the certificate must be a CA's (basic
// constraints) that may sign certificates, and the key its own.
func LoadCA(certPEM, keyPEM []byte) (*CA, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	cert := pair.Leaf
	if cert == nil {
		if cert, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, err
		}
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("the certificate %q is not a CA's (no basic constraints CA:TRUE)", cert.Subject)
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("the CA certificate %q may not sign certificates (no keyCertSign usage)", cert.Subject)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("the CA's private key cannot sign")
	}
	return &CA{Cert: cert, key: key}, nil
}
