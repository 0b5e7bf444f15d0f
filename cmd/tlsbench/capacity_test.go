package main

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckCapacity: a -c whose measured memory per connection exceeds what
// is available is refused with the numbers and --shard suggested.
func TestCheckCapacity(t *testing.T) {
	saved := availableMemory
	defer func() { availableMemory = saved }()
	availableMemory = func() uint64 { return 100e6 } // 100 MB
	err := checkCapacity("cps", 10000)               // 10,000 × 34 KB = 340 MB
	var ue *usageError
	if !errors.As(err, &ue) {
		t.Fatalf("not refused as bad usage: %v", err)
	}
	for _, want := range []string{"-c 10000", "34 KB", "0.3 GB", "0.1 GB available", "--shard"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := checkCapacity("throughput", 2000); err != nil { // 34.6 MB
		t.Errorf("2,000 throughput connections in 100 MB: %v", err)
	}
	if err := checkCapacity("cps", 1<<30); err == nil {
		t.Error("a billion connections accepted")
	}
}
