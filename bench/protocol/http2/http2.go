// Package http2 registers HTTP/2 over TLS (RFC 9113; protocol.Register):
// the cps and throughput engines, their frames and header blocks from
// golang.org/x/net/http2's Framer and hpack. Importing it for its side
// effect makes the protocol available.
package http2

import (
	"crypto/tls"

	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/target"
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
		MinTLS: tls.VersionTLS12, Check: check,
		New: map[vocab.Engine]func(protocol.Args) (protocol.Op, error){
			vocab.EngineCPS:        newCPS,
			vocab.EngineThroughput: newThroughput,
		}})
}

// check is HTTP/2's settings.
func check(e vocab.Engine, a *protocol.Args) error {
	bad := func(field string, v any, want string) error {
		return &vocab.FieldError{Field: field, Value: v, Want: want}
	}
	switch {
	case a.Streams < 0:
		return bad("streams", a.Streams, "not be negative")
	case e == vocab.EngineCPS && a.Streams > 0:
		return &vocab.FieldError{Field: "streams", Value: a.Streams,
			Msg: "cps makes one request at a time on each connection: streams are throughput's"}
	case a.Pipeline > 1:
		return &vocab.FieldError{Field: "pipeline", Value: a.Pipeline, Msg: "HTTP/2 multiplexes streams: use streams"}
	case a.RequestsPerConn < 0:
		return bad("requests_per_conn", a.RequestsPerConn, "not be negative")
	}
	if _, err := throughput.ParseVerify(a.VerifyBody, target.Pattern); err != nil {
		return bad("verify_body", a.VerifyBody, "be pattern or sha256: and 64 hex digits")
	}
	return nil
}
