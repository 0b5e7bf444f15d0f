package tlsconn_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestDialRefused: a refused connection is reported at the connect stage.
func TestDialRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	c, err := tlsconn.NewEndpoint(tlsconn.Config{
		Settings: tlsconn.Settings{ConnectTimeout: time.Second, HandshakeTimeout: time.Second},
		Profile:  p, Address: addr, TLS: &tls.Config{ServerName: "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := c.NewDialer(0).Dial(context.Background())
	if conn != nil || err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	if got, want := tlsconn.Class(err), vocab.ClassRefused; got != want {
		t.Errorf("class %q, want %q", got, want)
	}
}

// TestDialErrorStage: a failed Dial's error carries its stage (connect for a
// closed port, handshake for a peer that accepts and never answers), its
// message is its cause's, Class reads the stage from it (the same timeout
// is a handshake timeout there, a read timeout without a stage), and
// Phases.Fill ends the sample with that class.
func TestDialErrorStage(t *testing.T) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	for _, tc := range []struct {
		addr  string
		stage engine.Stage
		class vocab.Class
	}{
		{closedAddr, engine.StageConnect, vocab.ClassRefused},
		{silent.Addr().String(), engine.StageHandshake, vocab.ClassHandshakeTimeout},
	} {
		ep, err := tlsconn.NewEndpoint(tlsconn.Config{
			Settings: tlsconn.Settings{ConnectTimeout: 2 * time.Second, HandshakeTimeout: 200 * time.Millisecond},
			Profile:  p, Address: tc.addr, TLS: &tls.Config{ServerName: "localhost"}})
		if err != nil {
			t.Fatal(err)
		}
		conn, ph, err := ep.NewDialer(0).Dial(context.Background())
		var de *tlsconn.DialError
		if conn != nil || !errors.As(err, &de) {
			t.Fatalf("%s: dial returned %v, %v; want a *DialError", tc.addr, conn, err)
		}
		if de.Stage != tc.stage || err.Error() != de.Err.Error() {
			t.Errorf("%s: stage %v, message %q; want stage %v, the cause's message %q",
				tc.addr, de.Stage, err, tc.stage, de.Err)
		}
		if got := tlsconn.Class(err); got != tc.class {
			t.Errorf("%s: class %q, want %q", tc.addr, got, tc.class)
		}
		if tc.stage == engine.StageHandshake && tlsconn.Class(de.Err) != vocab.ClassReadTimeout {
			t.Errorf("%s: the cause alone classified %q, want %q", tc.addr, tlsconn.Class(de.Err),
				vocab.ClassReadTimeout)
		}
		s := metrics.Sample{Start: time.Now()}
		if ph.Fill(&s, err) || !s.Opened || s.Class != tc.class || s.Err != err || s.Dur[vocab.PhaseTotal] <= 0 {
			t.Errorf("%s: Fill left opened %v class %q err %v total %v", tc.addr, s.Opened, s.Class, s.Err,
				s.Dur[vocab.PhaseTotal])
		}
	}
}
