package engine

import (
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// tcpCloser is a Worker that holds a connection across transactions and,
// closing it when it will run no more, reports the kernel's account of it
// (metrics.TCPConn; ok false when none was read).
type tcpCloser interface {
	CloseTCP() (t metrics.TCPConn, ok bool)
}

// closeWorkerTCP closes worker id once it will run no more; a connection
// it held is recorded with the kernel's account of it, in the window when
// the window had begun (it was open in it).
func (l *load) closeWorkerTCP(id int, w Worker) {
	c, ok := w.(tcpCloser)
	if !ok {
		closeWorker(w)
		return
	}
	if t, ok := c.CloseTCP(); ok {
		l.rec.RecordTCP(id, t, !time.Now().Before(l.steadyStart))
	}
}

// recordTCP records the connections of a transaction that the drain
// abandoned: they count in the run's seconds, not in the window.
func (l *load) recordTCP(id int, s *metrics.Sample) {
	for k := range s.TCP.N {
		l.rec.RecordTCP(id, s.TCP.Conns[k], false)
	}
}
