package main

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseTarget: any URL, --resolve and --sni give an endpoint or a
// one-line usage error.
func FuzzParseTarget(f *testing.F) {
	f.Add("https://www.fwtest.com:443/1k", "www.fwtest.com:443:10.0.0.5", "")
	f.Add("https://[::1]:8443/x?y=1", "h:1:[::1]", "sni.test")
	f.Add("http://a/", "::", "")
	f.Fuzz(func(t *testing.T, raw, resolve, sni string) {
		ep, err := parseTarget(raw, []string{resolve}, sni, "/1k")
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want a one-line usage error", err)
			}
			return
		}
		if ep.Address == "" || ep.Path == "" || !strings.HasPrefix(ep.Path, "/") && ep.Path != "" {
			t.Errorf("endpoint %+v from %q", ep, raw)
		}
	})
}

// FuzzParseResolve: the --resolve form alone.
func FuzzParseResolve(f *testing.F) {
	f.Add("www.fwtest.com:443:10.0.0.5")
	f.Add("h:0:1.2.3.4")
	f.Add(":::")
	f.Fuzz(func(t *testing.T, s string) {
		host, port, addr, err := parseResolve(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			return
		}
		if host == "" || port == "" || addr == "" {
			t.Errorf("parseResolve(%q) = %q, %q, %q", s, host, port, addr)
		}
	})
}
