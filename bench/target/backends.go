package target

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// A pool of plain-HTTP backends: the server side of a bed where the client
// speaks TLS to a device that terminates it and forwards plain HTTP to
// servers (RFC 9411 §4.3.2's server pool). Every backend serves the
// reference target's objects (/1k, /1m, /bytes/N) in plain HTTP/1.1, keeps
// connections alive as the TLS target does (HTTP/1.0 and Connection: close
// are closed after their response), and counts every request exactly, in
// total and by Unix second; the pool's admin listener serves the counts.

// DefaultHistory is how many seconds of counts by time a backend keeps,
// within historyBudget slots (16 bytes each) for the whole pool: a pool of
// more than 111 backends keeps less by default (at least a minute).
const (
	DefaultHistory = 3600
	historyBudget  = 4 << 20
)

// TotalName is the name of the pool's total in /stats (a device-counter
// source of kind target reads it as its listener).
const TotalName = "total"

// BackendsConfig configures a pool of backends.
type BackendsConfig struct {
	Count int    // backends, at least 1
	Host  string // address to listen on; default 127.0.0.1
	// Port is the first backend's port, the others take the next ones;
	// 0: any free port each.
	Port int
	// Admin, if set, is the address of the pool's admin listener: /stats
	// (JSON, the reference target's shape), /seconds and /metrics.
	Admin string
	// History is how many seconds of counts by time each backend keeps
	// (in slots of Resolution); 0: DefaultHistory within the pool's
	// budget.
	History int
}

// Backends is a running pool. Close stops it.
type Backends struct {
	Backends  []*Backend
	AdminAddr string
	// History is how many seconds of counts by time each backend keeps.
	History int
	t       *Target
}

// Backend is one backend of a pool: its listener's counters and its
// requests by tenth of a second (so that seconds not aligned on the Unix
// second, a run's, can be summed: Between).
type Backend struct {
	*Listener
	name string
	mu   sync.Mutex
	ring []slot // by Unix tenth of a second modulo its length
}

// slot is one tenth of a second's requests in a backend's ring.
type slot struct {
	tenth int64 // Unix time in tenths of a second
	n     int64
}

// Resolution is the width of a backend's time slots: Between's ends are
// rounded to it.
const Resolution = 100 * time.Millisecond

// Name is the backend's name in the pool's counters: backend-1, backend-2…
func (b *Backend) Name() string { return b.name }

// Requests is how many requests for an object the backend answered
// (requests for /stats are not counted).
func (b *Backend) Requests() int64 { return b.requests.Load() }

// count counts one request at now.
func (b *Backend) count(now time.Time) {
	s := now.UnixMilli() / Resolution.Milliseconds()
	b.mu.Lock()
	i := int(s % int64(len(b.ring)))
	if b.ring[i].tenth != s {
		b.ring[i] = slot{tenth: s}
	}
	b.ring[i].n++
	b.requests.Add(1)
	b.mu.Unlock()
}

// between returns the requests of the slots from first to last, excluded;
// slots older than the history count 0.
func (b *Backend) between(first, last int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	first = max(first, last-int64(len(b.ring)), 0)
	var n int64
	for s := first; s < last; s++ {
		if r := b.ring[int(s%int64(len(b.ring)))]; r.tenth == s {
			n += r.n
		}
	}
	return n
}

// Between returns the requests the backend counted from from to to (to
// excluded), both rounded to the nearest multiple of Resolution: a
// request up to Resolution/2 from an end may fall on either side. 0 for
// the time older than the history.
func (b *Backend) Between(from, to time.Time) int64 {
	return b.between(slotOf(from), slotOf(to))
}

// slotOf is the slot nearest t's start.
func slotOf(t time.Time) int64 {
	res := Resolution.Milliseconds()
	return (t.UnixMilli() + res/2) / res
}

// ErrBackends is the error of a pool that cannot be started as configured.
var ErrBackends = errors.New("backends")

