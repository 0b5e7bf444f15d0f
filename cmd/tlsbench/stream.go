package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
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

// streamWriter writes JSON lines from one goroutine, fed through a
// bounded queue: the engine's tick never waits for the reader.
type streamWriter struct {
	w       io.Writer
	lines   chan []byte
	done    chan struct{}
	mu      sync.Mutex
	dropped int64
	closed  bool
	err     error
}

func newStreamWriter(w io.Writer) *streamWriter {
	s := &streamWriter{w: w, lines: make(chan []byte, streamQueue), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for line := range s.lines {
			if _, err := s.w.Write(line); err != nil {
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

func (s *streamWriter) second(h streamHead, sec metrics.Second) {
	line, err := json.Marshal(streamSecond{Schema: streamSchema, Type: "second", Time: time.Unix(sec.Unix, 0).UTC(), streamHead: h, Second: sec})
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
	select {
	case s.lines <- append(line, '\n'):
	case <-time.After(streamFinalWait):
	}
}

// close writes what is queued (within streamFinalWait) and closes the
// file, if it is one.
func (s *streamWriter) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.lines)
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(streamFinalWait):
		return errors.New("--stream: the reader did not take the last lines in time")
	}
	var err error
	if c, ok := s.w.(io.Closer); ok && !isStd(s.w) {
		err = c.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return fmt.Errorf("--stream: %w", s.err)
	}
	return err
}

// isStd says whether w is this process's stdout or stderr (not closed).
func isStd(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (f.Fd() == 1 || f.Fd() == 2)
}
