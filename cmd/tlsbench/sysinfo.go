package main

import (
	"runtime"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

func toolInfo() metrics.Tool {
	return metrics.Tool{Name: "tlsbench", Version: version, GoVersion: runtime.Version()}
}
