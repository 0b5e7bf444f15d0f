package runner

import "github.com/tlsbench/tlsbench/bench/engine"

// Live is a run's state while the load goes (engine.Live), for Spec.Live.
type Live = engine.Live
