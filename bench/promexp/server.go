package promexp

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/netutil"
)

// The metrics listener's bounds: a scraper sends a short GET and reads a
// few hundred kB at most.
const (
	ReadHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 16 << 10
	MaxConns          = 16
	// shutdownTimeout bounds Server.Close's wait for scrapes in progress.
	shutdownTimeout = 5 * time.Second
)

// addrError is a listen address that is not HOST:PORT or :PORT.
type addrError struct {
	Addr   string
	Reason string
}

func (e *addrError) Error() string { return fmt.Sprintf("%q: %s", e.Addr, e.Reason) }

// ListenAddr is the address Serve listens on for addr: a bare ":PORT" (or
// "PORT") binds to loopback, 127.0.0.1:PORT, so that a run exposes nothing
// beyond the machine unless a host is named ("0.0.0.0:9100" for every
// interface).
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", &addrError{addr, "empty"}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, perr := net.LookupPort("tcp", addr); perr == nil && !strings.Contains(addr, ":") {
			host, port = "", addr
		} else {
			return "", &addrError{addr, "not HOST:PORT or :PORT"}
		}
	}
	if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
		return "", &addrError{addr, "no valid port"}
	}
	host = cmp.Or(host, "127.0.0.1")
	return net.JoinHostPort(host, port), nil
}

// Server is a bounded metrics listener.
type Server struct {
	// Addr is the address it listens on (the port chosen when 0 was asked).
	Addr string
	srv  *http.Server
	done chan struct{}
}

// Serve listens on addr (see ListenAddr) and serves h at /metrics: GET and
// HEAD only, with header, read, write and idle timeouts, at most
// MaxHeaderBytes of headers and MaxConns connections at once.
func Serve(addr string, h http.Handler) (*Server, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", getOnly(h))
	mux.Handle("/", getOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "tlsbench: metrics at /metrics")
	})))
	s := &Server{Addr: ln.Addr().String(), done: make(chan struct{}), srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}}
	go func() {
		defer close(s.done)
		// If the listener fails, scrapes fail and the run goes on.
		_ = s.srv.Serve(netutil.LimitListener(ln, MaxConns))
	}()
	return s, nil
}

func getOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Close stops the server, letting scrapes in progress finish within
// ShutdownTimeout.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return err
}
