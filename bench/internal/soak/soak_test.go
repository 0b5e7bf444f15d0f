package soak

import (
	"context"
	"crypto/tls"
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

var (
	soak  = flag.Duration("soak", 0, "run TestSoak for this long (0: skip it)")
	every = flag.Duration("soak-every", 30*time.Second, "TestSoak's sampling interval")
	conc  = flag.Int("soak-c", 32, "TestSoak's connections in flight")
)

// sample is the process's goroutines, descriptors and RSS at one moment.
type sample struct {
	at         time.Duration
	goroutines int
	fds        int
	rssMB      float64
	txns       int64
}

func measure(at time.Duration, txns int64) sample {
	s := sample{at: at, goroutines: runtime.NumGoroutine(), txns: txns}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		s.fds = len(ents)
	}
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			s.rssMB = float64(pages*int64(os.Getpagesize())) / 1e6
		}
	}
	return s
}

// TestSoak runs cps against the in-process reference target for -soak and
// checks that nothing leaks per connection: from the first sample during
// the run to the last, goroutines and descriptors grow by at most a quarter
// of the connections (plus 4) and RSS by at most 25% (plus 8 MB).
func TestSoak(t *testing.T) {
	if *soak <= 0 {
		t.Skip("a long run: go test -run Soak -soak 5m")
	}
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tg := testdut.StartTarget(t, p)
	cfg := cps.Defaults()
	cfg.Profile, cfg.Address, cfg.Host = p, tg.Listener(p.Name).Addr, "localhost"
	cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()}
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *soak+2*time.Minute)
	defer cancel()
	start := time.Now()
	var samples []sample
	var done int64
	next := *every
	progress := func(s metrics.Second) {
		done += s.Transactions + s.Errors
		if at := time.Since(start); at >= next {
			next += *every
			smp := measure(at.Round(time.Second), done)
			samples = append(samples, smp)
			t.Logf("%8s  %8d transactions  %5d goroutines  %4d fds  %7.1f MB RSS", smp.at, smp.txns, smp.goroutines, smp.fds, smp.rssMB)
		}
	}
	t.Logf("cps, %s, -c %d, %s against the in-process reference target", p.Name, *conc, *soak)
	res, err := engine.Run(ctx, engine.Config{Load: engine.Load{Concurrency: *conc, Duration: *soak}, Progress: progress}, op)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	end := measure(time.Since(start).Round(time.Second), res.Snapshot.AllOK+res.Snapshot.AllErrors)
	t.Logf("%8s  %8d transactions  %5d goroutines  %4d fds  %7.1f MB RSS (after the run); errors: %v",
		end.at, end.txns, end.goroutines, end.fds, end.rssMB, res.Snapshot.Errors)
	if len(samples) < 2 {
		t.Skip("too short to judge (fewer than two samples during the run): lower -soak-every")
	}
	first, last := samples[0], samples[len(samples)-1]
	if last.goroutines > first.goroutines+*conc/4+4 || last.fds > first.fds+*conc/4+4 || last.rssMB > first.rssMB*1.25+8 {
		t.Errorf("not flat: goroutines %d → %d, fds %d → %d, RSS %.1f → %.1f MB", first.goroutines, last.goroutines, first.fds, last.fds, first.rssMB, last.rssMB)
	}
}
