package engine

import (
	"runtime"
	"syscall"
	"time"
)

// prSetTimerSlack and prGetTimerSlack are prctl(2) options.
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// preciseWaits locks the pacer to its thread and lowers the thread's timer
// slack (50 µs by default) to 1 ns, so that waitUntil's sleeps end on time;
// the returned function undoes both.
func preciseWaits() (restore func()) {
	runtime.LockOSThread()
	old, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		return runtime.UnlockOSThread
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	return func() {
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0)
		runtime.UnlockOSThread()
	}
}

// pacerSpin is the last part of a wait, spent polling the clock.
const pacerSpin = 20 * time.Microsecond

// waitUntil returns at t: it sleeps in nanosleep(2) (not the runtime's
// timers) until pacerSpin before t, then polls the clock.
func waitUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		if d > pacerSpin {
			ts := syscall.NsecToTimespec(int64(d - pacerSpin))
			_ = syscall.Nanosleep(&ts, nil)
			continue
		}
		runtime.Gosched()
	}
}
