package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/bench/job"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"
)

const cpsUsage = `tlsbench cps [flags] [URL]

Measures connections per second with a full TLS handshake on every connection
(SR=0): TCP connect, handshake verified against the cipher profile, HTTP/1.0
GET, the complete response, the server's close. URL is https://host[:port]/path
(path default /1k). Without URL, the reference target runs in-process.
With several --profile flags the runs follow one another and one table ends
the output.`

func runCPS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cps")
	lf := addLoadFlags(fs, 32, "connections")
	spec := engineSpec{
		name: job.CPS,
		status: func(s metrics.Second) string {
			return fmt.Sprintf("%7d cps  %d errors  handshake p99 %s", s.Transactions, s.Errors, reports.Micros(s.HandshakeP99))
		},
		table: reports.CPSTable,
	}
	return runLoad(ctx, spec, fs, lf, args, cpsUsage, stdout, stderr)
}
