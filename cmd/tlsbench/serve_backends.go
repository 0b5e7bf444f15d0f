package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/target"
)

// maxBackends bounds --backends: a port each.
const maxBackends = 65535

// backendDescriptors is what a pool needs besides a descriptor per
// backend's listener: the admin listener, the process's own files, and
// room for connections.
const backendDescriptors = 64

// backendFlags are the serve flags --backends takes.
var backendFlags = []string{"plain", "backends", "listen", "port", "admin"}

// checkBackends checks --backends N (cfg: the parsed serve flags): with
// --plain, 1 or more, as many listeners as the descriptors allow, their
// ports within 65535 (the caller checks that), and no flag the pool does
// not take.
func checkBackends(fs *pflag.FlagSet, cfg *target.Config, n int) error {
	if !fs.Changed("backends") {
		return nil
	}
	if !cfg.Plain {
		return usagef("--backends needs --plain: the pool serves plain HTTP behind a device that terminates TLS")
	}
	if n < 1 || n > maxBackends {
		return usagef("bad --backends %d: want 1 to %d", n, maxBackends)
	}
	var other []string
	fs.Visit(func(f *pflag.Flag) {
		if !slices.Contains(backendFlags, f.Name) {
			other = append(other, "--"+f.Name)
		}
	})
	if len(other) > 0 {
		return usagef("--backends serves the objects as they are: it takes no %v", other)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && uint64(n)+backendDescriptors > lim.Cur {
		return usagef("bad --backends %d: %d listeners and their connections need more than RLIMIT_NOFILE's %d "+
			"descriptors (ulimit -n)", n, n, lim.Cur)
	}
	return nil
}

// runBackends serves the pool until ctx ends: the backends' table, the
// ready line, then at the end each backend's counts.
func (c *serveCmd) runBackends(ctx context.Context, stdout, stderr io.Writer) error {
	p, err := target.StartBackends(target.BackendsConfig{Count: c.backends, Host: c.cfg.Host, Port: c.cfg.Port,
		Admin: c.cfg.Admin})
	if err != nil {
		return err
	}
	defer p.Close()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tADDRESS")
	for _, b := range p.Backends {
		fmt.Fprintf(tw, "%s\t%s\n", b.Name(), b.Addr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p.AdminAddr != "" {
		fmt.Fprintf(stdout, "admin: http://%s/stats (and /seconds, /metrics)\n", p.AdminAddr)
	}
	fmt.Fprintln(stdout, "serving plain HTTP; SIGINT or SIGTERM stops")
	if err := writeBackendsReady(stdout, p); err != nil {
		return err
	}
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	<-ctx.Done()
	p.Close()
	fmt.Fprintln(stderr, "stopped")
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tCONNECTIONS\tREQUESTS")
	for _, s := range p.Stats() {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", s.Profile, s.Connections, s.Requests)
	}
	return tw.Flush()
}

// writeBackendsReady prints the pool's ready line, the reference target's
// (target.Ready): a listener per backend, named by the backend.
func writeBackendsReady(w io.Writer, p *target.Backends) error {
	type listener struct {
		Profile string `json:"profile"`
		Addr    string `json:"addr"`
	}
	r := struct {
		Ready     bool       `json:"ready"`
		Listeners []listener `json:"listeners"`
		Admin     string     `json:"admin,omitempty"`
	}{Ready: true, Admin: p.AdminAddr}
	for _, b := range p.Backends {
		r.Listeners = append(r.Listeners, listener{b.Name(), b.Addr})
	}
	return json.NewEncoder(w).Encode(r)
}
