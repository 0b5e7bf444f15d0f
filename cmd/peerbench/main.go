// Command peerbench measures, side by side and interleaved in one run, the
// client CPU cost of tlsbench's engines and of a peer generator against two
// devices under test on loopback: nginx (one worker) and the reference target
// (`tlsbench serve`). The DUT is pinned to CPU 0, the generator to CPU 1.
//
//   - cps: `tlsbench cps` vs `ab`, both making a full TLS handshake on every
//     connection (HTTP/1.0) for /1k; figure of merit: generator CPU per
//     completed transaction.
//   - throughput: `tlsbench throughput` vs `wrk -t1`, keep-alive GETs of /1m
//     on -c long-lived connections; figure of merit: generator CPU per GB
//     (10⁹ bytes) of response bodies. The Go crypto floor (AES-128-GCM open
//     and AES-128-CBC + HMAC-SHA256 of 16 KiB records on one core) is printed
//     beside it.
//   - over HTTP/2 (--http 2 or both; nginx only, on servers with http2):
//     `tlsbench cps --http 2` vs `h2load -c N -n N -m 1` (N new connections,
//     one request each) and `tlsbench throughput --http 2 --streams S` vs
//     `h2load -c 8 -m S -D`, with the same figures of merit.
//
// Generator CPU is user+sys from the child's rusage; the tables quote medians
// of the repetitions and the ratio tlsbench/peer. See docs/PERFORMANCE.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/runner"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitBadUsage = 2
	exitSignal   = 130
)

// usageError is bad usage or a missing tool: one line, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// profileSpec is how one seed profile is configured on nginx and asked of ab.
type profileSpec struct {
	Name    string
	CertKey string // "ecdsa" (P-256) or "rsa" (2048)
	Ciphers string // OpenSSL cipher string: nginx ssl_ciphers and ab -Z
	Curve   string // nginx ssl_ecdh_curve; "" leaves nginx's default
	Group   string // the group the handshake must negotiate ("" for RSA key exchange)
	Bulk    string // record protection, for the crypto floor: bulkGCM or bulkCBC
}

