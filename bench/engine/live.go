package engine

import (
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// Live is a run's state while the load goes, for what reads it when asked
// (the Prometheus exporter reads the recorder at scrape time, so a
// transaction costs nothing more). Config.Live receives it once the load
// starts; it stays valid after Run returns (the recorder then holds the
// run's final counts).
type Live struct {
	// Recorder is the run's: Snapshot may be called at any time.
	Recorder *metrics.Recorder
	// Started, SteadyStart and End are the load's start, the steady
	// window's start and its planned end.
	Started, SteadyStart, End time.Time
	// OpenConns counts the operation's open connections (now, and the most
	// at once); nil when the operation does not count them.
	OpenConns func() (now, peak int64)
}

// live is the Live of load l applying op.
func (l *load) live(op Op) Live {
	lv := Live{Recorder: l.rec, Started: l.start, SteadyStart: l.steadyStart, End: l.end}
	if c, ok := op.(connCounter); ok {
		lv.OpenConns = c.OpenConns
	}
	return lv
}
