package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Stage is where in a transaction an error happened; it decides what a
// timeout means.
type Stage int

const (
	StageConnect Stage = iota
	StageHandshake
	StageResponse
)

// rfcAlerts are the TLS alert names of the RFCs (8446 and earlier), the
// names users know from OpenSSL and packet captures.
var rfcAlerts = map[uint8]string{
	0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 21: "decryption_failed",
	22: "record_overflow", 30: "decompression_failure", 40: "handshake_failure", 41: "no_certificate",
	42: "bad_certificate", 43: "unsupported_certificate", 44: "certificate_revoked", 45: "certificate_expired",
	46: "certificate_unknown", 47: "illegal_parameter", 48: "unknown_ca", 49: "access_denied",
	50: "decode_error", 51: "decrypt_error", 60: "export_restriction", 70: "protocol_version",
	71: "insufficient_security", 80: "internal_error", 86: "inappropriate_fallback", 90: "user_canceled",
	100: "no_renegotiation", 109: "missing_extension", 110: "unsupported_extension",
	111: "certificate_unobtainable", 112: "unrecognized_name", 113: "bad_certificate_status_response",
	114: "bad_certificate_hash_value", 115: "unknown_psk_identity", 116: "certificate_required",
	120: "no_application_protocol", 121: "ech_required",
}

// alertNames maps crypto/tls's alert texts ("tls: protocol version not
// supported") to class suffixes ("protocol_version"); crypto/tls does not
// export the alert code of a received alert, only its text.
var alertNames = func() map[string]string {
	m := make(map[string]string, 256)
	for i := 0; i < 256; i++ {
		name, ok := rfcAlerts[uint8(i)]
		if !ok {
			name = fmt.Sprintf("alert_%d", i)
		}
		m[tls.AlertError(i).Error()] = name
	}
	return m
}()

// alertClass returns the class of a received TLS alert given crypto/tls's
// text for it, or "" if the text is not an alert.
func alertClass(text string) vocab.Class {
	if n, ok := alertNames[text]; ok {
		return vocab.TLSAlert(n)
	}
	return ""
}

// clientCertAlerts are the alerts a server sends about the client's
// certificate: the client verifies the server's, so a certificate alert
// received is the server refusing the client's certificate (mutual TLS), or
// its absence (certificate_required, TLS 1.3). A TLS 1.2 OpenSSL server
// that got no certificate sends handshake_failure, which stays an alert:
// it means other things too.
var clientCertAlerts = map[string]bool{
	"bad_certificate": true, "unsupported_certificate": true, "certificate_revoked": true,
	"certificate_expired": true, "certificate_unknown": true, "unknown_ca": true, "certificate_required": true,
}

// clientCertRefused returns ClassClientCertRefused for the class of a
// received alert about the client's certificate, else c.
func clientCertRefused(c vocab.Class) vocab.Class {
	if name, ok := c.Alert(); ok && clientCertAlerts[name] {
		return vocab.ClassClientCertRefused
	}
	return c
}

// Classify maps a transaction error to its class. Callers map their own
// typed errors (a profile mismatch, a bad status) before calling it.
func Classify(stage Stage, err error) vocab.Class {
	if err == nil {
		return ""
	}
	// A TLS alert sent by the peer: crypto/tls reports it as a net.OpError
	// with Op "remote error" wrapping an unexported alert type.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil {
		if c := alertClass(op.Err.Error()); c != "" {
			return clientCertRefused(c)
		}
	}
	var ae tls.AlertError
	if errors.As(err, &ae) {
		return clientCertRefused(alertClass(ae.Error()))
	}
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	if errors.As(err, &hne) {
		// A trusted chain for another name (the chain is verified
		// first: profiles.ClientConfig): the device's choice of
		// certificate for the name is wrong, not its chain.
		return vocab.ClassCertName
	}
	if errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &cie) {
		return vocab.ClassCertificate
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return vocab.ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return vocab.ClassReset
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		switch stage {
		case StageConnect:
			return vocab.ClassConnectTimeout
		case StageHandshake:
			return vocab.ClassHandshakeTimeout
		}
		return vocab.ClassReadTimeout
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return vocab.ClassEOF
	}
	return vocab.ClassOther
}
