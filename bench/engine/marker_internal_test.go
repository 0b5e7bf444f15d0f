package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// gauge is an Op that only counts its open connections.
type gauge struct {
	Op
	n atomic.Int64
}

func (g *gauge) OpenConns() (now, peak int64) { return g.n.Load(), 0 }

// TestMarkerNominalEnd: a second's open connections are those sampled by
// its nominal end, whenever its tick comes. Here 8 are open through the
// second; its tick comes late, after 2 of them closed in the next second:
// the second still counts 8 (and the late sample is in no mean). The
// run's last second, marked before its end (partial), samples then. The
// seconds' ends are set, not waited for: nothing depends on the machine's
// speed.
func TestMarkerNominalEnd(t *testing.T) {
	g := &gauge{}
	g.n.Store(3)
	m := (&load{start: time.Now()}).marker(g)
	if m == nil || m.last != 3 || !m.end.Equal(m.l.start.Add(time.Second)) {
		t.Fatalf("marker %+v: want the open connections at the start, the first second ending 1 s after it", m)
	}
	m.end = time.Now().Add(time.Hour) // the second goes on
	g.n.Store(8)
	m.sample()
	m.sample()
	end := time.Now().Add(-time.Millisecond) // the second has ended, its tick not yet come
	m.end = end
	g.n.Store(6)
	m.sample()
	var s metrics.Second
	m.mark(&s, end)
	if s.OpenConns != 8 || s.OpenConnsMean != 8 {
		t.Errorf("a late tick: %d open connections, mean %g; want 8 and 8, sampled by the second's end", s.OpenConns,
			s.OpenConnsMean)
	}
	if !m.end.Equal(end.Add(time.Second)) || m.n != 0 {
		t.Errorf("the next second ends at %s after the last, with %d samples; want 1s and 0", m.end.Sub(end), m.n)
	}
	m.end = time.Now().Add(time.Hour) // the last second, cut short by the run's end
	m.sample()
	g.n.Store(0)
	var last metrics.Second
	m.mark(&last, m.end)
	if last.OpenConns != 0 || last.OpenConnsMean != 3 {
		t.Errorf("a partial second: %d open connections, mean %g; want 0 (now) and 3", last.OpenConns, last.OpenConnsMean)
	}
}
