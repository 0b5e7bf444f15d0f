package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/target"
)

const serveUsage = `tlsbench serve [flags]

Runs the reference TLS target: one listener per profile on consecutive ports,
each configured exactly as its profile (certificates generated in memory,
session cache and tickets off unless --resumption). Each listener serves
HTTP/2 and HTTP/1.1, chosen by ALPN (h2, then http/1.1; a client that
offers no ALPN gets HTTP/1.1); a TLS 1.3 profile's listener serves HTTP/3
(QUIC, ALPN h3) on UDP at the same port too (--http3=false: not). Objects: /1k, /1m, /bytes/N[k|m|g]; /stats
returns the listener's counters, requests by protocol among them. Once listening it prints a table of the
listeners, then one JSON line {"ready":true,"listeners":[{"profile":..,
"addr":..}],"ca":..} for programs. Stops on SIGINT or SIGTERM and prints
the counters.

Faults (--fault KIND:FRACTION, repeatable) take disjoint shares of each
listener's connections: a connection gets at most one fault, each kind is
given once, and the fractions add up to at most 1 (the rest get none). The
shares are exact at every point of the run, not drawn at random: after N
connections each fault has gone to N×FRACTION of them, rounded down or up.
With --fault alert:0.5 --fault status-503:0.25, of every 4 connections 2
get the alert, 1 a 503 and 1 none.

--plain --backends N serves a pool of N plain-HTTP backends on consecutive
ports from --port (the server side of "client TLS, server plain", behind a
device that terminates TLS; docs/BACKENDS.md), each counting its requests
exactly and by second; --admin serves the counts (/stats, /seconds,
/metrics). --plain and --backends serve HTTP/1.x only.`

// serveCmd is a parsed serve command line: the target's configuration,
// and the files it reads (--cert, --key) and writes (--ca-out) when run.
type serveCmd struct {
	cfg               target.Config
	certFile, keyFile string
	caOut             string
	live              liveFlags // --metrics-listen (liveflags.go)
	mtls              serveMTLS // --client-auth, --client-ca… (serve_mtls.go)
	backends          int       // --backends: a pool of plain backends (serve_backends.go)
}

// parseResumption reads --resumption and --ticket-rotation.
func parseResumption(modes []string, rotation time.Duration) (target.Resumption, error) {
	r, err := target.ParseResumption(modes)
	switch {
	case err != nil:
		return r, usagef("--%s", err)
	case rotation < 0:
		return r, usagef("bad --ticket-rotation %s: negative", rotation)
	case rotation > 0 && !r.Tickets && !r.PSK:
		return r, usagef("--ticket-rotation needs --resumption")
	}
	r.KeyRotation = rotation
	return r, nil
}

// checkServeResumption refuses a --resumption mode no listener of cfg's
// profiles would use (psk without a TLS 1.3 listener, tickets without a TLS
// 1.2 one), as the engines refuse one their profile cannot do.
func checkServeResumption(cfg *target.Config) error {
	has := map[bool]bool{} // has[TLS 1.3]
	for _, p := range cfg.Profiles {
		has[p.ExpectedVersion() == tls.VersionTLS13] = true
	}
	switch {
	case cfg.Plain && (cfg.Resumption.PSK || cfg.Resumption.Tickets):
		return usagef("--plain serves no TLS: it takes no --resumption")
	case cfg.Resumption.PSK && !has[true]:
		return usagef("--resumption psk resumes TLS 1.3 sessions, and no listener's profile negotiates TLS 1.3")
	case cfg.Resumption.Tickets && !has[false]:
		return usagef("--resumption tickets resumes TLS 1.2 sessions, and no listener's profile negotiates TLS 1.2")
	}
	return nil
}

