//go:build !linux

package engine

import (
	"runtime"
	"time"
)

func preciseWaits() (restore func()) { return func() {} }

// waitUntil returns at t, polling the clock and yielding in between.
func waitUntil(t time.Time) {
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}
