package bench

import (
	"runtime/debug"
	"testing"
)

// TestLowerGC: while held, GOGC is the lowest asked for, or the setting
// found when that is lower or off; the last release restores it.
func TestLowerGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	get := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	for _, tc := range []struct{ found, a, b, both, afterA int }{
		{100, 25, 50, 25, 50},
		{100, 50, 25, 25, 25},
		{10, 25, 50, 10, 10}, // lower already
		{-1, 25, 25, -1, -1}, // off
	} {
		debug.SetGCPercent(tc.found)
		releaseA := lowerGC(tc.a)
		releaseB := lowerGC(tc.b)
		if p := get(); p != tc.both {
			t.Errorf("%+v: GOGC %d with both held", tc, p)
		}
		releaseA()
		releaseA() // once only
		if p := get(); p != tc.afterA {
			t.Errorf("%+v: GOGC %d after the first release", tc, p)
		}
		releaseB()
		if p := get(); p != tc.found {
			t.Errorf("%+v: GOGC %d after both releases, want %d restored", tc, p, tc.found)
		}
	}
}
