package http3

import (
	"context"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// losses counts what quic-go's ConnectionStats does not of a connection:
// its probe timeouts (RFC 9002 §6.2), and those of them in the handshake's
// packet number spaces (Initial, Handshake). quic-go reports them only as
// qlog events: losses is the connection's qlog trace, that counts the
// events it is given and writes none. Events come from the connection's
// own goroutine, and are read from the worker's. It also gives samples the
// packets lost (ConnectionStats') since the last.
type losses struct {
	ptos, handshakePTOs atomic.Int64
	pto                 uint32 // the last pto_count reported (the run loop's alone)
	// The packets lost and PTOs already given to samples (the worker's).
	givenLost, givenPTOs int64
}

// lossKey is the context key of a connection's losses (dial's context).
type lossKey struct{}

// traceLosses is quic.Config's Tracer: the losses that dial put in the
// connection's context, nil (no trace) without.
func traceLosses(ctx context.Context, _ bool, _ quic.ConnectionID) qlogwriter.Trace {
	if l, ok := ctx.Value(lossKey{}).(*losses); ok {
		return l
	}
	return nil
}

// lossesOf returns qc's losses (a zero count when it has none).
func lossesOf(qc *quic.Conn) *losses {
	if l, ok := qc.Context().Value(lossKey{}).(*losses); ok {
		return l
	}
	return &losses{}
}

// AddProducer is qlogwriter.Trace's: the connection's one producer.
func (l *losses) AddProducer() qlogwriter.Recorder { return l }

// Close is qlogwriter.Recorder's: nothing to flush.
func (l *losses) Close() error { return nil }

// RecordEvent counts e. A PTO raises quic-go's pto_count, an
// acknowledgment (or dropped keys) sets it back to 0: the PTOs are its
// rises. A PTO's expiry event names its packet number space.
func (l *losses) RecordEvent(e qlogwriter.Event) {
	switch e := e.(type) {
	case qlog.PTOCountUpdated:
		if e.PTOCount > l.pto {
			l.ptos.Add(int64(e.PTOCount - l.pto))
		}
		l.pto = e.PTOCount
	case qlog.TimerUpdated:
		if e.Type != qlog.TimerEventTypeExpired || e.TimerType != qlog.TimerTypePTO {
			return
		}
		if lv := e.EncLevel.String(); lv == "Initial" || lv == "Handshake" {
			l.handshakePTOs.Add(1)
		}
	}
}

// give gives s the packets lost (lost: ConnectionStats' count, which only
// grows) and the PTOs since the last sample.
func (l *losses) give(s *metrics.Sample, lost uint64) {
	ptos := l.ptos.Load()
	s.QUICLost += int32(max(int64(lost)-l.givenLost, 0))
	s.QUICPTOs += int32(ptos - l.givenPTOs)
	l.givenLost, l.givenPTOs = max(int64(lost), l.givenLost), ptos
}

// addTo adds the connection's PTOs, at its close, to the run's a (when it
// counts them).
func (l *losses) addTo(a *metrics.QUIC) {
	if p := a.PTOs; p != nil {
		ptos := l.ptos.Load()
		p.Count += ptos
		p.Handshake += l.handshakePTOs.Load()
		if ptos > 0 {
			p.Connections++
		}
	}
}

// countPTOs makes b's connections count their PTOs: a qlog trace of each
// connection (traceLosses). It costs client CPU per packet, whatever the
// trace does: quic-go makes an event of every packet sent and received
// (docs/HTTP3.md).
func (b *base) countPTOs() {
	b.qconf.Tracer = traceLosses
	b.acct.PTOs = &metrics.QUICPTOs{}
}
