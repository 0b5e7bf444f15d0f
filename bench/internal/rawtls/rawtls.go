// Package rawtls is test support: a TLS server configured as a profile's
// reference target whose HTTP side the test writes by hand, to play a
// misbehaving or hostile device. It is imported by tests only.
package rawtls

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/textproto"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// Serve starts a server for p on 127.0.0.1; serve handles each connection
// (closed when it returns). It returns the address and the CA that issued
// its certificate (for localhost). The server stops when the test ends.
func Serve(t testing.TB, p *profiles.Profile, serve func(c net.Conn, r *textproto.Reader)) (string, *cipher.CA) {
	return ServeWith(t, p, nil, serve)
}

// ServeWith is Serve with edit applied to the server configuration (nil:
// none), e.g. to turn session tickets on.
func ServeWith(
	t testing.TB,
	p *profiles.Profile,
	edit func(*tls.Config),
	serve func(c net.Conn, r *textproto.Reader),
) (string, *cipher.CA) {
	t.Helper()
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf(p.ServerCertKey(), []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.ServerConfig(leaf)
	if edit != nil {
		edit(cfg)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(c, textproto.NewReader(bufio.NewReader(c)))
			}()
		}
	}()
	return ln.Addr().String(), ca
}

// ReadRequest reads one request head; false at the end of the connection.
func ReadRequest(r *textproto.Reader) bool {
	if _, err := r.ReadLine(); err != nil {
		return false
	}
	_, err := r.ReadMIMEHeader()
	return err == nil
}
