package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// TestCPSObjects: cps against the in-process reference target with a mix
// and ten requests per connection: the record has each object's share (a
// valid record), the RFC 9411 timings, and the summary a row per object.
func TestCPSObjects(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "1s", "--warmup", "0s",
		"--objects", "1k:3,16k:1", "--requests-per-conn", "10", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := metrics.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	o := r.Objects
	if len(o) != 2 || o[0].Path != "/bytes/1024" || o[1].Size != 16384 || o[0].Transactions == 0 ||
		o[0].Transactions+o[1].Transactions != r.Transactions || r.Errors.Total != 0 {
		t.Fatalf("objects %+v, %d transactions, errors %v", o, r.Transactions, r.Errors)
	}
	if l := r.Latency["rfc9411_ttlb"]; l.Count != r.Transactions {
		t.Errorf("rfc9411_ttlb %+v for %d transactions", l, r.Transactions)
	}
	// Ten transactions per connection, but for each worker's last.
	if n, c := r.Whole.Transactions, r.Whole.ConnectionsOpened; n > 10*c || n < 10*c-18 {
		t.Errorf("%d transactions on %d connections", n, c)
	}
	for _, want := range []string{"rfc9411_ttfb", "/bytes/1024", "/bytes/16384", "ttlb p99"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	t.Logf("\n%s", stdout)
}
