package main

import "testing"

// BenchmarkFloor is the Go crypto floor of the throughput comparison: one
// core opening 16 KiB TLS 1.2 records (go test -bench Floor ./cmd/peerbench;
// MB/s is plaintext).
func BenchmarkFloor(b *testing.B) {
	for _, o := range floorOpeners {
		b.Run(o.name, benchFloor(o.open()))
	}
}
