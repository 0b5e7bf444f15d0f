package engine_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestClassifyCertName: a trusted certificate for another name (an
// x509.HostnameError, as crypto/tls and profiles.ClientConfig wrap it) is
// cert_name; an untrusted or invalid one stays certificate.
func TestClassifyCertName(t *testing.T) {
	leaf := &x509.Certificate{DNSNames: []string{"a.test"}}
	for _, tc := range []struct {
		err  error
		want vocab.Class
	}{
		{&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: leaf, Host: "b.test"}}, vocab.ClassCertName},
		{fmt.Errorf("handshake: %w", x509.HostnameError{Certificate: leaf, Host: "b.test"}), vocab.ClassCertName},
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: leaf}}, vocab.ClassCertificate},
		{&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}},
			vocab.ClassCertificate},
	} {
		if got := engine.Classify(engine.StageHandshake, tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
