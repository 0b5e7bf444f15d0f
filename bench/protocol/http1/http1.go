// Package http1 registers HTTP/1.1 (protocol.Register): the cps engine
// (package cps) and the throughput engine (package throughput, with
// pipelining), whose requests httpreq compiles and whose responses they
// parse. Importing it for its side effect makes the protocol available.
package http1

import (
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

func init() {
	protocol.Register(protocol.Protocol{Name: "http/1.1", ALPN: "http/1.1", Check: check,
		New: map[vocab.Engine]func(protocol.Args) (protocol.Op, error){
			vocab.EngineCPS: func(a protocol.Args) (protocol.Op, error) {
				return cps.New(cps.Config{Config: a.Conn, Request: a.Request, RequestsPerConn: a.RequestsPerConn})
			},
			vocab.EngineThroughput: func(a protocol.Args) (protocol.Op, error) {
				verify, err := throughput.ParseVerify(a.VerifyBody, target.Pattern)
				if err != nil {
					return nil, err
				}
				return throughput.New(throughput.Config{Config: a.Conn, Request: a.Request,
					Pipeline: max(a.Pipeline, 1), RequestsPerConn: a.RequestsPerConn, Verify: verify})
			},
		}})
}

// check is HTTP/1.1's settings: pipelining (throughput), the connection's
// transactions and the body check.
func check(e vocab.Engine, a *protocol.Args) error {
	bad := func(field string, v any, want string) error {
		return &vocab.FieldError{Field: field, Value: v, Want: want}
	}
	switch {
	case e == vocab.EngineThroughput && a.Pipeline < 1:
		return bad("pipeline", a.Pipeline, "be at least 1")
	case a.RequestsPerConn < 0:
		return bad("requests_per_conn", a.RequestsPerConn, "not be negative")
	case a.Streams != 0:
		return &vocab.FieldError{Field: "streams", Value: a.Streams,
			Msg: "HTTP/1.1 has no streams (it pipelines requests): streams are HTTP/2's"}
	}
	return throughput.CheckVerify(a.VerifyBody)
}