// seedProfiles are the three profiles of the reference study.
var seedProfiles = []profileSpec{
	{Name: "ecdhe-ecdsa-aes128-sha256-p256",
		CertKey: "ecdsa", Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1", Group: "P-256", Bulk: bulkCBC},
	{Name: "ecdhe-ecdsa-aes128-sha256-p384",
		CertKey: "ecdsa", Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "secp384r1", Group: "P-384", Bulk: bulkCBC},
	{Name: "rsa2048-aes128-gcm-sha256", CertKey: "rsa", Ciphers: "AES128-GCM-SHA256", Bulk: bulkGCM},
}

// moreProfiles are run only when named (--profiles): AES-GCM with ECDHE,
// the HTTP/2 engine's figures in docs/PERFORMANCE.md.
var moreProfiles = []profileSpec{{Name: "ecdhe-ecdsa-aes128-gcm-sha256-p256",
	CertKey: "ecdsa", Ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256", Curve: "prime256v1", Group: "P-256", Bulk: bulkGCM}}

// knownProfiles are the seed profiles, then moreProfiles.
func knownProfiles() []profileSpec { return slices.Concat(seedProfiles, moreProfiles) }

func lookupProfile(name string) (profileSpec, bool) {
	known := knownProfiles()
	i := slices.IndexFunc(known, func(p profileSpec) bool { return p.Name == name })
	if i < 0 {
		return profileSpec{}, false
	}
	return known[i], true
}

func profileNames(ps []profileSpec) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

// options are the parsed flags.
type options struct {
	tlsbench    string
	ab          string
	wrk         string
	nginx       string
	taskset     string
	openssl     string // optional: probes what a default OpenSSL client negotiates
	tlsPerf     string // optional: tls-perf, a third CPS peer (handshakes only)
	h2load      string
	protos      []string // "1.1", "2": the HTTP versions compared
	streams     int      // HTTP/2 throughput: concurrent streams per connection
	engines     []string
	reps        int
	duration    time.Duration
	concurrency int
	tpConc      int // throughput: connections of each generator
	duts        []string
	profiles    []profileSpec
	out         string
	tmp         string // the run's temporary directory
}

const usage = `peerbench [flags]

Runs, interleaved (tlsbench, peer, tlsbench, peer, …), against nginx and/or the
reference target (tlsbench serve) on 127.0.0.1, DUT pinned to CPU 0 and
generator to CPU 1:

  cps         tlsbench cps vs ab (a full handshake per /1k request); per DUT
              and profile: median CPS, median client CPU µs per transaction
  throughput  tlsbench throughput vs wrk -t1 (keep-alive GETs of /1m); median
              Gbps and median client CPU seconds per GB of bodies, beside the
              Go crypto floor (AES-GCM open, AES-CBC + HMAC-SHA256, 16 KiB
              records, one core)

and the ratio tlsbench/peer of the CPU figures. With --http 2 (or both), on
nginx's http2 servers:

  cps         tlsbench cps --http 2 vs h2load -c N -n N -m 1 (N new
              connections at once, one /1k request each; N sized from
              tlsbench's CPS so that it runs about as long)
  throughput  tlsbench throughput --http 2 --streams S vs h2load -c 8 -m S
              (/1m)`

func parseOptions(args []string, stdout io.Writer) (*options, error) {
	fs := pflag.NewFlagSet("peerbench", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	o := &options{}
	fs.StringVar(&o.tlsbench, "tlsbench", "bin/tlsbench", "`PATH` of the tlsbench binary (make build)")
	engine := fs.String("engine", "both", "`ENGINE` to compare: cps (vs ab), throughput (vs wrk) or both")
	fs.StringVar(&o.tlsPerf, "tls-perf", "", "`PATH` of tempesta-tech's tls-perf: a third CPS peer, handshakes only "+
		"(default: tls-perf in PATH if there, else none)")
	fs.IntVar(&o.reps, "reps", 3, "`N` repetitions of each tool per DUT and profile")
	fs.DurationVarP(&o.duration, "duration", "d", 5*time.Second, "each run's `DURATION`")
	// On loopback one connection is latency-bound (~600 CPS on nginx) and 4
	// already reach a one-core DUT's limit; 16 keeps its accept queue full
	// through scheduling hiccups on a shared machine without costing either
	// generator measurably more CPU per transaction (tlsbench: same µs/txn at
	// 8 and 32; ab is one event loop).
	fs.IntVarP(&o.concurrency, "concurrency", "c", 16, "cps: `N` concurrent connections of each generator")
	// Eight keep-alive connections keep a one-core DUT busy on loopback
	// (each waits for its own 1 MiB response) with wrk on one thread.
	fs.IntVar(&o.tpConc, "tp-concurrency", 8, "throughput: `N` keep-alive connections of each generator")
	dut := fs.String("dut", "both", "`DUT`: nginx, target or both")
	http := fs.String("http", "1.1", "`VERSION` of HTTP: 1.1 (vs ab and wrk), 2 (vs h2load; nginx only) or both")
	// One stream a connection is wrk's and h2load's default: each of the 8
	// connections waits for its own 1 MiB response.
	fs.IntVar(&o.streams, "streams", 1, "HTTP/2 throughput: `S` concurrent streams per connection (h2load -m S)")
	names := fs.StringSlice("profiles", nil, "comma-separated profile `NAMES` (default: the three seed profiles; "+
		"also ecdhe-ecdsa-aes128-gcm-sha256-p256)")
	fs.StringVar(&o.out, "out", "peerbench.json", "write raw samples and medians to `FILE` (JSON)")
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: %s\n\nFlags:\n%s", usage, fs.FlagUsages())
		return nil, err
	}
	if err != nil {
		return nil, usagef("%s", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	if o.reps < 1 {
		return nil, usagef("--reps must be at least 1, got %d", o.reps)
	}
	if o.duration < time.Second {
		return nil, usagef("--duration must be at least 1s (ab's -t counts whole seconds), got %s", o.duration)
	}
	if o.concurrency < 1 {
		return nil, usagef("-c must be at least 1, got %d", o.concurrency)
	}
	if o.tpConc < 1 {
		return nil, usagef("--tp-concurrency must be at least 1, got %d", o.tpConc)
	}
	if o.engines, err = oneOrBoth("--engine", *engine, "cps", "throughput"); err != nil {
		return nil, err
	}
	if o.duts, err = oneOrBoth("--dut", *dut, "nginx", "target"); err != nil {
		return nil, err
	}
	if o.protos, err = oneOrBoth("--http", *http, "1.1", "2"); err != nil {
		return nil, err
	}
	switch {
	case o.streams < 1:
		return nil, usagef("--streams must be at least 1, got %d", o.streams)
	case *http != "1.1" && !slices.Contains(o.duts, "nginx"):
		return nil, usagef("--http %s needs --dut nginx or both: only nginx serves HTTP/2 here", *http)
	}
	if len(*names) == 0 {
		o.profiles = seedProfiles
	}
	for _, n := range *names {
		p, ok := lookupProfile(strings.TrimSpace(n))
		if !ok {
			return nil, usagef("unknown profile %q (known: %s)", n, strings.Join(profileNames(knownProfiles()), ", "))
		}
		o.profiles = append(o.profiles, p)
	}
	return o, nil
}

// oneOrBoth reads a flag whose value is a, b or both.
func oneOrBoth(flag, v, a, b string) ([]string, error) {
	switch v {
	case a, b:
		return []string{v}, nil
	case "both":
		return []string{a, b}, nil
	}
	return nil, usagef("bad %s %q: want %s, %s or both", flag, v, a, b)
}

// findTools resolves every external program before anything starts.
func (o *options) findTools() error {
	look := func(name, hint string) (string, error) {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", usagef("%s not found%s", name, hint)
		}
		return p, nil
	}
	var err error
	if o.tlsbench, err = look(o.tlsbench, " (build it: make build, or pass --tlsbench PATH)"); err != nil {
		return err
	}
	h1 := slices.Contains(o.protos, "1.1")
	if slices.Contains(o.protos, "2") {
		if o.h2load, err = look("h2load", " in PATH (Debian package nghttp2-client)"); err != nil {
			return err
		}
	}
	if o.wants("cps") && h1 {
		if o.ab, err = look("ab", " in PATH (Debian package apache2-utils)"); err != nil {
			return err
		}
		if o.tlsPerf != "" {
			if o.tlsPerf, err = look(o.tlsPerf, " (build it from github.com/tempesta-tech/tls-perf)"); err != nil {
				return err
			}
		} else {
			o.tlsPerf, _ = exec.LookPath("tls-perf")
		}
	}
	if o.wants("throughput") && h1 {
		if o.wrk, err = look("wrk", " in PATH (Debian package wrk)"); err != nil {
			return err
		}
		o.openssl, _ = exec.LookPath("openssl")
	}
	if o.taskset, err = look("taskset", " in PATH (Debian package util-linux)"); err != nil {
		return err
	}
	if slices.Contains(o.duts, "nginx") {
		if o.nginx, err = look("nginx", " in PATH (Debian package nginx)"); err != nil {
			return err
		}
	}
	return nil
}

// cell is what a DUT is measured on: an engine over an HTTP version with a
// profile.
type cell struct {
	engine, http string
	profile      profileSpec
}

// cells are d's cells in the order they run: engine, HTTP version (HTTP/2
// on nginx's http2 servers only), profile.
func (o *options) cells(d *dut) []cell {
	var out []cell
	for _, e := range o.engines {
		for _, http := range o.protos {
			for _, p := range o.profiles {
				if http == "1.1" || d.h2Addrs != nil {
					out = append(out, cell{e, http, p})
				}
			}
		}
	}
	return out
}

// wants reports whether the engine is to be compared.
func (o *options) wants(engine string) bool { return slices.Contains(o.engines, engine) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var err error
	if len(args) > 0 && args[0] == "duts" {
		err = runDuts(ctx, args[1:], stdout, stderr)
	} else if o, perr := parseOptions(args, stdout); perr != nil {
		err = perr
	} else if err = o.findTools(); err == nil {
		err = bench(ctx, o, stdout, stderr)
	}
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "peerbench: %s\n", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return exitBadUsage
	case ctx.Err() != nil:
		return exitSignal
	}
	return exitFailed
}

// bench measures the crypto floor (throughput), runs every DUT in turn and
// reports.
func bench(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	tmp, err := os.MkdirTemp("", "peerbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.tmp = tmp
	certs, err := writeCerts(tmp, o.profiles)
	if err != nil {
		return err
	}
	rep := &report{
		Started: time.Now(), Engines: o.engines, Reps: o.reps, Duration: o.duration.String(),
		Host: runner.HostInfo(), Tools: toolVersions(ctx, o),
	}
	if o.wants("cps") {
		rep.Concurrency = o.concurrency
	}
	if rep.HTTP = o.protos; slices.Contains(o.protos, "2") && o.wants("throughput") {
		rep.Streams = o.streams
	}
	if o.wants("throughput") {
		rep.TPConcurrency = o.tpConc
		// Before any DUT runs, on the generator's CPU: the machine is as
		// quiet as it gets.
		fmt.Fprintln(stderr, "crypto floor: timing AES-128-GCM open and AES-128-CBC + HMAC-SHA256 of 16 KiB records "+
			"(Go benchmarks) …")
		rep.Floor = measureFloor(nil)
	}
	var runErr error
	for _, d := range o.duts {
		if ctx.Err() != nil {
			break
		}
		if runErr = benchDUT(ctx, o, d, tmp, certs, rep, stderr); runErr != nil {
			break
		}
	}
	if rep.Floor != nil && runErr == nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "crypto floor: timing again …")
		measureFloor(rep.Floor)
	}
	rep.Ended = time.Now()
	rep.Complete = runErr == nil && ctx.Err() == nil
	rep.summarize()
	printTable(stdout, rep)
	printThroughputTable(stdout, rep)
	if rep.Floor != nil {
		printFloor(stdout, rep.Floor)
	}
	if err := rep.write(o.out); err != nil {
		return fmt.Errorf("writing --out %s: %w", o.out, err)
	}
	fmt.Fprintf(stdout, "\nraw samples and medians: %s\n", o.out)
	if runErr != nil {
		return runErr
	}
	if ctx.Err() != nil {
		return errors.New("interrupted; the samples so far are written")
	}
	return nil
}

// tools are the generators compared on an engine over an HTTP version,
// tlsbench first; tls-perf last when there is one.
func (o *options) tools(engine, http string) []string {
	if http == "2" {
		return []string{"tlsbench", "h2load"}
	}
	if engine == "throughput" {
		return []string{"tlsbench", "wrk"}
	}
	if o.tlsPerf != "" {
		return []string{"tlsbench", "ab", "tls-perf"}
	}
	return []string{"tlsbench", "ab"}
}

// benchDUT starts one DUT, runs the interleaved repetitions of each engine on
// each profile and stops it.
func benchDUT(
	ctx context.Context,
	o *options,
	name, tmp string,
	certs *certFiles,
	rep *report,
	stderr io.Writer,
) error {
	var d *dut
	var err error
	if name == "target" && !slices.Contains(o.protos, "1.1") {
		return nil // the target has no cell over HTTP/2
	}
	switch name {
	case "nginx":
		d, err = startNginx(ctx, o, tmp, certs)
	case "target":
		d, err = startTarget(ctx, o, tmp)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintf(stderr, "%s: pid %d, CPU 0; %s\n", d.name, d.Pid(), d.describe())
	for _, c := range o.cells(d) {
		engine, http, p := c.engine, c.http, c.profile
		addr := d.addrs[p.Name]
		switch {
		case http == "2":
			addr = d.h2Addrs[p.Name]
		case engine == "throughput":
			addr = d.tpAddrs[p.Name]
			d.probe(ctx, o, p, addr)
		}
		for r := 1; r <= o.reps; r++ {
			for _, tool := range o.tools(engine, http) {
				if ctx.Err() != nil {
					return nil
				}
				if err := d.Alive(); err != nil {
					return err
				}
				s := measure(ctx, o, d, c, tool, addr, r, rep.Samples)
				if ctx.Err() != nil {
					return nil // an interrupted run is no sample
				}
				// A DUT that died (or was stopped from outside) during
				// the run leaves a sample of refused connections.
				dead := d.Alive()
				if dead != nil && s.Error == "" {
					s.Error = "the DUT exited during the run"
				}
				rep.Samples = append(rep.Samples, s)
				fmt.Fprintln(stderr, s.line())
				if dead != nil {
					return dead
				}
				time.Sleep(300 * time.Millisecond) // let the DUT finish closing
			}
		}
	}
	return nil
}
