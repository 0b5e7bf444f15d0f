package testdut

// A TLS-terminating device in front of a pool of plain backends
// (bench/target.StartBackends): HAProxy balancing round robin, nginx
// proxying to an upstream over kept-alive connections. docs/BACKENDS.md
// quotes these configurations.

import (
	"fmt"
	"strings"
)

// writePool writes the section of a frontend balancing over fe.Backends:
// round robin, each request on a server connection of its own (HAProxy
// closes the server side after each response: http-server-close), every
// request logged as a forwarding frontend's (requestLog).
func writePool(cfg *strings.Builder, fe Frontend, bind string) {
	writeLogged(cfg, fe.Name, bind, "pool")
	cfg.WriteString("    balance roundrobin\n    option http-server-close\n")
	for i, addr := range fe.Backends {
		fmt.Fprintf(cfg, "    server b%d %s\n", i+1, addr)
	}
}

// NginxUpstream returns the http block's directives of an upstream named
// name over addrs: round robin (nginx's default), keeping up to keepalive
// idle connections to the servers per worker (0: a connection a request).
// With more than one worker each balances on its own.
func NginxUpstream(name string, addrs []string, keepalive int) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "upstream %s {", name)
	for _, a := range addrs {
		fmt.Fprintf(&b, " server %s;", a)
	}
	if keepalive > 0 {
		fmt.Fprintf(&b, " keepalive %d;", keepalive)
	}
	b.WriteString(" }")
	return []string{b.String()}
}

// NginxProxy returns a server's directives that proxy every request to the
// upstream name over HTTP/1.1, the Connection header cleared so that the
// upstream's connections stay open (NginxUpstream's keepalive).
func NginxProxy(name string) []string {
	return []string{fmt.Sprintf(`location / { proxy_pass http://%s; proxy_http_version 1.1; `+
		`proxy_set_header Connection ""; }`, name)}
}
