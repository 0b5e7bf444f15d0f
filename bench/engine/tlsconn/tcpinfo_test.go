//go:build linux

package tlsconn

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestTCPAtClose: the kernel's account of real loopback connections: one
// the server ends with a RST is a reset received, one it ends with a FIN is
// not; neither retransmitted, both have an RTT; a refused connect is a
// reset received with no SYN sent again.
func TestTCPAtClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, rst := range []bool{false, true} {
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				accepted <- c
			}
			close(accepted)
		}()
		var td tcpDialer
		d := net.Dialer{Timeout: 5 * time.Second}
		td.setup(&d)
		raw, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		td.release()
		cc := &countingConn{Conn: raw}
		cc.stamps = cc.arr.enable(raw)
		cc.noteConnect()
		srv := <-accepted
		if srv == nil {
			t.Fatal("no connection accepted")
		}
		if _, err := srv.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		if rst {
			srv.(*net.TCPConn).SetLinger(0)
		}
		srv.Close()
		raw.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadAll(raw) // to the FIN or the RST
		if rst == (err == nil) {
			t.Errorf("rst %v: read error %v", rst, err)
		}
		c, ok := cc.tcpAtClose()
		raw.Close()
		if !ok || c.Reset != rst || c.Retransmits != 0 || c.SynRetransmits != 0 || c.RTTUS == 0 {
			t.Errorf("rst %v: %+v (ok %v)", rst, c, ok)
		}
	}
	// A port nobody listens on refuses.
	addr := ln.Addr().String()
	ln.Close()
	var td tcpDialer
	d := net.Dialer{Timeout: 5 * time.Second}
	td.setup(&d)
	if _, err := d.Dial("tcp", addr); err == nil {
		t.Fatal("connected to a closed port")
	}
	c, ok := td.failed()
	if !ok || !c.Reset || c.Retransmits != 0 || td.dup != -1 {
		t.Errorf("refused: %+v (ok %v, dup %d)", c, ok, td.dup)
	}
}
