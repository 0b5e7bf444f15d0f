package bench

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// The error classes. Every failed transaction is counted in exactly one; the
// set is bounded (tls_alert:<name> takes the names of the TLS alerts).
const (
	ClassRefused          = "refused"
	ClassConnectTimeout   = "connect_timeout"
	ClassReset            = "reset"
	ClassHandshakeTimeout = "handshake_timeout"
	ClassCertificate      = "certificate"
	ClassMismatch         = "mismatch"
	ClassResumed          = "resumed"
	ClassStatus           = "status"
	ClassBodySize         = "body_size"
	ClassReadTimeout      = "read_timeout"
	ClassEOF              = "eof"
	ClassOther            = "other"
	alertPrefix           = "tls_alert:"
)

// Stage is where in a transaction an error happened; it decides what a
// timeout means.
type Stage int

const (
	StageConnect Stage = iota
	StageHandshake
	StageResponse
)

// alertNames maps crypto/tls's alert texts ("tls: handshake failure") to
// class suffixes ("handshake_failure").
var alertNames = func() map[string]string {
	m := make(map[string]string, 256)
	for i := 0; i < 256; i++ {
		text := tls.AlertError(i).Error()
		name := strings.TrimPrefix(text, "tls: ")
		name = strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(name)
		m[text] = name
	}
	return m
}()

// AlertClass returns the class of a received TLS alert given crypto/tls's
// text for it, or "" if the text is not an alert.
func AlertClass(text string) string {
	if n, ok := alertNames[text]; ok {
		return alertPrefix + n
	}
	return ""
}

// Classify maps a transaction error to its class. Callers map their own
// typed errors (a profile mismatch, a bad status) before calling it.
func Classify(stage Stage, err error) string {
	if err == nil {
		return ""
	}
	// A TLS alert sent by the peer: crypto/tls reports it as a net.OpError
	// with Op "remote error" wrapping an unexported alert type.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil {
		if c := AlertClass(op.Err.Error()); c != "" {
			return c
		}
	}
	var ae tls.AlertError
	if errors.As(err, &ae) {
		return AlertClass(ae.Error())
	}
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	if errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &hne) || errors.As(err, &cie) {
		return ClassCertificate
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ClassReset
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() || errors.Is(err, errTimeout) {
		switch stage {
		case StageConnect:
			return ClassConnectTimeout
		case StageHandshake:
			return ClassHandshakeTimeout
		}
		return ClassReadTimeout
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ClassEOF
	}
	return ClassOther
}

// errTimeout lets operations mark their own deadline expiries.
var errTimeout = errors.New("deadline exceeded")

// ErrTimeout is an error that Classify treats as a timeout of the stage.
var ErrTimeout = errTimeout
