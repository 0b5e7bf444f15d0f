package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestServeReadyLine: after its table serve prints one JSON line that
// target.ParseReady reads (the harnesses' protocol), with the table's address
// and the --ca-out file.
func TestServeReadyLine(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb testdut.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--port", "0", "--profile", "rsa2048-aes128-gcm-sha256", "--ca-out", ca}, &out, &errb)
	}()
	defer func() { cancel(); <-done }()
	var ready target.Ready
	var table string
	for deadline := time.Now().Add(10 * time.Second); !ready.Ready && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "rsa2048-aes128-gcm-sha256" {
				table = f[1]
			}
			if r, ok, err := target.ParseReady(line); err != nil {
				t.Fatal(err)
			} else if ok {
				ready = r
			}
		}
	}
	if !ready.Ready || ready.CA != ca || table == "" || ready.Addr("rsa2048-aes128-gcm-sha256") != table || len(ready.Listeners) != 1 {
		t.Fatalf("ready line %+v, table address %q; output %q %q", ready, table, out.String(), errb.String())
	}
}
