package plan

import (
	"fmt"
	"net"
	"strconv"
)

// Backends is a pool of plain-HTTP backends that tlsbench starts for the
// campaign and counts (bench/target.StartBackends): the server side of a
// bed where the DUT terminates TLS and forwards plain HTTP (RFC 9411
// §4.3.2's server pool, "client TLS, server plain"). The DUT is configured
// to forward to the backends' addresses; every run's record then has the
// backends' requests beside tlsbench's transactions as its device
// counters, which is why a plan with backends names no DUT counters.
type Backends struct {
	// Count is the number of backends, on consecutive ports.
	Count int `yaml:"count" json:"count"`
	// Listen is the first backend's HOST:PORT (the others take the next
	// ports); default 127.0.0.1:0, any free ports.
	Listen string `yaml:"listen,omitempty" json:"listen,omitempty"`
	// Admin is the HOST:PORT of the pool's counters (/stats, /seconds,
	// /metrics); default 127.0.0.1:0.
	Admin string `yaml:"admin,omitempty" json:"admin,omitempty"`
}

// MaxBackends bounds Backends.Count: a port each.
const MaxBackends = 65535

// Addr returns the backends' first host and port (Listen, or its default).
func (b *Backends) Addr() (host string, port int, err error) {
	if b.Listen == "" {
		return "127.0.0.1", 0, nil
	}
	h, p, err := net.SplitHostPort(b.Listen)
	if err != nil {
		return "", 0, err
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not 0-65535", p)
	}
	if net.ParseIP(h) == nil {
		return "", 0, fmt.Errorf("%q is not an IP address", h)
	}
	return h, port, nil
}

// AdminAddr returns Admin, or its default.
func (b *Backends) AdminAddr() string {
	if b.Admin == "" {
		return "127.0.0.1:0"
	}
	return b.Admin
}

// check checks the pool (none is fine) against the plan's DUTs.
func (b *Backends) check(duts []DUT) error {
	if b == nil {
		return nil
	}
	if b.Count < 1 || b.Count > MaxBackends {
		return ferr(fmt.Sprintf("backends: count %d is not 1-%d", b.Count, MaxBackends), "backends", "count")
	}
	_, port, err := b.Addr()
	if err != nil {
		return ferr(fmt.Sprintf("backends: listen %q: want IP:PORT (%v)", b.Listen, err), "backends", "listen")
	}
	if port > 0 && port+b.Count-1 > 65535 {
		return ferr(fmt.Sprintf("backends: %d backends from port %d would end at %d, past 65535", b.Count, port,
			port+b.Count-1), "backends", "listen")
	}
	if _, _, err := (&Backends{Listen: b.AdminAddr()}).Addr(); err != nil {
		return ferr(fmt.Sprintf("backends: admin %q: want IP:PORT (%v)", b.Admin, err), "backends", "admin")
	}
	for i, d := range duts {
		if d.Counters != nil {
			return ferr(fmt.Sprintf("duts: %s: counters: the backends' requests are every run's device counters "+
				"in a plan with backends; remove one of the two", d.Name), "duts", strconv.Itoa(i), "counters")
		}
	}
	return nil
}
