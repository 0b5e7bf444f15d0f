package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/throughput"
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
	fs := newFlags("throughput")
	lf := addLoadFlags(fs, 8, "requests")
	lf.addDUTFlag(fs)
	pipeline := fs.Int("pipeline", 1, "keep `K` requests in flight on each connection")
	perConn := fs.Int("requests-per-conn", 0, "close each connection after `M` responses and open a new one (0: never)")
	verify := fs.String("verify-body", "", "check every body: `pattern` (the reference target's objects) or sha256:HEX")
	echo := &throughputEcho{}
	spec := engineSpec{
		name: vocab.EngineThroughput, extra: echo,
		options: func(spec *job.Spec) {
			spec.Pipeline, spec.RequestsPerConn = *pipeline, *perConn
			spec.Verify, _ = throughput.ParseVerify(*verify, target.Pattern) // checked in check
		},
		status: func(s metrics.Second) string {
			return fmt.Sprintf("%6.2f Gbps  %6d req/s  %d errors", float64(s.PayloadBytes)*8/1e9, s.Transactions, s.Errors)
		},
		table: func(w io.Writer, runs []*metrics.Run) { reports.ThroughputTable(runs).Text(w) },
	}
	spec.check = func() error {
		if _, err := throughput.ParseVerify(*verify, target.Pattern); err != nil {
			return usagef("--verify-body: %v", err)
		}
		if *pipeline < 1 {
			return usagef("--pipeline must be at least 1, got %d", *pipeline)
		}
		if *perConn < 0 {
			return usagef("--requests-per-conn must not be negative, got %d", *perConn)
		}
		echo.Pipeline, echo.RequestsPerConn, echo.VerifyBody = *pipeline, *perConn, *verify
		return nil
	}
	return runLoad(ctx, spec, fs, lf, args, throughputUsage, stdout, stderr)
}