// StartBackends starts cfg.Count plain-HTTP backends on consecutive ports
// and, if configured, the pool's admin listener.
func StartBackends(cfg BackendsConfig) (*Backends, error) {
	switch {
	case cfg.Count < 1:
		return nil, fmt.Errorf("%w: %d backends, want at least 1", ErrBackends, cfg.Count)
	case cfg.Port < 0 || cfg.Port > 65535:
		return nil, fmt.Errorf("%w: port %d is not 0-65535", ErrBackends, cfg.Port)
	case cfg.Port > 0 && cfg.Port+cfg.Count-1 > 65535:
		return nil, fmt.Errorf("%w: %d backends from port %d would end at %d, past 65535", ErrBackends,
			cfg.Count, cfg.Port, cfg.Port+cfg.Count-1)
	case cfg.History < 0:
		return nil, fmt.Errorf("%w: history %d s is negative", ErrBackends, cfg.History)
	}
	cfg.Host = cmp.Or(cfg.Host, "127.0.0.1")
	if cfg.History == 0 {
		// Within the pool's budget: the whole hour up to 111 backends.
		cfg.History = max(min(DefaultHistory, historyBudget/(cfg.Count*int(time.Second/Resolution))), 60)
	}
	t := newTarget(Config{Host: cfg.Host, Plain: true})
	p := &Backends{t: t, History: cfg.History}
	for i := range cfg.Count {
		ln, err := listenNth(cfg.Host, cfg.Port, i)
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("%w: backend %d: %w", ErrBackends, i+1, err)
		}
		b := &Backend{Listener: &Listener{Addr: ln.Addr().String()}, name: "backend-" + strconv.Itoa(i+1),
			ring: make([]slot, cfg.History*int(time.Second/Resolution))}
		p.Backends = append(p.Backends, b)
		t.Listeners = append(t.Listeners, b.Listener)
		t.serve(&countingListener{Listener: ln, n: &b.connections}, p.handler(b), nil)
	}
	if cfg.Admin != "" {
		ln, err := net.Listen("tcp", cfg.Admin)
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("%w: admin listener: %w", ErrBackends, err)
		}
		p.AdminAddr = ln.Addr().String()
		t.serveAdminWith(ln, p.adminHandler)
	}
	return p, nil
}

// handler serves b's objects, counting each request; /stats is b's own
// counters, not counted.
func (p *Backends) handler(b *Backend) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := ctx.Path()
		if string(path) == "/stats" {
			writeJSON(ctx, p.stats(b))
			return
		}
		b.count(time.Now())
		p.t.bodies.serve(h1Reply{ctx}, path)
	}
}

// Close stops the backends and the admin listener, closing their
// connections.
func (p *Backends) Close() error { return p.t.Close() }

// Addrs returns the backends' addresses, in order.
func (p *Backends) Addrs() []string {
	out := make([]string, len(p.Backends))
	for i, b := range p.Backends {
		out[i] = b.Addr
	}
	return out
}

// Between returns every backend's requests from from to to (Backend.Between)
// and their total.
func (p *Backends) Between(from, to time.Time) (each []int64, total int64) {
	each = make([]int64, len(p.Backends))
	for i, b := range p.Backends {
		each[i] = b.Between(from, to)
		total += each[i]
	}
	return each, total
}

// Requests returns every backend's requests, in order, and their total.
func (p *Backends) Requests() (each []int64, total int64) {
	each = make([]int64, len(p.Backends))
	for i, b := range p.Backends {
		each[i] = b.Requests()
		total += each[i]
	}
	return each, total
}

// stats is b's counters in the reference target's shape (no TLS: no
// handshakes).
func (p *Backends) stats(b *Backend) Stats {
	s := b.Listener.Stats()
	s.Profile = b.name
	return s
}

// Stats returns every backend's counters, then their total (named
// TotalName, without an address).
func (p *Backends) Stats() []Stats {
	out := make([]Stats, 0, len(p.Backends)+1)
	total := Stats{Profile: TotalName, Injected: map[string]int64{}, ByProtocol: map[string]int64{}}
	for _, b := range p.Backends {
		s := p.stats(b)
		out = append(out, s)
		total.Connections += s.Connections
		total.Requests += s.Requests
		for k, n := range s.ByProtocol {
			total.ByProtocol[k] += n
		}
	}
	return append(out, total)
}

// BackendSecond is one Unix second's requests at each backend of a pool
// (in the pool's order) and their total.
type BackendSecond struct {
	Unix     int64   `json:"unix"`
	Requests []int64 `json:"requests"`
	Total    int64   `json:"total"`
}

// maxSeconds bounds one Seconds call (the admin page's range too).
const maxSeconds = 24 * 3600

// Seconds returns the requests of every Unix second from first to last
// (both included; at most a day), seconds older than the history as 0.
func (p *Backends) Seconds(first, last int64) []BackendSecond {
	if last < first {
		return nil
	}
	first = max(first, last-maxSeconds+1)
	out := make([]BackendSecond, 0, last-first+1)
	for s := first; s <= last; s++ {
		bs := BackendSecond{Unix: s, Requests: make([]int64, len(p.Backends))}
		for i, b := range p.Backends {
			bs.Requests[i] = b.Between(time.Unix(s, 0), time.Unix(s+1, 0))
			bs.Total += bs.Requests[i]
		}
		out = append(out, bs)
	}
	return out
}
