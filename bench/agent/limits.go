package agent

import (
	"time"
)

// Limits bound what one push may cost the collector. The zero value of a
// field is its default (DefaultLimits).
type Limits struct {
	// MaxRecord is the largest record body taken: a push that announces
	// more (Content-Length) is refused before its body is read.
	MaxRecord int64
	// MaxHeaderBytes bounds the request line and headers (431 beyond).
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds the wait for the headers, ReadTimeout the
	// whole request, body included: a slow sender is cut off.
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds the answer; IdleTimeout a kept-alive
	// connection's wait for its next request.
	WriteTimeout, IdleTimeout time.Duration
	// MaxConns is the most connections served at once; more wait in the
	// backlog.
	MaxConns int
}

// DefaultLimits returns the collector's default bounds.
func DefaultLimits() Limits {
	return Limits{
		MaxRecord:         maxRecord,
		MaxHeaderBytes:    16 << 10,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxConns:          64,
	}
}

// withDefaults returns l with its zero (or negative) fields set to the
// defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.MaxRecord, d.MaxRecord)
	orDefault(&l.MaxHeaderBytes, d.MaxHeaderBytes)
	orDefault(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	orDefault(&l.ReadTimeout, d.ReadTimeout)
	orDefault(&l.WriteTimeout, d.WriteTimeout)
	orDefault(&l.IdleTimeout, d.IdleTimeout)
	orDefault(&l.MaxConns, d.MaxConns)
	return l
}

// orDefault sets *v to def when it is not positive.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
