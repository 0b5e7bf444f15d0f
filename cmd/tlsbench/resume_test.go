package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// TestResumeCommand: cps --resume against the in-process reference target
// writes a record its schema and the Go validation accept, with the split
// of the handshakes, and its table shows the session reuse and the split
// (a run without --resume keeps the CPS (SR=0) column).
func TestResumeCommand(t *testing.T) {
	for _, tc := range []struct {
		profile, mode string
	}{
		{"ecdhe-ecdsa-aes128-sha256-p256", "tickets"},
		{"tls13-aes128-gcm-x25519", "psk"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "run.json")
			code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "500ms", "--warmup",
				"100ms", "--resume", "0.5", "--profile", tc.profile, "--json", file)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "SR ") || !strings.Contains(stdout, "0.5 "+tc.mode) ||
				!strings.Contains(stdout, "RESUMED/s") || strings.Contains(stdout, "CPS (SR=0)") {
				t.Errorf("table without the session reuse:\n%s", stdout)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkJSON(t, file, data)
			r, err := metrics.DecodeRun(data)
			if err != nil {
				t.Fatal(err)
			}
			x := r.Resumption
			if x == nil || x.Mode != tc.mode || x.Resumed == 0 || x.Full == 0 || x.Full+x.Resumed != r.Transactions {
				t.Fatalf("resumption %+v of %d transactions", x, r.Transactions)
			}
			if r.Whole.Resumed < x.Resumed || r.Preflight.Resumed != 1 {
				t.Errorf("whole run %+v, preflight %+v: the window's %d resumed are among them", r.Whole, r.Preflight,
					x.Resumed)
			}
		})
	}
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "200ms", "--warmup", "0s")
	if code != exitOK || !strings.Contains(stdout, "CPS (SR=0)") || strings.Contains(stdout, "RESUMED") {
		t.Errorf("SR=0 run: exit %d, table:\n%s%s", code, stdout, stderr)
	}
}
