package main

// duts: the two local DUTs of issue 17's closing note — nginx and HAProxy
// on loopback, each serving the three seed profiles — and a two-DUT plan
// for `tlsbench qualify --plan`, kept up until interrupted.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

const dutsUsage = `Usage: peerbench duts --out DIR [--order interleaved|sequential]

Starts nginx and HAProxy on 127.0.0.1, each with one TLS 1.2 listener per
seed profile (HAProxy forwarding to a plain-HTTP reference target in this
process), writes DIR/plan.yaml — both DUTs, CPS and throughput for the three
seed profiles, tolerance 10%, short durations (one campaign takes a few
minutes on 2 cores) — and stays up until interrupted (Ctrl-C). Run it with:
  tlsbench qualify --plan DIR/plan.yaml --out DIR/campaign1
`

// runDuts is the duts subcommand.
func runDuts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("peerbench duts", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "`DIR` for the plan, certificates and the DUTs' files")
	order := fs.String("order", "", "final.order of the plan: interleaved (the method's default) or sequential")
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprint(stdout, dutsUsage)
			return err
		}
		return usagef("duts: %v", err)
	}
	switch {
	case *out == "":
		return usagef("duts: --out DIR is required")
	case fs.NArg() > 0:
		return usagef("duts: unexpected arguments %q", fs.Args())
	case *order != "" && *order != "interleaved" && *order != "sequential":
		return usagef("duts: bad --order %q: want interleaved or sequential", *order)
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		return usagef("duts: --out: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("duts: --out: %v", err)
	}
	certs, err := writeCerts(dir, seedProfiles)
	if err != nil {
		return err
	}
	// nginx: one keep-alive server per profile (the CPS engine closes each
	// connection itself), two workers.
	ncfg := testdut.NginxConfig{Dir: filepath.Join(dir, "nginx"), Workers: 2}
	for _, p := range seedProfiles {
		ncfg.Servers = append(ncfg.Servers, testdut.NginxServer{
			Cert:      certs.Cert[p.CertKey],
			Ciphers:   p.Ciphers,
			Curve:     p.Curve,
			KeepAlive: true,
		})
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, err := testdut.StartNginx(startCtx, "/usr/sbin/nginx", ncfg)
	if err != nil {
		return fmt.Errorf("nginx: %w", err)
	}
	defer n.Close()
	// HAProxy: one frontend per profile, forwarding to a plain-HTTP
	// reference target (the study's "client TLS, server plaintext").
	backend, err := target.Start(target.Config{Plain: true})
	if err != nil {
		return err
	}
	defer backend.Close()
	var fes []testdut.Frontend
	for _, p := range seedProfiles {
		fes = append(fes, testdut.Frontend{Name: frontendName(p.Name), Cert: certs.Cert[p.CertKey], Ciphers: p.Ciphers,
			Curves: p.Curve, Backend: backend.Listeners[0].Addr})
	}
	hdir := filepath.Join(dir, "haproxy")
	if err := os.MkdirAll(hdir, 0o755); err != nil {
		return err
	}
	h, err := testdut.LaunchHAProxy(hdir, fes)
	if err != nil {
		return fmt.Errorf("HAProxy: %w", err)
	}
	defer h.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by peerbench duts: nginx and HAProxy on loopback (issue 17's closing note).\nname: "+
		"nginx-vs-haproxy\nduts:\n")
	dut := func(name string, addr func(i int) string, procs string) {
		fmt.Fprintf(&b, "  - name: %s\n    url: https://localhost:%s/\n    cacert: %s\n    processes: [%s]\n    endpoints:\n",
			name, port(addr(0)), certs.CA, procs)
		for i, p := range seedProfiles {
			fmt.Fprintf(&b, "      %s: https://localhost:%s/\n", p.Name, port(addr(i)))
		}
	}
	// nginx by its pid file: its master and workers, not another nginx
	// that may run on this machine.
	dut("nginx", func(i int) string { return n.Addrs[i] }, filepath.Join(ncfg.Dir, "nginx.pid"))
	// HAProxy's backend is this process: its CPU is the DUT's too.
	self := "haproxy"
	if comm, err := os.ReadFile("/proc/self/comm"); err == nil && len(strings.TrimSpace(string(comm))) > 0 {
		self += ", " + strings.TrimSpace(string(comm))
	}
	dut("haproxy", func(i int) string { return h.Addr(frontendName(seedProfiles[i].Name)) }, self)
	fmt.Fprintf(&b, `tests:
  - {engine: cps, path: /1k, profiles: [%[1]s]}
  - {engine: throughput, path: /1m, profiles: [%[1]s]}
method:
  duration: 2s
  warmup: 300ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 16}, probe_duration: 700ms, min_gain: 5%%}
  accept: {max_generator_cpu: 100%%}
  final: {min_accepted: 3, max_runs: 5, tolerance: 10%%`, strings.Join(profileNames(seedProfiles), ", "))
	if *order != "" {
		fmt.Fprintf(&b, ", order: %s", *order)
	}
	b.WriteString("}\n")
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "peerbench duts: nginx (pid %d) %s; HAProxy %s; plan %s; Ctrl-C stops them\n",
		n.Pid(), strings.Join(n.Addrs, " "), strings.Join(haAddrs(h), " "), planFile)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
		if err := n.Alive(); err != nil {
			return fmt.Errorf("nginx: %w", err)
		}
	}
}

func frontendName(profile string) string {
	switch {
	case strings.HasSuffix(profile, "p384"):
		return "p384"
	case strings.HasSuffix(profile, "p256"):
		return "p256"
	}
	return "rsa2048"
}

func haAddrs(h *testdut.HAProxy) []string {
	var out []string
	for _, p := range seedProfiles {
		out = append(out, h.Addr(frontendName(p.Name)))
	}
	return out
}

func port(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }
