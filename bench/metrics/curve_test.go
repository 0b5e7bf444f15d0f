package metrics_test

import (
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

func TestGroupOrKey(t *testing.T) {
	for _, tt := range []struct {
		n    metrics.Negotiated
		want string
	}{
		// ECDHE groups by their OpenSSL names.
		{metrics.Negotiated{Group: "P-384"}, "secp384r1 (P-384)"},
		{metrics.Negotiated{Group: "P-256"}, "prime256v1 (P-256)"},
		// RSA key exchange: the key.
		{metrics.Negotiated{Group: "none", CertKey: "RSA 2048"}, "— (RSA 2048 key exchange)"},
		// Others as they are; nothing negotiated, nothing.
		{metrics.Negotiated{Group: "X25519MLKEM768"}, "X25519MLKEM768"},
		{metrics.Negotiated{}, ""},
	} {
		if got := tt.n.GroupOrKey(); got != tt.want {
			t.Errorf("GroupOrKey(%+v) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
