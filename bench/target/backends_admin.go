package target

import (
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// The pool's admin listener (BackendsConfig.Admin), bounded as the
// reference target's (admin.go):
//
//	/stats    {"listeners":[…]}: each backend's counters in the reference
//	          target's shape (profile: its name), then the total (TotalName)
//	/seconds  {"backends":[names],"seconds":[BackendSecond…]}: requests by
//	          Unix second, ?from=UNIX&to=UNIX (default: the last 60 s;
//	          at most a day)
//	/metrics  the counters as a Prometheus text exposition
//	          (tlsbench_backend_requests_total{backend="backend-1"}, …)

// defaultSecondsRange is how many seconds /seconds gives without a range.
const defaultSecondsRange = 60

func (p *Backends) adminHandler(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/stats":
		writeJSON(ctx, struct {
			Listeners []Stats `json:"listeners"`
		}{p.Stats()})
	case "/seconds":
		p.serveSeconds(ctx)
	case "/metrics":
		p.serveMetrics(ctx)
	default:
		ctx.Error("not found; /stats, /seconds, /metrics", fasthttp.StatusNotFound)
	}
}

// serveSeconds answers /seconds.
func (p *Backends) serveSeconds(ctx *fasthttp.RequestCtx) {
	now := time.Now().Unix()
	from, to := now-defaultSecondsRange+1, now
	args := ctx.QueryArgs()
	for _, a := range []struct {
		name string
		v    *int64
	}{{"from", &from}, {"to", &to}} {
		if s := args.Peek(a.name); s != nil {
			n, err := strconv.ParseInt(string(s), 10, 64)
			if err != nil || n < 0 {
				ctx.Error(fmt.Sprintf("bad %s %q: want a Unix second", a.name, s), fasthttp.StatusBadRequest)
				return
			}
			*a.v = n
		}
	}
	if to < from || to-from >= maxSeconds {
		ctx.Error(fmt.Sprintf("bad range %d to %d: want from ≤ to, at most %d s", from, to, maxSeconds),
			fasthttp.StatusBadRequest)
		return
	}
	names := make([]string, len(p.Backends))
	for i, b := range p.Backends {
		names[i] = b.name
	}
	writeJSON(ctx, struct {
		Backends []string        `json:"backends"`
		Seconds  []BackendSecond `json:"seconds"`
	}{names, p.Seconds(from, to)})
}

// serveMetrics answers /metrics: each backend's requests and connections.
func (p *Backends) serveMetrics(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain; version=0.0.4")
	w := ctx.Response.BodyWriter()
	fmt.Fprintln(w, "# HELP tlsbench_backend_requests_total Requests for an object a backend answered.")
	fmt.Fprintln(w, "# TYPE tlsbench_backend_requests_total counter")
	for _, b := range p.Backends {
		fmt.Fprintf(w, "tlsbench_backend_requests_total{backend=%q,addr=%q} %d\n", b.name, b.Addr, b.Requests())
	}
	fmt.Fprintln(w, "# HELP tlsbench_backend_connections_total TCP connections a backend accepted.")
	fmt.Fprintln(w, "# TYPE tlsbench_backend_connections_total counter")
	for _, b := range p.Backends {
		fmt.Fprintf(w, "tlsbench_backend_connections_total{backend=%q,addr=%q} %d\n", b.name, b.Addr,
			b.connections.Load())
	}
}
