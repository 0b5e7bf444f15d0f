package target

import (
	"testing"
	"time"
)

// SetH2WriteTimeout sets HTTP/2's write timeout for the test.
func SetH2WriteTimeout(t *testing.T, d time.Duration) {
	old := h2Base.WriteTimeout
	h2Base.WriteTimeout = d
	t.Cleanup(func() { h2Base.WriteTimeout = old })
}
