package engine_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

func TestClassify(t *testing.T) {
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		stage engine.Stage
		err   error
		want  vocab.Class
	}{
		{engine.StageConnect, &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, vocab.ClassRefused},
		{engine.StageConnect, timeout, vocab.ClassConnectTimeout},
		{engine.StageHandshake, timeout, vocab.ClassHandshakeTimeout},
		{engine.StageResponse, timeout, vocab.ClassReadTimeout},
		{engine.StageResponse, fmt.Errorf("reading: %w", syscall.ECONNRESET), vocab.ClassReset},
		{engine.StageHandshake, io.EOF, vocab.ClassEOF},
		{engine.StageResponse, io.ErrUnexpectedEOF, vocab.ClassEOF},
		{engine.StageHandshake, &tls.CertificateVerificationError{Err: errors.New("x")}, vocab.ClassCertificate},
		{engine.StageHandshake, tls.AlertError(40), "tls_alert:handshake_failure"},
		{engine.StageResponse, errors.New("something else"), vocab.ClassOther},
	} {
		if got := engine.Classify(tc.stage, tc.err); got != tc.want {
			t.Errorf("Classify(%v, %v) = %q, want %q", tc.stage, tc.err, got, tc.want)
		}
	}
}

// TestClassifyRemoteAlert: an alert sent by a real peer is classed by its
// name.
func TestClassifyRemoteAlert(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// The server offers only TLS 1.3; the client only TLS 1.2.
		s := tls.Server(c, &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return nil, errors.New("unused")
		}})
		_ = s.SetDeadline(time.Now().Add(5 * time.Second))
		_ = s.Handshake()
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	err = tls.Client(c, &tls.Config{MaxVersion: tls.VersionTLS12, InsecureSkipVerify: true}).HandshakeContext(context.Background())
	if got, want := engine.Classify(engine.StageHandshake, err), vocab.TLSAlert("protocol_version"); got != want {
		t.Errorf("class %q (%v), want %q", got, err, want)
	}
}
