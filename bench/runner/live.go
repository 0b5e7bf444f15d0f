package runner

import "github.com/tlsbench/tlsbench/bench"

// Live is a run's state while the load goes (bench.Live), for Spec.Live.
type Live = bench.Live
