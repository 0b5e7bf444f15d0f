// Package http2 registers HTTP/2 over TLS (RFC 9113; protocol.Register):
// the cps and throughput engines, their frames and header blocks from
// golang.org/x/net/http2's Framer and hpack. Importing it for its side
// effect makes the protocol available.
package http2

import (
	"cmp"
	"crypto/tls"

	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// DefaultStreams is the concurrent streams per throughput connection when
// the run names none: 1, as HTTP/1.1's default pipeline, so that -c N puts
// the same N requests in flight over both protocols and a comparison
// measures the protocol rather than the queue depth (and h2load's -m 1).
// With windows that never limit (conn.go), one stream of a 1 MiB object
// keeps its connection busy; more multiplex (docs/HTTP2.md).
const DefaultStreams = 1

func init() {
	protocol.Register(protocol.Protocol{Name: "http/2", ALPN: "h2", OfferALPN: true, Fallback: []string{"http/1.1"},
		MinTLS: tls.VersionTLS12, Check: func(e vocab.Engine, a *protocol.Args) error {
			return cmp.Or(protocol.CheckStreams(e, a, "HTTP/2"), throughput.CheckVerify(a.VerifyBody))
		},
		New: map[vocab.Engine]func(protocol.Args) (protocol.Op, error){
			vocab.EngineCPS:        newCPS,
			vocab.EngineThroughput: newThroughput,
		}})
}
