// What the Linux kernel tells of a connection: when the data of the next
// read arrived (SO_TIMESTAMPNS, arrival) and its account of the connection
// at its close (TCP_INFO).

package tlsconn

import (
	"context"
	"encoding/binary"
	"net"
	"syscall"
	"time"
	"unsafe"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// arrival notes when the kernel received the data a connection's next read
// returns (SO_TIMESTAMPNS), and whether that time may be a later
// segment's. It is set up once per connection (enable) so that its peeks
// allocate nothing.
type arrival struct {
	rc   syscall.RawConn
	fd   uintptr            // the socket, for the calls that do not wait
	read func(uintptr) bool // peek's callback, made once
	// count: the data segments received before the request were noted
	// (base), so that peek sets merged.
	count  bool
	base   uint32
	at     time.Time // the peeked stamp; zero when none
	merged bool
	one    [1]byte
	oob    [arrivalOOB]byte
}

// arrivalOOB is the control buffer of one SCM_TIMESTAMPNS message.
const arrivalOOB = 64

// enable asks the kernel to stamp the connection's received packets; it
// reports false when it cannot (not TCP, or the option refused).
func (a *arrival) enable(raw net.Conn) bool {
	tc, ok := raw.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		a.fd = fd
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return false
	}
	a.rc = rc
	a.read = a.peekFD
	return true
}

// tcpInfoLen is how much of struct tcp_info (linux/tcp.h) is read: up to
// and including tcpi_data_segs_in, at byte 152 (Linux 4.6 and later).
const (
	tcpInfoLen        = 156
	tcpInfoDataSegsIn = 152
	tcpCloseWait      = 8 // TCP_CLOSE_WAIT: the peer's FIN was received
)

// segsIn returns how many data segments the connection has received
// (tcpi_data_segs_in) and whether the peer's FIN has been received; ok is
// false when the kernel does not say.
func segsIn(fd uintptr) (data uint32, fin, ok bool) {
	var info [tcpInfoLen]byte
	if !tcpInfo(fd, &info) {
		return 0, false, false
	}
	return binary.NativeEndian.Uint32(info[tcpInfoDataSegsIn:]), info[0] == tcpCloseWait, true
}

// countSegments notes the data segments received so far (one system call),
// for peek's merged.
func (a *arrival) countSegments() {
	if a.rc == nil {
		return
	}
	data, fin, ok := segsIn(a.fd)
	a.base, a.count = data, ok && !fin
}

// reset forgets the stamp and the count.
func (a *arrival) reset() { a.at, a.merged, a.count = time.Time{}, false, false }

// peek waits (within the connection's read deadline) until data can be read
// and notes when the kernel received the first of it (a.at), without taking
// it (MSG_PEEK of one byte). a.at stays zero when there is no stamp (the
// peer closed, an error, the deadline): the read that follows says why.
//
// After countSegments, a.merged reports whether the stamp may be a later
// segment's: the kernel merges a segment that arrives while the one before
// it is still unread, and is the last in the receive queue, into that one's
// buffer, and the merged buffer carries the later segment's receive time
// (tcp_try_coalesce). So peek also notes the receive time of the last data
// queued (MSG_TRUNC: nothing is copied), then counts the data segments d
// received since countSegments (TCP_INFO):
//
//   - d ≤ 1 and no FIN: nothing could merge;
//   - d = 1 and the FIN: the FIN may have merged;
//   - d = 2: if the last data's time is the first byte's, they are in one
//     buffer: merged; if not, the second segment is in a buffer of its
//     own and the first is alone: exact;
//   - d ≥ 3: the first may hold a middle one: merged (may be).
//
// The segments are counted after both peeks: one that arrives meanwhile
// can only make merged true. Two system calls more than the stamp alone,
// and one in countSegments.
func (a *arrival) peek() {
	a.at, a.merged = time.Time{}, false
	if a.rc != nil {
		_ = a.rc.Read(a.read)
	}
}

func (a *arrival) peekFD(fd uintptr) bool {
	n, oobn, _, _, err := syscall.Recvmsg(int(fd), a.one[:], a.oob[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	if err == syscall.EAGAIN {
		return false // wait for data
	}
	if err != nil || n == 0 {
		return true
	}
	at, ok := parseArrival(a.oob[:oobn])
	if ok {
		a.at = at
		a.merged = a.count && a.mayMerge(fd)
	}
	return true
}

// mayMerge decides peek's merged for the first byte stamped a.at.
func (a *arrival) mayMerge(fd uintptr) bool {
	last, ok := a.peekLast(fd)
	data, fin, known := segsIn(fd)
	switch d := data - a.base; {
	case !known:
		return true
	case d <= 1:
		return fin
	case d == 2:
		return !ok || last.Equal(a.at)
	}
	return true
}

// peekLast returns the receive time of the last data queued on fd (of its
// first MiB), without copying or taking it.
func (a *arrival) peekLast(fd uintptr) (time.Time, bool) {
	iov := syscall.Iovec{Base: &a.one[0]}
	iov.SetLen(1 << 20) // MSG_TRUNC: the kernel counts the bytes and copies none
	msg := syscall.Msghdr{Iov: &iov, Iovlen: 1, Control: &a.oob[0]}
	msg.SetControllen(len(a.oob))
	n, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&msg)),
		syscall.MSG_PEEK|syscall.MSG_TRUNC|syscall.MSG_DONTWAIT)
	if e != 0 || n == 0 {
		return time.Time{}, false
	}
	return parseArrival(a.oob[:msg.Controllen])
}

// parseArrival finds the SCM_TIMESTAMPNS message in a control buffer.
func parseArrival(b []byte) (time.Time, bool) {
	hdr := syscall.CmsgLen(0)
	for len(b) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < hdr || l > len(b) {
			return time.Time{}, false
		}
		stamp := h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS
		if stamp && l-hdr >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&b[hdr]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec)), true
		}
		l = (l + int(unsafe.Sizeof(uintptr(0))) - 1) &^ (int(unsafe.Sizeof(uintptr(0))) - 1)
		if l >= len(b) {
			break
		}
		b = b[l:]
	}
	return time.Time{}, false
}

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

// SetRcvLowat sets how many bytes the kernel queues before it wakes the
// connection's reader (SO_RCVLOWAT; n ≤ 1: at the first byte, the
// default), or wakes it when the peer closes. A reader that knows that many
// are coming reads a bulk transfer in fewer, larger wake-ups.
func (c *Conn) SetRcvLowat(n int) {
	c.control(func(fd int) { _ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, max(n, 1)) })
}

// Queued is how many bytes the kernel holds for the connection, unread
// (SIOCINQ, alias TIOCINQ); 0 when it cannot tell.
func (c *Conn) Queued() (n int) {
	var v int32
	c.control(func(fd int) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&v))); e == 0 {
			n = int(v)
		}
	})
	return n
}

// control runs f on the connection's socket, if it has one.
func (c *Conn) control(f func(fd int)) {
	if sc, ok := c.raw.Conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { f(int(fd)) })
		}
	}
}
