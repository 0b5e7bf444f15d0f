package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/promexp"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// liveFlags are --metrics-listen, --metrics-linger and (cps, throughput)
// --stream: what a run shows while it goes.
type liveFlags struct {
	listen string
	linger time.Duration
	stream string
	// fromEnv: the address came from the environment (an agent's), and
	// one that cannot be bound only warns: agents started alike on one
	// host share it, and the first takes it.
	fromEnv bool
}

// add adds the metrics flags.
func (f *liveFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "metrics-listen", "", "serve Prometheus metrics at http://`ADDR`/metrics (HOST:PORT; "+
		":PORT binds 127.0.0.1; 0.0.0.0:PORT every interface)")
	fs.DurationVar(&f.linger, "metrics-linger", 0, "keep the metrics endpoint up this `DURATION` after the last run "+
		"(for the final scrape)")
}

// addStream adds --stream.
func (f *liveFlags) addStream(fs *pflag.FlagSet) {
	fs.StringVar(&f.stream, "stream", "", "write one JSON line per second while the run goes, "+
		"then one with the record, to `FILE` (-: stdout, the text goes to stderr)")
}

// check checks the flags (no listener opened, nothing written).
func (f *liveFlags) check() error {
	if f.listen != "" {
		if _, err := promexp.ListenAddr(f.listen); err != nil {
			return usagef("--metrics-listen %v", err)
		}
	}
	if f.linger < 0 {
		return usagef("--metrics-linger must not be negative, got %s", f.linger)
	}
	if f.linger > 0 && f.listen == "" {
		return usagef("--metrics-linger %s keeps the metrics endpoint up: it needs --metrics-listen", f.linger)
	}
	if f.stream != "" && f.stream != stdoutName {
		return checkOutputs([2]string{"--stream", f.stream})
	}
	return nil
}

// liveSession is the metrics endpoint and the stream of one command.
type liveSession struct {
	f      *liveFlags
	exp    *promexp.Exporter
	srv    *promexp.Server
	stream *streamWriter
	stderr io.Writer
	ctx    context.Context // cuts the linger short
	mu     sync.Mutex
	cur    *promexp.Run
}

// open starts what the flags ask for. The caller closes it; ctx's end
// cuts its linger short.
func (f *liveFlags) open(ctx context.Context, stdout, stderr io.Writer) (*liveSession, error) {
	s := &liveSession{f: f, stderr: stderr, ctx: ctx}
	if err := f.check(); err != nil {
		return s, err
	}
	if f.listen != "" {
		s.exp = promexp.New()
		srv, err := promexp.Serve(f.listen, s.exp.Handler())
		switch {
		case err != nil && f.fromEnv:
			fmt.Fprintf(stderr, "tlsbench: no metrics: %s=%s: %v\n", envMetricsListen, f.listen, err)
			s.exp = nil
		case err != nil:
			return s, usagef("--metrics-listen %s: %v", f.listen, err)
		default:
			s.srv = srv
			fmt.Fprintf(stderr, "metrics: http://%s/metrics\n", srv.Addr)
		}
	}
	if f.stream != "" {
		open, err := f.openStream(stdout, stderr)
		if err != nil {
			return s, err
		}
		s.stream = newStreamWriter(ctx, open)
	}
	return s, nil
}

// openStream opens --stream's file now, or says how to open it in the
// stream's goroutine: a FIFO or a device waits there for its reader (said
// on stderr, and a failure too), never the run.
func (f *liveFlags) openStream(stdout, stderr io.Writer) (func(context.Context) (io.Writer, error), error) {
	if f.stream == stdoutName {
		return func(context.Context) (io.Writer, error) { return stdout, nil }, nil
	}
	if outfile.IsThrough(f.stream) {
		return func(ctx context.Context) (io.Writer, error) {
			file, err := outfile.OpenThrough(ctx, f.stream, outfile.ReaderNote(stderr, f.stream))
			if err != nil {
				if ctx.Err() == nil { // else the end of the stream says it
					fmt.Fprintf(stderr, "tlsbench: --stream: %v (the run goes on)\n", err)
				}
				return nil, err
			}
			return file, nil
		}, nil
	}
	file, err := os.OpenFile(f.stream, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--stream: %w", err)
	}
	return func(context.Context) (io.Writer, error) { return file, nil }, nil
}

// exporter is the session's exporter, nil without --metrics-listen.
func (s *liveSession) exporter() *promexp.Exporter {
	if s == nil {
		return nil
	}
	return s.exp
}

// hook makes spec's run show: its metrics begin, its seconds are
// streamed (after the status line's own Progress).
func (s *liveSession) hook(spec *runner.Spec, l promexp.RunLabels) {
	if s == nil {
		return
	}
	if s.exp != nil {
		r := s.exp.Begin(l)
		s.keep(&s.cur, r)
		spec.Live = r.Live
	}
	if s.stream != nil {
		prev := spec.Progress
		head := streamHead{DUT: spec.Target.DUT, Profile: spec.Profile, Engine: string(spec.Engine),
			Protocol: cmp.Or(spec.Protocol, vocab.DefaultProtocol)}
		if a := spec.Agent; a != nil {
			head.Agent, head.Shard = a.Name, &a.Shard
		}
		spec.Progress = func(sec metrics.Second) {
			if prev != nil {
				prev(sec)
			}
			s.stream.second(head, sec)
		}
	}
}

// finish ends the hooked run with its record (nil: none was made).
func (s *liveSession) finish(r *metrics.Run) {
	if s == nil {
		return
	}
	s.end(&s.cur, r)
	if s.stream != nil && r != nil {
		s.stream.record(r)
	}
}

// keep holds r, a run begun, in slot until end (under s.mu, as end).
func (s *liveSession) keep(slot **promexp.Run, r *promexp.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*slot = r
}

// end takes the run out of slot, if any, and finishes it with its record.
func (s *liveSession) end(slot **promexp.Run, rec *metrics.Run) {
	s.mu.Lock()
	r := *slot
	*slot = nil
	s.mu.Unlock()
	if r != nil {
		r.Finish(rec)
	}
}

// close keeps the endpoint up for --metrics-linger, then stops it, and
// flushes the stream.
func (s *liveSession) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	if s.stream != nil {
		errs = append(errs, s.stream.close())
	}
	if s.srv != nil {
		if s.f.linger > 0 {
			t := time.NewTimer(s.f.linger)
			select {
			case <-t.C:
			case <-s.ctx.Done():
			}
			t.Stop()
		}
		errs = append(errs, s.srv.Close())
	}
	return errors.Join(errs...)
}

// checkLive checks the live flags of an engine command.
func (lf *loadFlags) checkLive() error {
	if lf.live.stream == stdoutName && lf.jsonOut == stdoutName {
		return usagef("--stream - and --json - both want stdout: give one a FILE")
	}
	if lf.live.stream != "" && lf.live.stream == lf.jsonOut {
		return usagef("--stream and --json name the same file %s", lf.jsonOut)
	}
	return lf.live.check()
}

// runLabels are the metrics labels of spec's run.
func runLabels(spec *runner.Spec) promexp.RunLabels {
	l := promexp.RunLabels{Engine: string(spec.Engine), Profile: spec.Profile, DUT: spec.Target.DUT, Shard: -1,
		Protocol: cmp.Or(spec.Protocol, vocab.DefaultProtocol)}
	if a := spec.Agent; a != nil {
		l.Agent, l.Shard = a.Name, a.Shard
	}
	return l
}
