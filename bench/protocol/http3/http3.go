// Package http3 registers HTTP/3 over QUIC (RFC 9114, RFC 9000;
// protocol.Register): the cps and throughput engines over
// github.com/quic-go/quic-go and its http3 package, each connection dialled
// here (its UDP socket, its TLS 1.3 handshake verified against the profile)
// so that cps can open a new one per transaction. Importing it for its side
// effect makes the protocol available. docs/HTTP3.md describes it.
package http3

import (
	"crypto/tls"

	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// DefaultStreams is the concurrent request streams per throughput
// connection when the run names none.
const DefaultStreams = 1

func init() {
	protocol.Register(protocol.Protocol{Name: "http/3", ALPN: "h3", OfferALPN: true, MinTLS: tls.VersionTLS13,
		EarlyData: true, Check: check,
		New: map[vocab.Engine]func(protocol.Args) (protocol.Op, error){
			vocab.EngineCPS:        newCPS,
			vocab.EngineThroughput: newThroughput,
		}})
}

// check is HTTP/3's settings: protocol.CheckStreams's, the body check; those of TCP (linger0) and of TLS 1.2
// (tickets) have no meaning over QUIC.
func check(e vocab.Engine, a *protocol.Args) error {
	bad := func(field string, v any, msg string) error {
		return &vocab.FieldError{Field: field, Value: v, Msg: msg}
	}
	switch err := protocol.CheckStreams(e, a, "HTTP/3"); {
	case err != nil:
		return err
	case a.Conn.LingerZero:
		return bad("linger0", true, "HTTP/3 runs over UDP: there is no TCP connection to reset")
	case e == vocab.EngineThroughput && a.Conn.EarlyData:
		return bad("early_data", true, "0-RTT is cps's: throughput keeps its connections open")
	case a.Conn.Resumption == tlsconn.ResumeTickets:
		return bad("resumption", a.Conn.Resumption, "HTTP/3 runs over TLS 1.3, which resumes with psk")
	}
	return throughput.CheckVerify(a.VerifyBody)
}
