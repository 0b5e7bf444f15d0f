package cipher

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"
)

// KeyType is a certificate key algorithm and size: "ECDSA P-256",
// "RSA 2048", "Ed25519". A KeyType with Bits == 0 and no Curve matches any
// key of its algorithm ("ECDSA", "RSA").
type KeyType struct {
	Alg   string // "ECDSA", "RSA" or "Ed25519"
	Curve string // "P-256", "P-384", "P-521" for ECDSA
	Bits  int    // modulus size for RSA
}

// String returns the canonical form: "ECDSA P-256", "RSA 2048", "ECDSA".
func (k KeyType) String() string {
	switch {
	case k.Curve != "":
		return k.Alg + " " + k.Curve
	case k.Bits != 0:
		return fmt.Sprintf("%s %d", k.Alg, k.Bits)
	}
	return k.Alg
}

// IsZero reports whether k is unset.
func (k KeyType) IsZero() bool { return k.Alg == "" }

// Matches reports whether a concrete key type got satisfies k; an
// algorithm-only k matches any size.
func (k KeyType) Matches(got KeyType) bool {
	if k.Alg != got.Alg {
		return false
	}
	return (k.Curve == "" || k.Curve == got.Curve) && (k.Bits == 0 || k.Bits == got.Bits)
}

// Concrete reports whether k names a size, so that a key can be generated.
func (k KeyType) Concrete() bool {
	return k.Alg == "Ed25519" || k.Curve != "" || k.Bits != 0
}

// ParseKeyType accepts "ECDSA P-256", "ecdsa-p256", "ecdsa-p384", "RSA 2048",
// "rsa2048", "rsa-3072", "Ed25519", and the algorithm alone ("ECDSA", "RSA").
func ParseKeyType(s string) (KeyType, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	n = strings.NewReplacer(" ", "", "-", "", "_", "").Replace(n)
	switch curve := curveNames[strings.TrimPrefix(strings.TrimPrefix(n, "ecdsa"), "ec")]; {
	case n == "ed25519":
		return KeyType{Alg: "Ed25519"}, nil
	case n == "ecdsa" || n == "ec":
		return KeyType{Alg: "ECDSA"}, nil
	case n == "rsa":
		return KeyType{Alg: "RSA"}, nil
	case strings.HasPrefix(n, "ec") && curve != "":
		return KeyType{Alg: "ECDSA", Curve: curve}, nil
	case n == "rsa2048" || n == "rsa3072" || n == "rsa4096":
		bits, _ := strconv.Atoi(n[3:])
		return KeyType{Alg: "RSA", Bits: bits}, nil
	}
	return KeyType{}, fmt.Errorf("unknown certificate key %q (known: ECDSA P-256, ECDSA P-384, ECDSA P-521, "+
		"RSA 2048, RSA 3072, RSA 4096, Ed25519, or ECDSA/RSA alone for any size)", s)
}

// curveNames are the names of the ECDSA curves, lower case, without
// separators.
var curveNames = map[string]string{"p256": "P-256", "prime256v1": "P-256", "secp256r1": "P-256",
	"p384": "P-384", "secp384r1": "P-384", "p521": "P-521", "secp521r1": "P-521"}

// curves are the ECDSA curves a key can be generated on.
var curves = map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}

// KeyTypeOf describes a public key; ok is false for key types the catalogue
// does not know.
func KeyTypeOf(pub crypto.PublicKey) (KeyType, bool) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		return KeyType{Alg: "ECDSA", Curve: k.Curve.Params().Name}, true
	case *rsa.PublicKey:
		return KeyType{Alg: "RSA", Bits: k.N.BitLen()}, true
	case ed25519.PublicKey:
		return KeyType{Alg: "Ed25519"}, true
	}
	return KeyType{}, false
}

// GenerateKey makes a new private key of type k from crypto/rand.
func GenerateKey(k KeyType) (crypto.Signer, error) {
	switch k.Alg {
	case "ECDSA":
		c, ok := curves[k.Curve]
		if !ok {
			return nil, fmt.Errorf("cannot generate ECDSA key without a curve (%s)", k)
		}
		return ecdsa.GenerateKey(c, rand.Reader)
	case "RSA":
		if k.Bits < 2048 {
			return nil, fmt.Errorf("cannot generate RSA key of %d bits", k.Bits)
		}
		return rsa.GenerateKey(rand.Reader, k.Bits)
	case "Ed25519":
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	}
	return nil, fmt.Errorf("cannot generate key of type %q", k)
}

// CA is a certificate authority held in memory. Its private key is never
// written anywhere by this package. A CA is safe for concurrent use.
type CA struct {
	Cert *x509.Certificate
	key  crypto.Signer
}

// NewCA generates a self-signed CA of key type k, valid from an hour ago for
// validity.
func NewCA(k KeyType, commonName string, validity time.Duration) (*CA, error) {
	key, err := GenerateKey(k)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"tlsbench"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("cipher: creating CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key}, nil
}

// CertPEM returns the CA certificate in PEM form, for clients (--cacert).
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// Pool returns a fresh pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf issues a server certificate with a new key of type k for hosts (DNS
// names or IP addresses), with the chain [leaf, CA] ready for crypto/tls.
func (ca *CA) Leaf(k KeyType, hosts []string, validity time.Duration) (tls.Certificate, error) {
	now := time.Now()
	return ca.issue(k, hosts, now.Add(-time.Hour), now.Add(validity))
}

func (ca *CA) issue(k KeyType, hosts []string, notBefore, notAfter time.Time) (tls.Certificate, error) {
	key, err := GenerateKey(k)
	if err != nil {
		return tls.Certificate{}, err
	}
	cn := "tlsbench"
	if len(hosts) > 0 {
		cn = hosts[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"tlsbench"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if k.Alg == "RSA" {
		// RSA key exchange encrypts the premaster secret to this key.
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cipher: issuing %s leaf: %w", k, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

// Expired issues a leaf like Leaf whose validity ended an hour ago (for
// fault injection: clients that verify must refuse it).
func (ca *CA) Expired(k KeyType, hosts []string) (tls.Certificate, error) {
	return ca.issue(k, hosts, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
}

// KeyPEM encodes a private key as PKCS #8 PEM. Callers that write it to disk
// must use mode 0600.
func KeyPEM(key crypto.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ChainPEM encodes a certificate chain as concatenated PEM blocks.
func ChainPEM(c tls.Certificate) []byte {
	var out []byte
	for _, der := range c.Certificate {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return n.Add(n, big.NewInt(1))
}
