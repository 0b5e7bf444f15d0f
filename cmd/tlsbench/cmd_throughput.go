package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

const throughputUsage = `tlsbench throughput [flags] [URL]

Measures encrypted bandwidth: -c connections, each opened with a full TLS
handshake verified against the cipher profile (counted, not part of the
bandwidth), then repeated HTTP/1.1 GETs with keep-alive. Payload Gbps counts
response bodies; wire Gbps the TLS bytes read. URL is https://host[:port]/path
(path default /1m). Without URL, the reference target runs in-process.`

// throughputEcho is the engine-specific part of the echoed configuration.
type throughputEcho struct {
	Pipeline        int    `json:"pipeline"`
	RequestsPerConn int    `json:"requests_per_conn"`
	VerifyBody      string `json:"verify_body,omitempty"`
}

func runThroughput(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	spec, fs, lf := throughputCommand()
	return runLoad(ctx, spec, fs, lf, args, throughputUsage, stdout, stderr)
}

// throughputCommand is the throughput command's flags and engine.
func throughputCommand() (engineSpec, *pflag.FlagSet, *loadFlags) {
	fs := newFlags("throughput")
	lf := addLoadFlags(fs, vocab.EngineThroughput, 0, "requests")
	lf.live.addStream(fs)
	lf.addDUTFlag(fs)
	lf.addDeviceCountersFlag(fs)
	fs.IntVar(&lf.spec.Pipeline, "pipeline", lf.spec.Pipeline, "keep `K` requests in flight on each connection")
	fs.IntVar(&lf.spec.RequestsPerConn, "requests-per-conn", 0, "close each connection after `M` responses and open a "+
		"new one (0: never)")
	fs.StringVar(&lf.spec.VerifyBody, "verify-body", "", "check every body: `pattern` (the reference target's objects) "+
		"or sha256:HEX")
	echo := &throughputEcho{}
	spec := engineSpec{
		name: vocab.EngineThroughput, extra: echo,
		status: func(s metrics.Second) string {
			return fmt.Sprintf("%6.2f Gbps  %6d req/s  %d errors", float64(s.PayloadBytes)*8/1e9, s.Transactions, s.Errors)
		},
		table: func(w io.Writer, runs []*metrics.Run) error { return reports.ThroughputTable(runs).Text(w) },
	}
	spec.check = func() error {
		echo.Pipeline, echo.RequestsPerConn, echo.VerifyBody = lf.spec.Pipeline, lf.spec.RequestsPerConn, lf.spec.VerifyBody
		return nil
	}
	return spec, fs, lf
}
