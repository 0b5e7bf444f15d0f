package target

import (
	"testing"
	"time"
)

// SetH3CloseWait sets the wait for HTTP/3's handlers at Close for the test.
func SetH3CloseWait(t *testing.T, d time.Duration) {
	old := h3CloseWait
	h3CloseWait = d
	t.Cleanup(func() { h3CloseWait = old })
}
