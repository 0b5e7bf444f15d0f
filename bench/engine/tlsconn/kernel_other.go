//go:build !linux

package tlsconn

import (
	"net"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
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

// TCPInfo is true where the kernel's account of each connection (TCP_INFO)
// is read at its close: Linux only.
const TCPInfo = false

func (c *countingConn) noteConnect() {}

func (c *countingConn) tcpAtClose() (metrics.TCPConn, bool) { return metrics.TCPConn{}, false }

// tcpDialer notes nothing elsewhere than Linux.
type tcpDialer struct{}

func (t *tcpDialer) setup(*net.Dialer)               {}
func (t *tcpDialer) failed() (metrics.TCPConn, bool) { return metrics.TCPConn{}, false }
func (t *tcpDialer) release()                        {}

// SetRcvLowat does nothing elsewhere than Linux.
func (c *Conn) SetRcvLowat(int) {}

// Queued is 0 elsewhere than Linux: unknown.
func (c *Conn) Queued() int { return 0 }
