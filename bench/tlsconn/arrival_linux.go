package tlsconn

import (
	"net"
	"syscall"
	"time"
	"unsafe"
)

// enableArrival asks the kernel to stamp the connection's received packets
// (SO_TIMESTAMPNS) and returns the connection's raw descriptor access, or nil
// when it cannot.
func enableArrival(raw net.Conn) syscall.RawConn {
	tc, ok := raw.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return rc
}

// arrivalOOB is the control buffer of one SCM_TIMESTAMPNS message.
const arrivalOOB = 64

// peekArrival waits (within the connection's read deadline) until data can be
// read and returns when the kernel received the first of it, without taking
// it (MSG_PEEK of one byte). ok is false when there is no stamp (the peer
// closed, an error, the deadline): the read that follows says why.
func peekArrival(rc syscall.RawConn, oob *[arrivalOOB]byte) (at time.Time, ok bool) {
	var one [1]byte
	err := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, err := syscall.Recvmsg(int(fd), one[:], oob[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if err == syscall.EAGAIN {
			return false // wait for data
		}
		if err != nil || n == 0 {
			return true
		}
		at, ok = parseArrival(oob[:oobn])
		return true
	})
	if err != nil {
		return time.Time{}, false
	}
	return at, ok
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
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(syscall.Timespec{})) {
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
