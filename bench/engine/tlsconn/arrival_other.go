//go:build !linux

package tlsconn

import (
	"net"
	"time"
)

// Elsewhere than Linux the first byte's arrival is when the client read it:
// arrival notes nothing.
type arrival struct {
	at     time.Time
	merged bool
}

func (a *arrival) enable(net.Conn) bool { return false }
func (a *arrival) countSegments()       {}
func (a *arrival) peek()                {}
func (a *arrival) reset()               {}
