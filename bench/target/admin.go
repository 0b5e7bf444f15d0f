package target

import (
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// The admin listener's bounds (tlsbench serve --admin): it answers GET
// /stats, so a request is a line and a few headers. Beyond them a request
// is refused (431 for headers, 413 for a body, 405 for another method) or
// its connection closed (a sender slower than AdminReadTimeout, a
// connection idle for AdminIdleTimeout); beyond AdminMaxConns connections
// at once, more are answered 503 and closed.
const (
	AdminMaxHeaderBytes = 4 << 10
	adminMaxBodyBytes   = 4 << 10
	AdminReadTimeout    = 5 * time.Second
	adminWriteTimeout   = 5 * time.Second
	adminIdleTimeout    = 30 * time.Second
	AdminMaxConns       = 16
)

// serveAdmin serves the admin handler on ln within the admin bounds.
func (t *Target) serveAdmin(ln net.Listener) { t.serveAdminWith(ln, t.adminHandler) }

// serveAdminWith serves h on ln within the admin bounds.
func (t *Target) serveAdminWith(ln net.Listener, h fasthttp.RequestHandler) {
	srv := &fasthttp.Server{
		Handler:                      h,
		Name:                         "tlsbench",
		GetOnly:                      true,
		ReadBufferSize:               AdminMaxHeaderBytes,
		MaxRequestBodySize:           adminMaxBodyBytes,
		ReadTimeout:                  AdminReadTimeout,
		WriteTimeout:                 adminWriteTimeout,
		IdleTimeout:                  adminIdleTimeout,
		Concurrency:                  AdminMaxConns,
		ErrorHandler:                 adminError,
		Logger:                       quiet,
		CloseOnShutdown:              true,
		DisablePreParseMultipartForm: true,
	}
	t.run(srv, ln)
}

// adminError answers a request the admin listener refuses: 413 for a body
// over the bound, 405 for a method other than GET, 431 for headers over the
// bound, 408 for a timeout, 400 otherwise.
func adminError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ctx.Error("request body too large", fasthttp.StatusRequestEntityTooLarge)
	case errors.Is(err, fasthttp.ErrGetOnly):
		ctx.Error("GET /stats", fasthttp.StatusMethodNotAllowed)
	case errors.As(err, &small):
		ctx.Error("request headers too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("bad request", fasthttp.StatusBadRequest)
	}
}
