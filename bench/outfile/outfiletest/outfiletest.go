// Package outfiletest is test support for output files: a FIFO whose
// reader collects what a writer sends through it.
package outfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// FIFO makes a FIFO named name in dir (skipping the test where mkfifo
// fails) and reads it in the background until complete says the data read
// so far is whole, the writer closes, or wait has passed. The channel yields
// what was read (nil if the FIFO could not be opened).
func FIFO(t testing.TB, dir, name string, complete func([]byte) bool, wait time.Duration) (string, <-chan []byte) {
	t.Helper()
	fifo := filepath.Join(dir, name)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		// O_RDWR never blocks on a FIFO; the deadline bounds the reads.
		f, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		_ = f.SetReadDeadline(time.Now().Add(wait))
		var data []byte
		buf := make([]byte, 64<<10)
		for !complete(data) {
			n, err := f.Read(buf)
			data = append(data, buf[:n]...)
			if err != nil {
				break
			}
		}
		got <- data
	}()
	return fifo, got
}
