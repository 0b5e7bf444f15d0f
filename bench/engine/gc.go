package engine

import (
	"runtime/debug"
	"sync"
)

// With manyConnections workers or more, Run lowers the garbage collector's
// target (GOGC) to manyConnectionsGC for the run: the heap then grows 25%
// over what is live instead of 100%, and most of what is live is the
// connections' own state. Measured at 20,000 connections (docs/PERFORMANCE.md).
const (
	manyConnections   = 1000
	manyConnectionsGC = 25
)

// gcHold counts the runs holding GOGC low. The setting is the process's and
// runs may overlap (agents, tests, a campaign's workers): the first hold
// lowers it, unless it is lower or off already, and the last release
// restores what the first found.
var gcHold struct {
	sync.Mutex
	n     int
	found int
}

// holdLowGC holds GOGC at manyConnectionsGC or lower until the returned
// function is called (once).
func holdLowGC() (release func()) {
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.n == 0 {
		gcHold.found = debug.SetGCPercent(manyConnectionsGC)
		if f := gcHold.found; f < manyConnectionsGC {
			debug.SetGCPercent(f) // off (negative), or lower already
		}
	}
	gcHold.n++
	return sync.OnceFunc(func() {
		gcHold.Lock()
		defer gcHold.Unlock()
		if gcHold.n--; gcHold.n == 0 {
			debug.SetGCPercent(gcHold.found)
		}
	})
}
