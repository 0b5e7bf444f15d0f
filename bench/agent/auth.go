package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

// The environment that carries an agent's credentials (see Credentials):
// the run's token, and the PEM of the CA that issued the collector's
// certificate when it serves https.
const (
	EnvToken       = "TLSBENCH_TOKEN"
	EnvCollectorCA = "TLSBENCH_COLLECTOR_CA"
)

// tokenBytes is the randomness of a token NewToken makes: 256 bits.
const tokenBytes = 32

// MinTokenLen is the shortest token accepted: 22 base64 characters are
// 128 bits.
const MinTokenLen = 22

// The headers of a signed push. The token never travels: Authorization
// carries an HMAC-SHA256, made with the token, of the request's method,
// path, length, body digest (HeaderContentSHA256) and collector session
// (HeaderSession). A collector checks the HMAC before it reads the body,
// then the body against the digest.
//
// Each batch a collector opens has a new random session, which an agent
// learns from a signed hello (see Hello): a push replayed from an earlier
// collection carries its session and is refused.
const (
	AuthScheme          = "TLSBench-HMAC-SHA256"
	HeaderContentSHA256 = "X-Tlsbench-Content-Sha256"
	HeaderSession       = "X-Tlsbench-Session"
)

// Credentials are what an agent pushes its record with.
type Credentials struct {
	// Token is the run's secret, shared by the coordinator and its agents.
	Token string
	// CA, for an https collector, is the PEM of its CA; nil: the system's.
	CA []byte
	// Session is the collector's session the push is signed for (Hello);
	// empty, Push asks for it first.
	Session string
}

// tokenError is a token that cannot authenticate a run.
type tokenError struct{ Reason string }

func (e *tokenError) Error() string { return "token: " + e.Reason }

// errNoToken is a collector or an agent without the run's token.
var errNoToken = &tokenError{"none given: the collector accepts only records signed with the run's token"}

// NewToken returns a new random token: tokenBytes from crypto/rand,
// base64url.
func NewToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// CheckToken returns why tok cannot be a run's token: empty, shorter than
// MinTokenLen, or holding spaces or control characters.
func CheckToken(tok string) error {
	switch {
	case tok == "":
		return errNoToken
	case len(tok) < MinTokenLen:
		return &tokenError{fmt.Sprintf("%d characters, want at least %d (128 bits)", len(tok), MinTokenLen)}
	case strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r >= 0x7f }):
		return &tokenError{"spaces, control or non-ASCII characters"}
	}
	return nil
}

// CredentialsFromEnv returns the credentials in an agent's environment
// (EnvToken, EnvCollectorCA), read with getenv.
func CredentialsFromEnv(getenv func(string) string) (Credentials, error) {
	c := Credentials{Token: getenv(EnvToken)}
	if err := CheckToken(c.Token); err != nil {
		return c, &envError{EnvToken, err}
	}
	if ca := getenv(EnvCollectorCA); ca != "" {
		c.CA = []byte(ca)
		if _, err := c.pool(); err != nil {
			return c, &envError{EnvCollectorCA, err}
		}
	}
	return c, nil
}

// Env returns the variables that give c to an agent process.
func (c Credentials) Env() []string {
	env := []string{EnvToken + "=" + c.Token}
	if len(c.CA) > 0 {
		env = append(env, EnvCollectorCA+"="+string(c.CA))
	}
	return env
}

func (c Credentials) pool() (*x509.CertPool, error) {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(c.CA) {
		return nil, errors.New("no PEM certificate")
	}
	return p, nil
}

// signature returns the HMAC of a request: method, path, length, the
// body's SHA-256 and the collector session, made with token.
func signature(token, method, path string, length int64, sum []byte, session string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "%s\n%s\n%d\n%x\n%s", method, path, length, sum, session)
	return m.Sum(nil)
}

// sign sets the headers of a signed request with body on req, for the
// session c.Session.
func (c Credentials) sign(req *http.Request, body []byte) {
	sum := sha256.Sum256(body)
	mac := signature(c.Token, req.Method, req.URL.EscapedPath(), int64(len(body)), sum[:], c.Session)
	req.Header.Set("Authorization", AuthScheme+" "+hex.EncodeToString(mac))
	req.Header.Set(HeaderContentSHA256, hex.EncodeToString(sum[:]))
	req.Header.Set(HeaderSession, c.Session)
}

// errStaleSession is a request signed with the token for another session of
// the collector: an earlier collection's push, replayed.
var errStaleSession = errors.New("the push was signed for another collection (session): " +
	"a record from an earlier run, or one replayed, is not taken; an agent asks for the session before its load")

// verifyHeaders checks a request's signature against token and session
// before its body is read; it returns the body's announced digest, or why
// the request is refused (errStaleSession: for another session).
func verifyHeaders(token, session string, req *http.Request) ([]byte, error) {
	if token == "" {
		return nil, errors.New("this collector has no token: it takes no record")
	}
	auth := req.Header.Get("Authorization")
	scheme, macHex, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, AuthScheme) {
		return nil, errors.New("the push is not signed with the run's token (Authorization: " + AuthScheme + ")")
	}
	mac, err1 := hex.DecodeString(macHex)
	sum, err2 := hex.DecodeString(req.Header.Get(HeaderContentSHA256))
	if err1 != nil || err2 != nil || len(sum) != sha256.Size {
		return nil, errors.New("malformed signature headers")
	}
	want := signature(token, req.Method, req.URL.EscapedPath(), req.ContentLength, sum, session)
	// hmac.Equal compares in constant time.
	if hmac.Equal(mac, want) {
		return sum, nil
	}
	if claimed := req.Header.Get(HeaderSession); claimed != session {
		stale := signature(token, req.Method, req.URL.EscapedPath(), req.ContentLength, sum, claimed)
		if hmac.Equal(mac, stale) {
			return nil, errStaleSession
		}
	}
	return nil, errors.New("the push is not signed with the run's token")
}

// helloMAC is the collector's proof, in a hello's answer, that it knows
// the token: an HMAC of the session and its start.
func helloMAC(token, session string, began time.Time) string {
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "hello\n%s\n%s", session, began.UTC().Format(time.RFC3339Nano))
	return hex.EncodeToString(m.Sum(nil))
}

// bodyMatches reports, in constant time, whether body has digest sum.
func bodyMatches(body, sum []byte) bool {
	got := sha256.Sum256(body)
	return subtle.ConstantTimeCompare(got[:], sum) == 1
}

// client returns the HTTP client of a push.
func (c Credentials) client() (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if len(c.CA) > 0 {
		p, err := c.pool()
		if err != nil {
			return nil, fmt.Errorf("the collector's CA: %w", err)
		}
		t.TLSClientConfig = &tls.Config{RootCAs: p, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Timeout: pushTimeout, Transport: t}, nil
}

// CollectorTLS makes the collector's certificate for a run: a new CA and a
// leaf for hosts (the names or addresses the agents reach it at). The
// config serves the leaf; caPEM goes to the agents (Credentials.CA).
func CollectorTLS(hosts []string, validity time.Duration) (cfg *tls.Config, caPEM []byte, err error) {
	k := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	ca, err := cipher.NewCA(k, "tlsbench collector CA", validity)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := ca.Leaf(k, hosts, validity)
	if err != nil {
		return nil, nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}, ca.CertPEM(), nil
}
