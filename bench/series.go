package bench

import (
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// series closes the run's seconds: second k at start + k s (a late wake-up
// does not shift the seconds after it), each k once, handing each to
// progress from its one goroutine.
type series struct {
	rec      *metrics.Recorder
	start    time.Time
	progress func(metrics.Second)
	secs     []metrics.Second
	ticked   int           // the last second closed
	quit     chan struct{} // closed by finish
	done     chan struct{} // closed by tick when it returns
}

func startSeries(rec *metrics.Recorder, start time.Time, progress func(metrics.Second)) *series {
	s := &series{rec: rec, start: start, progress: progress, quit: make(chan struct{}), done: make(chan struct{})}
	go s.tick()
	return s
}

// at is when second k ends.
func (s *series) at(k int) time.Time { return s.start.Add(time.Duration(k) * time.Second) }

func (s *series) tick() {
	defer close(s.done)
	t := time.NewTimer(time.Until(s.at(1)))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.ticked++
			sec := s.rec.Tick(s.at(s.ticked))
			s.secs = append(s.secs, sec)
			if s.progress != nil {
				s.progress(sec)
			}
			t.Reset(time.Until(s.at(s.ticked + 1)))
		case <-s.quit:
			return
		}
	}
}

// finish stops the ticks and returns the seconds. What ended after the last
// tick is the next second, partial when the run ended before that second
// did.
func (s *series) finish() []metrics.Second {
	close(s.quit)
	<-s.done
	next := s.at(s.ticked + 1)
	final := s.rec.Tick(next)
	final.Partial = time.Now().Before(next)
	if final.Transactions+final.Errors > 0 {
		s.secs = append(s.secs, final)
	}
	return s.secs
}
