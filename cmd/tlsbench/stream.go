package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
)

// streamSchema is the schema of a --stream line (schemas/stream.json).
const streamSchema = "tlsbench/stream/v1"

// streamHead names a run in its stream lines.
type streamHead struct {
	DUT     string `json:"dut,omitempty"`
	Profile string `json:"profile"`
	Engine  string `json:"engine"`
	Agent   string `json:"agent,omitempty"`
	Shard   *int   `json:"shard,omitempty"`
	// Protocol carries the run: http/1.1, http/2.
	Protocol string `json:"protocol"`
}

// streamSecond is one line per second: the record's series entry, with
// its absolute time and the run's names.
type streamSecond struct {
	Schema string    `json:"schema"`
	Type   string    `json:"type"` // "second"
	Time   time.Time `json:"time"`
	streamHead
	metrics.Second
}

// streamRecord is the last line of a run: its record.
type streamRecord struct {
	Schema string `json:"schema"`
	Type   string `json:"type"` // "record"
	// Dropped is how many second lines were left out because the reader
	// did not keep up.
	Dropped int64        `json:"dropped_lines"`
	Record  *metrics.Run `json:"record"`
}

// streamQueue bounds the lines waiting for a slow reader: past it, second
// lines are dropped (and counted), never the engine delayed.
const streamQueue = 64

// streamFinalWait bounds how long the record's line and the close wait
// for a reader that does not read.
const streamFinalWait = 10 * time.Second

// streamGrace is how long the record's line and the close wait for the
// reader when the run was interrupted (the signal already came).
const streamGrace = 500 * time.Millisecond

// streamWriter writes JSON lines from one goroutine, fed through a
// bounded queue: the engine's tick never waits for the reader. The
// goroutine opens the destination first (a FIFO waits for its reader
// there, never the run), and ctx's end (the first signal) ends the waits.
type streamWriter struct {
	ctx     context.Context
	abort   context.CancelFunc // ends the open's wait
	lines   chan []byte
	done    chan struct{}
	mu      sync.Mutex
	w       io.Writer // nil until opened
	dropped int64
	closed  bool
	err     error
}

func newStreamWriter(ctx context.Context, open func(context.Context) (io.Writer, error)) *streamWriter {
	octx, abort := context.WithCancel(ctx)
	s := &streamWriter{ctx: ctx, abort: abort, lines: make(chan []byte, streamQueue), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		w, err := open(octx)
		s.mu.Lock()
		s.w, s.err = w, err
		s.mu.Unlock()
		for line := range s.lines {
			if w == nil {
				continue // not opened: the lines are dropped, the error kept
			}
			if _, err := w.Write(line); err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// waits is how long the end of the stream waits for the reader, and what
// ends the wait sooner: ctx's end, or a short grace once it has ended.
func (s *streamWriter) waits(wait time.Duration) (time.Duration, <-chan struct{}) {
	if s.ctx.Err() != nil {
		return min(wait, streamGrace), nil
	}
	return wait, s.ctx.Done()
}

// stop ends the open's wait and a write blocked on a FIFO's reader.
func (s *streamWriter) stop() {
	s.abort()
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.w.(*os.File); ok {
		_ = f.SetWriteDeadline(time.Now())
	}
}

func (s *streamWriter) second(h streamHead, sec metrics.Second) {
	line, err := json.Marshal(streamSecond{Schema: streamSchema, Type: "second",
		Time: time.Unix(sec.Unix, 0).UTC(), streamHead: h, Second: sec})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.lines <- append(line, '\n'):
	default:
		s.dropped++
	}
}

func (s *streamWriter) record(r *metrics.Run) {
	s.mu.Lock()
	if !s.closed && len(s.lines) == cap(s.lines) {
		// A reader that has not opened the FIFO yet, or does not keep
		// up: the oldest second makes room, never the record.
		select {
		case <-s.lines:
			s.dropped++
		default:
		}
	}
	dropped := s.dropped
	s.dropped = 0
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	line, err := json.Marshal(streamRecord{Schema: streamSchema, Type: "record", Dropped: dropped, Record: r})
	if err != nil {
		return
	}
	wait, stop := s.waits(streamFinalWait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.lines <- append(line, '\n'):
	case <-t.C:
	case <-stop:
	}
}

// close writes what is queued (within streamFinalWait; a FIFO not yet
// opened: within the reader's wait) and closes the file, if it is one.
// ctx's end cuts the wait short.
func (s *streamWriter) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.lines)
	wait := streamFinalWait
	if s.w == nil && s.err == nil {
		wait = outfile.ReaderWait
	}
	s.mu.Unlock()
	wait, stop := s.waits(wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	var late error
	select {
	case <-s.done:
	case <-t.C:
		late = errors.New("--stream: the reader did not take the last lines in time")
	case <-stop:
		late = errors.New("--stream: interrupted while waiting for the reader: the last lines were not written")
	}
	if late != nil {
		s.stop()
		select {
		case <-s.done:
		case <-time.After(streamGrace):
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if c, ok := s.w.(io.Closer); ok && !isStd(s.w) {
		err = c.Close()
	}
	switch {
	case late != nil && s.w != nil:
		return late
	case s.err != nil:
		return fmt.Errorf("--stream: %w", s.err)
	case late != nil:
		return late
	}
	return err
}

// isStd says whether w is this process's stdout or stderr (not closed).
func isStd(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (f.Fd() == 1 || f.Fd() == 2)
}
