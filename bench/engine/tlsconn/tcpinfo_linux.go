package tlsconn

import (
	"context"
	"encoding/binary"
	"net"
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

// tcpDialer keeps, for a connect that fails, a duplicate of its socket:
// Go closes the socket of a failed connect before Dial returns, and with
// it the account of the SYNs the kernel sent again (a SYN dropped by a
// full accept queue, the path, or a connect that timed out). The
// duplicate (F_DUPFD_CLOEXEC, made before connect) keeps the socket until
// its TCP_INFO is read. Two system calls per connection.
type tcpDialer struct {
	dup   int // -1: none
	dupFn func(fd uintptr)
}

// control is the net.Dialer's ControlContext: it duplicates the socket.
func (t *tcpDialer) control(_ context.Context, _, _ string, c syscall.RawConn) error {
	t.release()
	return c.Control(t.dupFn)
}

// dupFD duplicates fd into t.dup.
func (t *tcpDialer) dupFD(fd uintptr) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0)
	if e == 0 {
		t.dup = int(r)
	}
}

// failed returns the kernel's account of the socket of a connect that
// failed, and releases it.
func (t *tcpDialer) failed() (c metrics.TCPConn, ok bool) {
	if t.dup < 0 {
		return c, false
	}
	var info [tcpInfoLen]byte
	ok = tcpInfo(uintptr(t.dup), &info)
	t.release()
	if !ok {
		return c, false
	}
	// No data was sent: every retransmission was a SYN.
	c.Retransmits = binary.NativeEndian.Uint32(info[tcpInfoTotalRetrans:])
	c.SynRetransmits = c.Retransmits
	c.Reset = info[0] == tcpClose // refused: a RST answered the SYN
	return c, true
}

// release closes the duplicate, if any.
func (t *tcpDialer) release() {
	if t.dup >= 0 {
		syscall.Close(t.dup)
		t.dup = -1
	}
}

// setup makes d's dialer keep failed connects' sockets.
func (t *tcpDialer) setup(d *net.Dialer) {
	t.dup, t.dupFn = -1, t.dupFD
	d.ControlContext = t.control
}
