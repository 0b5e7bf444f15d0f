//go:build !linux

package tlsconn

import "github.com/tlsbench/tlsbench/bench/metrics"

// TCPInfo is true where the kernel's account of each connection (TCP_INFO)
// is read at its close: Linux only.
const TCPInfo = false

func (c *countingConn) noteConnect() {}

func (c *countingConn) tcpAtClose() (metrics.TCPConn, bool) { return metrics.TCPConn{}, false }
