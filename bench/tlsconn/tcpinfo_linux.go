package tlsconn

import (
	"encoding/binary"
	"syscall"
	"unsafe"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// TCPInfo is true where the kernel's account of each connection (TCP_INFO)
// is read at its close: Linux.
const TCPInfo = true

// Offsets in struct tcp_info (linux/tcp.h) of the fields read at a close.
const (
	tcpInfoRTT          = 68  // tcpi_rtt, µs
	tcpInfoTotalRetrans = 100 // tcpi_total_retrans
	tcpClose            = 7   // TCP_CLOSE: the connection is gone (a RST received)
)

// tcpInfo reads the connection's struct tcp_info, as far as tcpInfoLen.
func tcpInfo(fd uintptr, info *[tcpInfoLen]byte) bool {
	l := uint32(len(info))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
		uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&l)), 0)
	return e == 0 && l >= tcpInfoLen
}

// noteConnect notes, as connect has just returned, the SYNs the kernel
// retransmitted: nothing else has been sent yet, so they are all of
// tcpi_total_retrans (tcp_retransmit_skb counts a SYN resent by the
// retransmission timer like any segment). One system call.
func (c *countingConn) noteConnect() {
	if !c.stamps {
		return
	}
	var info [tcpInfoLen]byte
	if tcpInfo(c.arr.fd, &info) {
		c.syn = binary.NativeEndian.Uint32(info[tcpInfoTotalRetrans:])
	}
}

// tcpAtClose reads the kernel's account of the connection before it is
// closed; ok is false when it cannot (not a TCP socket of ours).
func (c *countingConn) tcpAtClose() (t metrics.TCPConn, ok bool) {
	if !c.stamps {
		return t, false
	}
	var info [tcpInfoLen]byte
	if !tcpInfo(c.arr.fd, &info) {
		return t, false
	}
	t.Retransmits = binary.NativeEndian.Uint32(info[tcpInfoTotalRetrans:])
	t.SynRetransmits = min(c.syn, t.Retransmits)
	t.RTTUS = binary.NativeEndian.Uint32(info[tcpInfoRTT:])
	// A connection the client has not closed is in TCP_CLOSE only when
	// the kernel ended it: the peer's RST (tcp_reset), or the
	// retransmissions' timeout, which the run's deadlines come before.
	t.Reset = info[0] == tcpClose
	return t, true
}
