package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/pflag"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

const cpsUsage = `tlsbench cps [flags] [URL]

Measures connections per second with a full TLS handshake on every connection
(SR=0): TCP connect, handshake verified against the cipher profile, HTTP/1.0
GET, the complete response, the server's close. URL is https://host[:port]/path
(path default /1k). Without URL, the reference target runs in-process.
With several --profile flags the runs follow one another and one table ends
the output.`

func runCPS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	spec, fs, lf := cpsCommand(stderr)
	return runLoad(ctx, spec, fs, lf, args, cpsUsage, stdout, stderr)
}

// cpsCommand is the cps command's flags and engine; stderr takes its
// warnings and advice.
func cpsCommand(stderr io.Writer) (engineSpec, *pflag.FlagSet, *loadFlags) {
	fs := newFlags("cps")
	lf := addLoadFlags(fs, vocab.EngineCPS, 0, "connections")
	lf.live.addStream(fs)
	lf.addDUTFlag(fs)
	lf.addDeviceCountersFlag(fs)
	spec := engineSpec{
		name: vocab.EngineCPS,
		status: func(s metrics.Second) string {
			return fmt.Sprintf("%7d cps  %d errors  handshake p99 %s", s.Transactions, s.Errors, reports.Micros(s.HandshakeP99))
		},
		table: func(w io.Writer, runs []*metrics.Run) error {
			if err := reports.CPSTable(runs).Text(w); err != nil {
				return err
			}
			for _, r := range runs {
				if n := cps.TimeoutAdvice(r, lf.spec.HandshakeTimeout, lf.spec.ReadTimeout); n != nil {
					fmt.Fprintf(stderr, "tlsbench cps: %s: %s\n", r.Profile, timeoutNote(n))
				}
			}
			return nil
		},
	}
	// Thousands of connections: warn before the load when the deadlines
	// cannot suffice (memory and descriptors are checked by checkCapacity,
	// the other flags before this).
	spec.check = func() error {
		s := &lf.spec
		if w := cps.DeadlineAdvice(s.Concurrency, runtime.GOMAXPROCS(0), s.HandshakeTimeout, s.ReadTimeout); w != nil {
			fmt.Fprintln(stderr, "tlsbench cps: warning:", deadlineWarning(w))
		}
		return nil
	}
	return spec, fs, lf
}
