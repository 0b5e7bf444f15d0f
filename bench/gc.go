package bench

import (
	"runtime/debug"
	"slices"
	"sync"
)

// With manyConnections workers or more, Apply lowers the garbage collector's
// target (GOGC) to manyConnectionsGC for the run: the heap then grows 25%
// over what is live instead of 100%, and most of what is live is the
// connections' own state. Measured at 20,000 connections (docs/PERFORMANCE.md).
const (
	manyConnections   = 1000
	manyConnectionsGC = 25
)

// gcHolds is the GOGC the runs in progress asked for. The setting is the
// process's, and runs may overlap (agents, tests, a campaign's workers), so
// the holds are counted: while any is held, GOGC is the lowest asked for
// (or the setting found before the first hold, when that is lower or off);
// when the last is released, that setting is restored.
var gcHolds struct {
	sync.Mutex
	found int   // GOGC before the first hold
	held  []int // the percents asked for, one per hold
}

// lowerGC holds GOGC at percent or lower until the returned function is
// called (once).
func lowerGC(percent int) (release func()) {
	gcHolds.Lock()
	defer gcHolds.Unlock()
	if len(gcHolds.held) == 0 {
		gcHolds.found = debug.SetGCPercent(percent)
	}
	gcHolds.held = append(gcHolds.held, percent)
	setHeldGC()
	return sync.OnceFunc(func() {
		gcHolds.Lock()
		defer gcHolds.Unlock()
		i := slices.Index(gcHolds.held, percent)
		gcHolds.held = slices.Delete(gcHolds.held, i, i+1)
		if len(gcHolds.held) == 0 {
			debug.SetGCPercent(gcHolds.found)
			return
		}
		setHeldGC()
	})
}

// setHeldGC sets GOGC to what the holds ask for; gcHolds is locked.
func setHeldGC() {
	p := slices.Min(gcHolds.held)
	if f := gcHolds.found; f < 0 || f < p {
		p = f // off, or lower already
	}
	debug.SetGCPercent(p)
}
