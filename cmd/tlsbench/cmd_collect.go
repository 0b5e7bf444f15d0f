package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/reports"
)

const collectUsage = `tlsbench collect --listen ADDR --expect N -o FILE [flags]

Receives the run records that N agents push (engine commands run with
--shard i/N --report-to http://ADDR/), and merges them into one record
(tlsbench merge) once all N have arrived. At --deadline it stops and names
the shards that did not report (exit 1). Records that measured another
device or whose steady windows share less than 90% of the shortest are
refused as merge refuses them (exit 2).

Only records signed with the run's token are taken: --token-file FILE (made
with a new random token, mode 0600, if missing; the agents get the same file
with --token-file) or $TLSBENCH_TOKEN. A push without it is refused (401)
and takes no shard. Each collect is a new collection: an agent asks it for
its session (a signed hello, before any load) and signs its push for it, so
a push recorded from an earlier run is refused (409) even with the same
token file, as is a record whose steady window began before collect did. ` +
	`With --tls-ca-out FILE the collector serves https with a
certificate made for this run (for the --listen host and each --tls-host),
its CA written to FILE for the agents (--report-cacert). Bounds: records of
32 MiB, headers of 16 KiB, 5 s for the headers and 1 min for a request, 64
connections at once. --listen has no default: give 127.0.0.1:PORT unless
agents on other machines must reach it.`

func runCollect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("collect")
	listen := fs.String("listen", "", "`ADDR` (host:port) to listen on for pushed records")
	expect := fs.Int("expect", 0, "`N` agents (shards 0..N-1) must report")
	out := fs.StringP("output", "o", "", "write the merged record to `FILE` (-: stdout)")
	keep := fs.String("keep", "", "also write each agent's own record into `DIR`")
	deadline := fs.Duration("deadline", time.Hour, "give up waiting after `DURATION`")
	tokenFile := fs.String("token-file", "", "take only records signed with the token in `FILE` "+
		"(created with a new token if missing; default $"+agent.EnvToken+")")
	caOut := fs.String("tls-ca-out", "", "serve https with a certificate made for this run; "+
		"write its CA certificate to `FILE` for the agents")
	tlsHosts := fs.StringArray("tls-host", nil, "with --tls-ca-out: a `NAME` or address the agents reach the collector "+
		"at (repeatable; the --listen host is included)")
	if err := parseFlags(fs, collectUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case *listen == "":
		return usagef("--listen ADDR is required")
	case *expect < 1:
		return usagef("--expect must be at least 1, got %d", *expect)
	case *out == "":
		return usagef("-o FILE is required")
	case *deadline <= 0:
		return usagef("--deadline must be positive, got %s", *deadline)
	}
	if err := checkOutputs([2]string{"-o", *out}); err != nil {
		return err
	}
	if *keep != "" {
		if err := outfile.CheckDir(*keep); err != nil {
			return usagef("--keep: %v", err)
		}
		if err := os.MkdirAll(*keep, 0o755); err != nil {
			return usagef("--keep: %v", err)
		}
	}
	if len(*tlsHosts) > 0 && *caOut == "" {
		return usagef("--tls-host needs --tls-ca-out FILE")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return usagef("--listen %s: %v", *listen, err)
	}
	defer ln.Close() // on an error below; else the collector's stop has closed it
	token, err := readToken(*tokenFile, true, stderr)
	if err != nil {
		return err
	}
	var tlsConfig *tls.Config
	scheme := "http"
	if *caOut != "" {
		if err := outfile.Check(*caOut); err != nil {
			return usagef("--tls-ca-out: %v", err)
		}
		hosts := append([]string{"localhost", "127.0.0.1", "::1"}, *tlsHosts...)
		if h, _, err := net.SplitHostPort(*listen); err == nil && h != "" {
			hosts = append(hosts, h)
		}
		var caPEM []byte
		if tlsConfig, caPEM, err = agent.CollectorTLS(hosts, *deadline+time.Hour); err != nil {
			return err
		}
		if err := outfile.WriteContext(ctx, *caOut, caPEM, 0o644, outfile.ReaderNote(stderr, *caOut)); err != nil {
			return fmt.Errorf("--tls-ca-out: %w", err)
		}
		scheme = "https"
	}
	c := agent.NewCollector(token)
	batch := c.Expect("", *expect)
	defer c.Serve(ln, tlsConfig)()
	fmt.Fprintf(stderr, "tlsbench collect: waiting for %d agents on %s://%s/ (deadline %s)\n",
		*expect, scheme, ln.Addr(), *deadline)

	wctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	runs, err := batch.Wait(wctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		return fmt.Errorf("at the deadline: %w", err)
	}
	return writeMerged(ctx, runs, *out, *keep, stdout, stderr)
}

// writeMerged merges the agents' records, writes the result and prints it.
func writeMerged(ctx context.Context, runs []*metrics.Run, out, keep string, stdout, stderr io.Writer) error {
	if keep != "" {
		for _, r := range runs {
			name := fmt.Sprintf("shard-%d-of-%d.json", r.Agent.Shard, r.Agent.Shards)
			if err := r.WriteJSON(context.Background(), filepath.Join(keep, name), nil, nil); err != nil {
				return err
			}
		}
	}
	m, err := metrics.Merge(runs)
	var we *metrics.WindowError
	var ie *metrics.IdentityError
	switch {
	case errors.As(err, &we) || errors.As(err, &ie):
		// Agents that measured at other times or other devices: their
		// records (--keep) are not one run's.
		return usagef("the agents' records do not merge: %s", strings.TrimPrefix(mergeText(err), "metrics: "))
	case err != nil:
		return fmt.Errorf("the agents' records do not merge: %s", mergeText(err))
	}
	if err := m.WriteJSON(ctx, out, stdout, stderr); err != nil {
		return fmt.Errorf("writing the merged record: %w", err)
	}
	if out == stdoutName {
		return nil // stdout is the record
	}
	if err := reports.RunSummary(m).Text(stdout); err != nil {
		return err
	}
	if err := printAgents(stdout, m); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged record of %d agents: %s\n", len(runs), out)
	return nil
}
