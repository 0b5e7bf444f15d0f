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
	"sync"
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

// leafKeys holds the process's leaf keys, one per key type (its String).
var leafKeys sync.Map // string → *leafKeyOnce

type leafKeyOnce struct {
	once sync.Once
	key  crypto.Signer
	err  error
}

// LeafKey returns the process's private key of type k for leaf
// certificates: generated on the first call for k, then the same key. An
// RSA 4096 key takes a second or more to generate (several on a busy
// machine, more under -race), and a reference target makes a leaf per key
// type each time it starts, many times in a test binary. Sharing a leaf key
// between certificates, and between CAs, trusts nothing more: a certificate
// is verified by its issuer's key, and CA keys are never shared. The key
// stays in memory (unless a caller writes it, as the test DUTs' files do).
func LeafKey(k KeyType) (crypto.Signer, error) {
	v, _ := leafKeys.LoadOrStore(k.String(), &leafKeyOnce{})
	e := v.(*leafKeyOnce)
	e.once.Do(func() { e.key, e.err = GenerateKey(k) })
	return e.key, e.err
}

// CA is a certificate authority held in memory: a root, or an intermediate
// CA one issued (Intermediate). Its private key is never written anywhere by
// this package, nor shared with another CA. A CA is safe for concurrent use.
type CA struct {
	Cert *x509.Certificate
	key  crypto.Signer
	// chain is what a leaf of this CA is served with after itself: this
	// CA's certificate, then its issuers' up to the root, inclusive.
	chain [][]byte
}

// NewCA generates a self-signed CA of key type k, valid from an hour ago for
// validity, that issues leaves only (path length 0).
func NewCA(k KeyType, commonName string, validity time.Duration) (*CA, error) {
	return NewRootCA(k, commonName, validity, 0)
}

// NewRootCA is NewCA for a root under which up to intermediates CAs may
// chain (its path length constraint): Intermediate issues them.
func NewRootCA(k KeyType, commonName string, validity time.Duration, intermediates int) (*CA, error) {
	if intermediates < 0 {
		return nil, fmt.Errorf("cipher: a CA allows 0 or more intermediate CAs below it, not %d", intermediates)
	}
	key, err := GenerateKey(k)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := caTemplate(commonName, now.Add(-time.Hour), now.Add(validity), intermediates)
	return newCA(tmpl, tmpl, key, key, nil)
}

// Intermediate issues an intermediate CA of key type k (with a new key, never
// a cached one), valid like the others from an hour ago for validity. Its
// leaves are served with the chain [leaf, intermediate(s)…, root]. ca's path
// length constraint must allow it (NewRootCA).
func (ca *CA) Intermediate(k KeyType, commonName string, validity time.Duration) (*CA, error) {
	if ca.Cert.MaxPathLen <= 0 {
		return nil, fmt.Errorf("cipher: CA %q may not issue intermediate CAs (path length %d)",
			ca.Cert.Subject.CommonName, max(ca.Cert.MaxPathLen, 0))
	}
	key, err := GenerateKey(k)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := caTemplate(commonName, now.Add(-time.Hour), now.Add(validity), ca.Cert.MaxPathLen-1)
	return newCA(tmpl, ca.Cert, key, ca.key, ca.chain)
}

// caTemplate is a CA certificate's template; pathLen intermediate CAs may
// chain below it.
func caTemplate(commonName string, notBefore, notAfter time.Time, pathLen int) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"tlsbench"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            pathLen,
		MaxPathLenZero:        pathLen == 0,
	}
}

// newCA signs tmpl (holding key's public half) with parent's key and returns
// the CA, whose chain is its own certificate before the issuer's chain.
func newCA(tmpl, parent *x509.Certificate, key, parentKey crypto.Signer, issuerChain [][]byte) (*CA, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("cipher: creating CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key, chain: append([][]byte{der}, issuerChain...)}, nil
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

// Leaf issues a server certificate for hosts (DNS names or IP addresses),
// with the chain [leaf, CA…] ready for crypto/tls: [leaf, root] from a root,
// [leaf, intermediate, root] from an intermediate. Its key is the process's
// leaf key of type k (LeafKey).
func (ca *CA) Leaf(k KeyType, hosts []string, validity time.Duration) (tls.Certificate, error) {
	now := time.Now()
	return ca.issue(k, hosts, now.Add(-time.Hour), now.Add(validity))
}

func (ca *CA) issue(k KeyType, hosts []string, notBefore, notAfter time.Time) (tls.Certificate, error) {
	key, err := LeafKey(k)
	if err != nil {
		return tls.Certificate{}, err
	}
	cn := "tlsbench"
	if len(hosts) > 0 {
		cn = hosts[0]
	}
	tmpl := &x509.Certificate{
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if k.Alg == "RSA" {
		// RSA key exchange encrypts the premaster secret to this key.
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	addHosts(tmpl, hosts)
	return ca.sign(tmpl, cn, key, ca.chain, fmt.Sprintf("issuing %s leaf", k))
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

// addHosts names hosts in a leaf's template: IP addresses as such, the
// others as DNS names.
func addHosts(tmpl *x509.Certificate, hosts []string) {
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
}
