package main

import (
	"bytes"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestBackendsDescriptors: more backends than RLIMIT_NOFILE allows is one
// line, exit 2, before any listener is opened.
func TestBackendsDescriptors(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	if lim.Cur+1 > maxBackends {
		t.Skipf("RLIMIT_NOFILE %d allows every port", lim.Cur)
	}
	n := strconv.FormatUint(lim.Cur, 10)
	var out bytes.Buffer
	_, err := parseServe([]string{"--plain", "--backends", n}, &out)
	if err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("--backends %s with RLIMIT_NOFILE %d: %v", n, lim.Cur, err)
	}
	if _, ok := err.(*usageError); !ok {
		t.Errorf("%T, want a usage error (exit 2)", err)
	}
}
