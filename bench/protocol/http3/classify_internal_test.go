package http3

import (
	"errors"
	"fmt"
	"testing"

	"github.com/quic-go/quic-go"

	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestClassOf: QUIC's failures that the hostile servers cannot make on
// loopback take their own classes: a stateless reset, no common version, a
// transport error code, a TLS alert the server sent (a certificate alert:
// the client's certificate refused), an HTTP/3 code on the connection or a
// stream, quic-go's own timeouts; a profile mismatch stays one, wrapped.
func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		err      error
		response bool
		want     vocab.Class
	}{
		{&quic.StatelessResetError{}, true, vocab.ClassQUICStatelessReset},
		{&quic.VersionNegotiationError{}, false, vocab.ClassQUICVersion},
		{&quic.TransportError{ErrorCode: quic.ProtocolViolation, Remote: true}, true, vocab.ClassQUICTransport},
		{&quic.TransportError{ErrorCode: 0x100 + 40, Remote: true}, false, vocab.TLSAlert("handshake_failure")},
		{&quic.TransportError{ErrorCode: 0x100 + 116, Remote: true}, false, vocab.ClassClientCertRefused},
		{&quic.TransportError{ErrorCode: noApplicationProtocol}, false, vocab.ClassMismatch},
		{&quic.ApplicationError{ErrorCode: 0x102, Remote: true}, true, vocab.ClassH3},
		{&quic.StreamError{ErrorCode: 0x10c, Remote: true}, true, vocab.ClassH3},
		{&quic.HandshakeTimeoutError{}, false, vocab.ClassQUICHandshakeTimeout},
		{&quic.IdleTimeoutError{}, true, vocab.ClassReadTimeout},
		{fmt.Errorf("x: %w", &profiles.MismatchError{}), false, vocab.ClassMismatch},
		{errors.New("http3: bad frame"), true, vocab.ClassH3},
		{errors.New("something"), false, vocab.ClassOther},
	} {
		if got := classOf(tc.err, tc.response); got != tc.want {
			t.Errorf("%T %v (response %v): %q, want %q", tc.err, tc.err, tc.response, got, tc.want)
		}
	}
}
