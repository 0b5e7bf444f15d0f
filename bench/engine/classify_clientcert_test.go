package engine_test

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestClassifyClientCertRefused: the certificate alerts a server sends are
// about the client's certificate (mutual TLS): client_cert_refused, at the
// handshake (TLS 1.2) or on the first read (TLS 1.3); handshake_failure,
// which means other things too, stays an alert.
func TestClassifyClientCertRefused(t *testing.T) {
	remote := func(code uint8) error { return &net.OpError{Op: "remote error", Err: tls.AlertError(code)} }
	for _, tc := range []struct {
		stage engine.Stage
		err   error
		want  vocab.Class
	}{
		{engine.StageHandshake, remote(42), vocab.ClassClientCertRefused}, // bad_certificate
		{engine.StageHandshake, remote(48), vocab.ClassClientCertRefused}, // unknown_ca
		{engine.StageResponse, remote(116), vocab.ClassClientCertRefused}, // certificate_required
		{engine.StageResponse, remote(45), vocab.ClassClientCertRefused},  // certificate_expired
		{engine.StageHandshake, remote(40), vocab.TLSAlert("handshake_failure")},
		{engine.StageHandshake, remote(70), vocab.TLSAlert("protocol_version")},
		{engine.StageHandshake, tls.AlertError(42), vocab.ClassClientCertRefused},
	} {
		if got := engine.Classify(tc.stage, tc.err); got != tc.want {
			t.Errorf("Classify(%v, %v) = %q, want %q", tc.stage, tc.err, got, tc.want)
		}
	}
}