// parseServe parses and checks a serve command line.
func parseServe(args []string, stdout io.Writer) (*serveCmd, error) {
	c := &serveCmd{}
	cfg := &c.cfg
	fs := newFlags("serve")
	fs.StringVar(&cfg.Host, "listen", "127.0.0.1", "`ADDRESS` to listen on")
	fs.IntVar(&cfg.Port, "port", 8443, "first `PORT`; the listeners take consecutive ports (0: any free ports)")
	names := fs.StringArray("profile", nil, "serve this profile `NAME` (repeatable; default: every built-in)")
	files := fs.StringArray("profile-file", nil, "add the profiles of a YAML `FILE` (repeatable)")
	fs.StringVar(&c.certFile, "cert", "", "serve this certificate chain `FILE` (PEM) instead of generated ones")
	fs.StringVar(&c.keyFile, "key", "", "private key `FILE` (PEM) of --cert")
	fs.StringVar(&cfg.Admin, "admin", "", "plain-HTTP `ADDRESS` for /stats of all listeners (never counted)")
	fs.StringArrayVar(&cfg.Hostnames, "hostname", nil, "add a `NAME` to the generated certificates (repeatable)")
	fs.StringVar(&c.caOut, "ca-out", "", "write the generated CA certificate (PEM) to `FILE`, for --cacert (-: stdout)")
	fs.BoolVar(&cfg.Plain, "plain", false, "serve plain HTTP on --port instead (a backend behind a TLS terminator)")
	fs.IntVar(&c.backends, "backends", 0, "with --plain, serve a pool of `N` backends on consecutive ports from "+
		"--port, counted each and by second (--admin: /stats, /seconds, /metrics)")
	fs.DurationVar(&cfg.Delay, "delay", 0, "add `DURATION` before the first byte of every object's response")
	delayRamp := fs.String("delay-ramp", "", "slow down steadily: add `RATE` more delay every second, e.g. 2ms/s "+
		"(tests a method against drift)")
	fs.DurationVar(&cfg.DelayJitter, "delay-jitter", 0, "add a random delay in [0, `DURATION`) to every response "+
		"(connections of a slow target then do not stay in step)")
	faultSpecs := fs.StringArray("fault", nil, "inject `KIND[:FRACTION]` into that fraction of connections "+
		"(repeatable; kinds: "+strings.Join(target.FaultKinds, ", ")+")")
	fs.DurationVar(&cfg.SlowDelay, "slow-delay", 15*time.Second, "the slow fault's delay before the first byte")
	resumption := fs.StringSlice("resumption", nil, "resume sessions: `tickets` (TLS 1.2 listeners), psk (TLS 1.3) "+
		"or tickets,psk; /stats counts the resumed handshakes apart")
	fs.DurationVar(&cfg.Resumption.KeyRotation, "ticket-rotation", 0, "with --resumption, take a new ticket key "+
		"every `DURATION`, keeping the previous one (0: crypto/tls's own, daily)")
	namesN := fs.Int("names", 0, "serve `N` server names, each its own certificate, chosen by SNI (unknown names: "+
		"the default certificate)")
	namesPattern := fs.String("names-pattern", target.DefaultNamePattern, "the names of --names: `PATTERN` with one %d, "+
		"numbered from 1")
	http3 := fs.Bool("http3", true, "serve HTTP/3 over QUIC on UDP at the port of each TLS 1.3 profile's listener")
	c.live.add(fs)
	c.mtls.add(fs)
	if err := parseFlags(fs, serveUsage, args, stdout); err != nil {
		return nil, err
	}
	cfg.NoHTTP3 = !*http3
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	var err error
	if cfg.Resumption, err = parseResumption(*resumption, cfg.Resumption.KeyRotation); err != nil {
		return nil, err
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, usagef("bad --port %d: not 0-65535", cfg.Port)
	}
	if net.ParseIP(cfg.Host) == nil && cfg.Host != "localhost" {
		return nil, usagef("bad --listen %q: not an IP address", cfg.Host)
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return nil, usagef("--cert and --key go together")
	}
	set, err := loadProfiles(*files)
	if err != nil {
		return nil, err
	}
	if len(*names) == 0 {
		cfg.Profiles = set.All()
	}
	for _, n := range *names {
		p, err := set.Get(n)
		if err != nil {
			return nil, usagef("%s", err)
		}
		cfg.Profiles = append(cfg.Profiles, p)
	}
	if err := checkServeResumption(cfg); err != nil {
		return nil, err
	}
	if cfg.Plain && (len(*names) > 0 || c.certFile != "") {
		return nil, usagef("--plain serves no TLS: it takes no --profile, --cert or --key")
	}
	n := max(len(cfg.Profiles), 1) // listeners
	if cfg.Plain {
		n = 1
	}
	if err := checkBackends(fs, cfg, c.backends); err != nil {
		return nil, err
	}
	n = max(n, c.backends)
	if cfg.Port > 0 && cfg.Port+n-1 > 65535 {
		return nil, usagef("bad --port %d: %d listeners on consecutive ports would end at %d, past 65535 (lower --port, "+
			"or 0 for any free ports)", cfg.Port, n, cfg.Port+n-1)
	}
	if cfg.Admin != "" {
		if err := checkAdmin(cfg.Admin); err != nil {
			return nil, err
		}
	}
	if cfg.Delay < 0 {
		return nil, usagef("bad --delay %s: must not be negative", cfg.Delay)
	}
	if cfg.DelayRamp, err = parseRamp(*delayRamp); err != nil {
		return nil, err
	}
	for _, f := range *faultSpecs {
		ft, err := target.ParseFault(f)
		if err != nil {
			return nil, usagef("bad --fault: %v", err)
		}
		cfg.Faults = append(cfg.Faults, ft)
	}
	if err := target.CheckFaults(cfg.Faults); err != nil {
		return nil, usagef("bad --fault: %v", err)
	}
	if cfg.SlowDelay <= 0 {
		return nil, usagef("bad --slow-delay %s: must be positive", cfg.SlowDelay)
	}
	if cfg.Names, err = serveNames(fs, c, *namesN, *namesPattern); err != nil {
		return nil, err
	}
	if err := checkOutputs([2]string{"--ca-out", c.caOut}); err != nil {
		return nil, err
	}
	if err := c.live.check(); err != nil {
		return nil, err
	}
	if err := c.mtls.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkAdmin checks --admin's HOST:PORT.
func checkAdmin(admin string) error {
	host, p, err := net.SplitHostPort(admin)
	if err != nil {
		return usagef("bad --admin %q: want HOST:PORT (%v)", admin, pathErr(err))
	}
	if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
		return usagef("bad --admin %q: port %q is not 0-65535", admin, p)
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		return usagef("bad --admin %q: %q is not an IP address", admin, host)
	}
	return nil
}

