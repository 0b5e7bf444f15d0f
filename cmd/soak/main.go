// Command soak runs the CPS engine against the reference target (both in
// this process) for a long time and reports goroutines, open file
// descriptors and RSS at the start and at the end, which must be flat:
// nothing leaks per connection. `make soak` runs it for 5 minutes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

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

func main() {
	fs := pflag.NewFlagSet("soak", pflag.ContinueOnError)
	dur := fs.DurationP("duration", "d", 5*time.Minute, "how long to run")
	conc := fs.IntP("concurrency", "c", 32, "connections in flight")
	name := fs.String("profile", "ecdhe-ecdsa-aes128-sha256-p256", "cipher profile")
	every := fs.Duration("every", 30*time.Second, "sampling interval")
	if err := fs.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	p, err := profiles.Builtin().Get(*name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	defer tg.Close()
	cfg := cps.Defaults()
	cfg.Profile, cfg.Address, cfg.Host = p, tg.Listener(p.Name).Addr, "localhost"
	cfg.TLS = profiles.ClientOptions{ServerName: "localhost", RootCAs: tg.CA.Pool()}
	op, err := cps.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
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
			fmt.Printf("%8s  %8d transactions  %5d goroutines  %4d fds  %7.1f MB RSS\n", smp.at, smp.txns, smp.goroutines, smp.fds, smp.rssMB)
		}
	}
	fmt.Printf("soak: cps, %s, -c %d, %s against the in-process reference target\n", p.Name, *conc, *dur)
	res, err := bench.Apply(ctx, bench.Config{Concurrency: *conc, Duration: *dur, Progress: progress}, op)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	runtime.GC()
	end := measure(time.Since(start).Round(time.Second), res.Snapshot.AllOK+res.Snapshot.AllErrors)
	fmt.Printf("%8s  %8d transactions  %5d goroutines  %4d fds  %7.1f MB RSS (after the run)\n", end.at, end.txns, end.goroutines, end.fds, end.rssMB)
	fmt.Printf("errors: %v\n", res.Snapshot.Errors)
	if len(samples) < 2 {
		fmt.Println("soak: too short to judge (fewer than two samples during the run)")
		return
	}
	first, last := samples[0], samples[len(samples)-1]
	flat := last.goroutines <= first.goroutines+*conc/4+4 && last.fds <= first.fds+*conc/4+4 && last.rssMB <= first.rssMB*1.25+8
	fmt.Printf("first sample → last sample: goroutines %d → %d, fds %d → %d, RSS %.1f → %.1f MB: ", first.goroutines, last.goroutines, first.fds, last.fds, first.rssMB, last.rssMB)
	if !flat {
		fmt.Println("NOT flat")
		os.Exit(1)
	}
	fmt.Println("flat")
}
