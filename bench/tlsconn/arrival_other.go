//go:build !linux

package tlsconn

import (
	"net"
	"syscall"
	"time"
)

// Elsewhere than Linux the first byte's arrival is when the client read it.
func enableArrival(net.Conn) syscall.RawConn { return nil }

const arrivalOOB = 64

func peekArrival(syscall.RawConn, *[arrivalOOB]byte) (time.Time, bool) { return time.Time{}, false }
