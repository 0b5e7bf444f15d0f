//go:build !linux

package tlsconn

import (
	"net"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

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
