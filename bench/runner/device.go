package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// preflightRequests is metrics.Preflight.Requests: the success, and the
// full handshake's whose session a later attempt resumed (or offered:
// not_resumed); a resuming preflight goes on only after a full success.
func preflightRequests(pf *metrics.Preflight) int64 {
	var n int64
	if pf.OK {
		n++
	}
	if pf.Resumed > 0 || pf.Class == vocab.ClassNotResumed {
		n++
	}
	return n
}

// deviceMeter reads the device's counters (Spec.Device) before the
// preflight, at the steady window's ends (engine.Config.AtWindow: each read
// is started there and runs beside the load, so that the hook returns at
// once) and after the drain; result makes the record's block.
type deviceMeter struct {
	src      devcount.Source
	inFlight int64
	pipeline int64 // throughput's pipeline (1 for CPS)
	ctx      context.Context
	release  func() // ends ctx
	first    reading
	window   [2]chan reading // the window's start and end reads, when started
	last     reading
	version  string // the device's software, as its stats page names it
}

// reading is one read: its counts or error, and when it was taken (the
// middle of the request) and finished.
type reading struct {
	c       devcount.Counts
	err     error
	at, end time.Time
}

func read(ctx context.Context, src *devcount.Source) reading {
	start := time.Now()
	c, err := src.Read(ctx)
	end := time.Now()
	return reading{c: c, err: err, at: start.Add(end.Sub(start) / 2), end: end}
}

// ErrCountersUnread is in the error of a run not made because the device's
// counters could not be read before its load (the *devcount.ReadError is
// there too).
var ErrCountersUnread = errors.New("no load sent: the device's counters are read before the load")

// readGrace is how long a read of the device's counters may go on once
// the run is interrupted (ctx cancelled): long enough for a page or a quick
// command, so that an interrupted run still has its counts; short enough
// that a hung command does not hold the process (it is then killed).
const readGrace = 500 * time.Millisecond

// newDeviceMeter takes the first reading; nil without a source. If the
// first read fails, or is interrupted, there is no meter but an error: no
// load may be sent to a device whose counters cannot be read.
func newDeviceMeter(ctx context.Context, spec *Spec) (*deviceMeter, error) {
	if spec.Device == nil {
		return nil, nil
	}
	m := &deviceMeter{src: spec.Device.For(spec.Profile)}
	inFlight := int64(1) // requests in flight a connection: pipelined, or streams
	if spec.Engine == vocab.EngineThroughput {
		// Only a pipeline leaves requests unread at a close: HTTP/2 and 3
		// read their streams to the end (engine.Drainer).
		m.pipeline, inFlight = int64(max(spec.Pipeline, 1)), int64(max(spec.Pipeline, spec.Streams, 1))
	}
	m.inFlight = int64(spec.Concurrency) * inFlight
	m.version = m.src.Version(ctx) // before the first read: a page the device counts is not in the run's counts
	if m.first = read(ctx, &m.src); m.first.err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted reading the device's counters, before the load (no load sent): %w", m.first.err)
		}
		return nil, fmt.Errorf("%w; %w", m.first.err, ErrCountersUnread)
	}
	// The reads after the first go on once the run is interrupted, for
	// readGrace at most.
	var cancel context.CancelFunc
	m.ctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(readGrace, cancel) })
	m.release = func() { stop(); cancel() }
	return m, nil
}

// at is engine.Config.AtWindow's part: it starts the window's read.
func (m *deviceMeter) at(end bool) {
	if m == nil {
		return
	}
	i := 0
	if end {
		i = 1
	}
	if m.window[i] != nil {
		return
	}
	ch := make(chan reading, 1)
	m.window[i] = ch
	go func() { ch <- read(m.ctx, &m.src) }()
}

// result takes the last reading (after the drain) and makes the block;
// window is the engine's steady window (zero times without load).
func (m *deviceMeter) result(window [2]time.Time) *metrics.Device {
	if m == nil {
		return nil
	}
	var w [2]*reading
	for i, ch := range m.window {
		if ch != nil {
			r := <-ch
			w[i] = &r
		}
	}
	m.last = read(m.ctx, &m.src)
	m.release()
	d := &metrics.Device{Source: m.src.String(), CountsReads: m.src.ReadsCounted(), InFlight: m.inFlight,
		Version: m.version}
	if m.pipeline > 1 {
		d.Pipeline = m.pipeline
	}
	fail := func(err error) {
		if d.Error == "" && err != nil {
			d.Error = err.Error()
		}
	}
	for _, r := range []*reading{&m.first, w[0], w[1], &m.last} {
		if r != nil {
			fail(r.err)
		}
	}
	diff := func(a, b *reading, reads int64) *metrics.DeviceCounts {
		if a == nil || b == nil || a.err != nil || b.err != nil {
			return nil
		}
		delta, err := devcount.Delta(a.c, b.c)
		if err != nil {
			fail(err)
			return nil
		}
		c := &metrics.DeviceCounts{Reads: reads, Seconds: b.at.Sub(a.at).Seconds()}
		for k, v := range delta {
			p := new(v)
			switch k {
			case devcount.Sessions:
				c.Sessions = p
			case devcount.Handshakes:
				c.Handshakes = p
			case devcount.Requests:
				c.Requests = p
			case devcount.BytesIn:
				c.BytesIn = p
			case devcount.BytesOut:
				c.BytesOut = p
			case devcount.TLSBytesIn:
				c.TLSBytesIn = p
			case devcount.TLSBytesOut:
				c.TLSBytesOut = p
			case devcount.Errors:
				c.Errors = p
			}
		}
		return c
	}
	reads := int64(1) // the last
	for _, r := range w {
		if r != nil {
			reads++
		}
	}
	if d.Window = diff(w[0], w[1], 1); d.Window != nil {
		// The device's counters were read somewhere between the window's
		// edge and the read's end.
		d.Window.EdgeS = max(w[0].end.Sub(window[0]), 0).Seconds() + max(w[1].end.Sub(window[1]), 0).Seconds()
	}
	d.Run = diff(&m.first, &m.last, reads)
	return d
}