// run serves until ctx ends: the listeners' table, then the ready line
// (target.Ready, for programs that start serve), then at the end the
// counters.
func (c *serveCmd) run(ctx context.Context, stdout, stderr io.Writer) error {
	if c.backends > 0 {
		return c.runBackends(ctx, stdout, stderr)
	}
	cfg := c.cfg
	if c.certFile != "" {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return usagef("--cert/--key: %v", err)
		}
		cfg.Cert = &cert
	}
	if err := c.mtls.configure(&cfg); err != nil {
		return err
	}
	t, err := target.Start(cfg)
	if errors.Is(err, target.ErrHTTP3Listen) {
		return fmt.Errorf("%w (--http3=false serves without it)", err)
	}
	if err != nil {
		return err
	}
	defer t.Close()
	live, err := c.live.open(ctx, stdout, stderr)
	defer live.close()
	if err != nil {
		return err
	}
	live.serveTarget(t)
	if err := c.mtls.write(ctx, &cfg, stdout, stderr); err != nil {
		return err
	}
	if c.caOut != "" && t.CA != nil {
		if err := outfile.WriteOut(ctx, c.caOut, t.CA.CertPEM(), 0o644, stdout, stderr); err != nil {
			return fmt.Errorf("writing --ca-out: %w", err)
		}
	}
	if err := c.printListeners(stdout, t); err != nil {
		return err
	}
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	<-ctx.Done()
	t.Close()
	fmt.Fprintln(stderr, "stopped")
	return printServeStats(stdout, t.Stats())
}

// printListeners prints the listeners' table for people, then the ready
// line for programs: one JSON object (target.Ready).
func (c *serveCmd) printListeners(stdout io.Writer, t *target.Target) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tADDRESS\tSUITE\tGROUP\tCERT")
	for _, l := range t.Listeners {
		if p := l.Profile; p != nil {
			addr := l.Addr + map[bool]string{true: " +udp (h3)"}[l.QUICAddr != ""]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, addr, p.SuiteLabel(), p.GroupLabel(), p.ServerCertKey())
		} else {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\n", l.Name(), l.Addr)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := c.cfg.Names; len(n) > 0 {
		fmt.Fprintf(stdout, "server names: %d, %s to %s, a certificate each, chosen by SNI\n", len(n), n[0], n[len(n)-1])
	}
	if t.AdminAddr != "" {
		fmt.Fprintf(stdout, "admin: http://%s/stats\n", t.AdminAddr)
	}
	if c.caOut != "" && t.CA != nil {
		fmt.Fprintf(stdout, "CA certificate: %s (use --cacert)\n", c.caOut)
	}
	fmt.Fprintln(stdout, "serving; SIGINT or SIGTERM stops")
	ca := c.caOut
	if ca == stdoutName {
		ca = "" // the ready line names a file
	}
	return target.WriteReady(stdout, t, ca)
}

// printServeStats prints the listeners' counters, and the faults injected.
func printServeStats(stdout io.Writer, stats []target.Stats) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tHANDSHAKES\tRESUMED\tREQUESTS\tHTTP/2\tHTTP/3\tHANDSHAKE ERRORS\tINJECTED")
	for _, s := range stats {
		var inj []string
		for _, k := range target.FaultKinds {
			if n := s.Injected[k]; n > 0 {
				inj = append(inj, fmt.Sprintf("%s ×%d", k, n))
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Profile, s.Handshakes, s.Resumed, s.Requests,
			s.ByProtocol["http/2"], s.ByProtocol["http/3"], s.HandshakeErrors, strings.Join(inj, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range stats {
		if n := s.Names; n != nil {
			fmt.Fprintf(stdout, "%s: %d server names chosen %d to %d times each; %d hellos named another\n", s.Profile,
				n.Count, n.HandshakesMin, n.HandshakesMax, n.Unknown)
		}
	}
	return nil
}

// parseRamp reads --delay-ramp: a duration per second ("2ms/s"; "2ms" is
// the same), positive and at most maxDelayRamp; "" is no ramp.
func parseRamp(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil || d <= 0 {
		return 0, usagef("bad --delay-ramp %q: want a positive delay per second, e.g. 2ms/s", s)
	}
	if d > maxDelayRamp {
		return 0, usagef("bad --delay-ramp %q: at most %s/s (the delay would pass any read timeout within seconds)",
			s, maxDelayRamp)
	}
	return d, nil
}

// maxDelayRamp bounds --delay-ramp: past it the delay outgrows any read
// timeout within seconds, and a huge ramp would overflow the delay (a
// negative duration: a fast target instead of a slow one).
const maxDelayRamp = time.Second
