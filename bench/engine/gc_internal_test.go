package engine

import (
	"runtime/debug"
	"testing"
)

// TestHoldLowGC: while held, GOGC is manyConnectionsGC, or the setting
// found when that is lower or off; the last release restores it, and a
// release counts once.
func TestHoldLowGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	get := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	for _, tc := range []struct{ found, held int }{{100, manyConnectionsGC}, {10, 10}, {-1, -1}} {
		debug.SetGCPercent(tc.found)
		releaseA, releaseB := holdLowGC(), holdLowGC()
		if p := get(); p != tc.held {
			t.Errorf("found %d: GOGC %d held twice, want %d", tc.found, p, tc.held)
		}
		releaseA()
		releaseA()
		if p := get(); p != tc.held {
			t.Errorf("found %d: GOGC %d still held once, want %d", tc.found, p, tc.held)
		}
		releaseB()
		if p := get(); p != tc.found {
			t.Errorf("found %d: GOGC %d after both releases, want it restored", tc.found, p)
		}
	}
}
