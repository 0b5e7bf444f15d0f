package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be the scale program's children (target and
// generators), as the program itself is.
func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestScale holds 2,000 connections with each engine (500 under the race
// detector, without the memory checks and the kernel's CPS average): every
// throughput connection opened before the load and held to the end, every
// CPS worker with a connection and 80% established on average, no error,
// and the generators' RSS per connection within the budget; then QUIC's
// (testScaleQUIC).
func TestScale(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of connections (about 55 s)")
	}
	defer t.Run("quic", testScaleQUIC)
	n := 2000
	args := []string{"--warmup", "2s", "-d", "5s"}
	if raceEnabled {
		n = 500
		args = append(args, "--deadline", "30s")
	}
	args = append(args, "-c", strconv.Itoa(n), "--max-kb", "1000")
	rec := runScale(t, args...)
	if len(rec) != 2 {
		t.Fatalf("%d results, want throughput and cps", len(rec))
	}
	for _, r := range rec {
		if errs := r.Run.Whole.Errors; errs != 0 {
			t.Errorf("%s: %d errors %v", r.Engine, errs, r.Run.Errors.ByClass)
		}
		want := int64(n)
		switch r.Engine {
		case "throughput":
			// Held from before the load to the end of the window, in the
			// kernel's count and the engine's; each opened once.
			if r.HeldMin != want || r.heldEnd() != want || r.Run.Whole.ConnectionsOpened != want {
				t.Errorf("throughput: held %d at least and %d at the end, %d opened; want %d", r.HeldMin, r.heldEnd(), r.Run.Whole.ConnectionsOpened, n)
			}
		case "cps":
			// Instrumented, the generator is several times slower: more of
			// its connections wait for it after the server's close
			// (CLOSE_WAIT), so the kernel's average is not checked then.
			// A worker is between its close and its next connect for a
			// moment: the most open at once may miss N by a few. The race
			// detector makes that moment several times longer: 419–498 of
			// 500 were seen with it on this 2-core VM (2026-12-01 and -02:
			// 448 at 1,276 CPS on a quiet machine, 419 at 16 CPS under a
			// load average of 13), so it is held to 80% there; without it,
			// to 99% (make test runs this test both ways).
			least := 0.99
			if raceEnabled {
				least = 0.80
			}
			if r.openPeak() > want || float64(r.openPeak()) < least*float64(n) || (!raceEnabled && r.HeldMean < 0.8*float64(n)) {
				t.Errorf("cps: %d open at most, %.0f established on average; want %d (%.0f%%) and 80%% of it", r.openPeak(), r.HeldMean, n, least*100)
			}
		}
		if raceEnabled {
			continue
		}
		// The budget, per connection of the generators' peak RSS. At 2,000
		// CPS connections the runtime's fixed cost (≈10 MB, 5 KB each) and
		// the churn weigh more than at 20,000 (`make scale`: about 34 KB):
		// the CPS check takes the growth over the idle process.
		kb, maxKB := r.KBPerConn, 40.0
		if r.Engine == "cps" {
			kb, maxKB = r.KBPerConnDx, 50
		}
		report := t.Logf
		if kb > maxKB {
			report = t.Errorf
		}
		report("%s: %.1f KB RSS per connection, budget %.0f", r.Engine, kb, maxKB)
	}
}

// runScale runs the scale program with args, and returns its results.
func runScale(t *testing.T, args ...string) []*result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "scale.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Files: the children's stderr is copied in by other goroutines.
	stdout, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	code := run(ctx, append(args, "--out", out), stdout, stderr)
	o, _ := os.ReadFile(stdout.Name())
	e, _ := os.ReadFile(stderr.Name())
	t.Logf("exit %d\n%s%s", code, o, e)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Results []*result }
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Results
}

// testScaleQUIC holds 500 QUIC connections (HTTP/3, throughput; 200
// under the race detector) against the reference target: all opened before
// the load, held to the end in the kernel's count (connected UDP sockets)
// and the engine's, no error, the generator's RSS growth per connection
// within 200 KB (without the race detector).
func testScaleQUIC(t *testing.T) {
	n := 500
	args := []string{"--http", "3", "--engine", "throughput", "--warmup", "1s", "-d", "3s"}
	if raceEnabled {
		n = 200
		args = append(args, "--deadline", "30s")
	}
	rec := runScale(t, append(args, "-c", strconv.Itoa(n), "--max-kb", "1000")...)
	if len(rec) != 1 || rec[0].Run.ProtocolName() != "http/3" || rec[0].Run.QUIC == nil {
		t.Fatalf("%d results, want throughput over HTTP/3", len(rec))
	}
	r, want := rec[0], int64(n)
	if errs := r.Run.Whole.Errors; errs != 0 {
		t.Errorf("%d errors %v", errs, r.Run.Errors.ByClass)
	}
	if r.HeldMin != want || r.heldEnd() != want || r.Run.Whole.ConnectionsOpened != want {
		t.Errorf("held %d at least and %d at the end, %d opened; want %d", r.HeldMin, r.heldEnd(),
			r.Run.Whole.ConnectionsOpened, n)
	}
	if raceEnabled {
		return
	}
	// At 500 connections quic-go's fixed costs (its buffer pools, the
	// runtime's) weigh more than at 10,000 (142 KB, docs/PERFORMANCE.md):
	// 159 KB was measured here (2026-12-07).
	const maxKB = 200
	report := t.Logf
	if r.KBPerConnDx > maxKB {
		report = t.Errorf
	}
	report("%.1f KB RSS growth per QUIC connection, budget %d", r.KBPerConnDx, maxKB)
}

// TestHTTPFlag: --http 3 checks QUIC against tlsbench serve with a TLS 1.3
// profile and QUIC's budget unless given; another version, or nginx (no
// QUIC here), is refused, exit 2.
func TestHTTPFlag(t *testing.T) {
	o, err := parse([]string{"--http", "3"})
	if err != nil || o.target != "serve" || o.profile != "tls13-aes128-gcm-x25519" || o.maxKB != quicMaxKB {
		t.Errorf("--http 3: %+v, %v", o, err)
	}
	if o, err := parse([]string{"--http", "3", "--profile", "tls13-x25519mlkem768", "--max-kb", "90"}); err != nil ||
		o.profile != "tls13-x25519mlkem768" || o.maxKB != 90 {
		t.Errorf("--http 3 with a profile and a budget: %+v, %v", o, err)
	}
	for _, args := range [][]string{{"--http", "2"}, {"--http", "3", "--target", "nginx"}} {
		var stderr strings.Builder
		if code := run(context.Background(), args, io.Discard, &stderr); code != 2 ||
			strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and one line", args, code, stderr.String())
		}
	}
}
