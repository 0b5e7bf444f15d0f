//go:build linux

package tlsconn

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// BenchmarkTCPInfo is what the kernel's account of a connection costs the
// client per connection (per CPS transaction), on an established loopback
// connection: the duplicate of the socket kept through connect and
// released (tcpDialer: two system calls), TCP_INFO when connect returned
// and at the close (two). Compare with BenchmarkTransaction (bench/engine/cps).
func BenchmarkTCPInfo(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	var td tcpDialer
	var d net.Dialer
	td.setup(&d)
	raw, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	td.release()
	cc := &countingConn{Conn: raw}
	cc.stamps = cc.arr.enable(raw)
	if !cc.stamps {
		b.Skip("no TCP_INFO here")
	}
	tc := raw.(*net.TCPConn)
	rc, err := tc.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := td.control(context.Background(), "tcp", "", rc); err != nil {
			b.Fatal(err)
		}
		td.release()
		cc.noteConnect()
		if _, ok := cc.tcpAtClose(); !ok {
			b.Fatal("no TCP_INFO")
		}
	}
	b.StopTimer()
	// The process's CPU per connection: on a busy machine the time per
	// operation is mostly other processes'; compare it with a run's
	// client.cpu_per_transaction_us.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's CPU time so far (user and system), ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
