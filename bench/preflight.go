package bench

import (
	"context"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// Preflight makes one transaction of op before any load, exactly as a
// worker of the load makes them: a worker of op (id 0, the first source
// address) runs one Do and is closed. The sample says how it went (Class ""
// on success); it is recorded nowhere. An error means no worker could be
// made.
func Preflight(ctx context.Context, op Op) (metrics.Sample, error) {
	var s metrics.Sample
	w, err := op.NewWorker(0)
	if err != nil {
		return s, err
	}
	defer closeWorker(w)
	now := time.Now()
	s.Intended, s.Start, s.Steady = now, now, false
	w.Do(ctx, &s)
	s.Dur[metrics.Uncorrected] = s.Dur[metrics.Total]
	if s.Class == "" && s.Err == nil && ctx.Err() != nil {
		s.Class, s.Err = ClassOther, ctx.Err()
	}
	return s, nil
}
