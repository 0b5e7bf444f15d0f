// Package devcount reads a device's own counters, so that a run's record can
// put the device's count beside the engine's: HAProxy's stats CSV, nginx's
// stub_status, a Prometheus exposition endpoint, the reference target's
// admin /stats, or commands whose output is a number (a device's SSH or API
// CLI). A Source says where and how; Source.Read takes one reading (every
// read has a deadline); Delta subtracts two readings.
//
// A wrong source is an error, never a zero: an HTTP status other than 200,
// a body that does not parse, a frontend, listener or metric that is not
// there, a command that fails or prints something other than a number.
package devcount

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Counter names one of a device's counts.
type Counter string

// The counters a source may give. Not every kind gives every one.
const (
	// Sessions: client connections (TCP) the device accepted.
	Sessions Counter = "sessions"
	// Handshakes: TLS handshakes the device completed.
	Handshakes Counter = "handshakes"
	// Requests: HTTP requests the device received.
	Requests Counter = "requests"
	// BytesIn: application (HTTP) bytes the device received from clients;
	// BytesOut: sent. TLSBytesIn, TLSBytesOut: its TLS records' (the wire's).
	BytesIn     Counter = "bytes_in"
	BytesOut    Counter = "bytes_out"
	TLSBytesIn  Counter = "tls_bytes_in"
	TLSBytesOut Counter = "tls_bytes_out"
	// Errors: what the device counted as failed (its own definition).
	Errors Counter = "errors"
)

// Counters lists every counter, in the record's order.
var Counters = []Counter{Sessions, Handshakes, Requests, BytesIn, BytesOut, TLSBytesIn, TLSBytesOut, Errors}

// Kinds of source.
const (
	KindHAProxy    = "haproxy"    // HAProxy's stats page as CSV (…/stats;csv), one frontend
	KindNginx      = "nginx"      // nginx's stub_status
	KindPrometheus = "prometheus" // a Prometheus text exposition: a metric with its labels per counter
	kindTarget     = "target"     // the reference target's admin /stats, one listener
	KindCommand    = "command"    // a command per counter that prints a number
)

// kinds lists the kinds of source.
var kinds = []string{KindHAProxy, KindNginx, KindPrometheus, kindTarget, KindCommand}

// defaultTimeout bounds one read (all its requests or commands).
const defaultTimeout = 2 * time.Second

// ProfileVar, in a frontend, a metric selector or a command, is replaced by
// the run's profile name (Source.For).
const ProfileVar = "{profile}"

// Source says where a device's counters are read.
type Source struct {
	Kind string `yaml:"kind" json:"kind"`
	// URL is the page read (haproxy, nginx, prometheus, target).
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Frontend is HAProxy's frontend (its pxname) or the reference
	// target's listener (its profile name). Frontends, if it has the
	// run's profile, overrides it: one frontend per cipher profile.
	Frontend  string            `yaml:"frontend,omitempty" json:"frontend,omitempty"`
	Frontends map[string]string `yaml:"frontends,omitempty" json:"frontends,omitempty"`
	// Metrics maps counters to Prometheus series selectors:
	// name{label="value",…}; the values of every series that has the name
	// and those labels are added.
	Metrics map[Counter]string `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	// Commands maps counters to commands that print a number: words split
	// as a shell would split them (quotes), run without a shell.
	Commands map[Counter]string `yaml:"commands,omitempty" json:"commands,omitempty"`
	// CountsReads says that the device counts the reads of its counters
	// in the counters read (a session and a request per read): nginx's
	// stub_status does (by default). HAProxy's stats listener is a
	// frontend of its own, the target's admin listener is apart.
	CountsReads *bool `yaml:"counts_reads,omitempty" json:"counts_reads,omitempty"`
	// Timeout bounds one read; 0: DefaultTimeout.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// SpecError is a source that cannot be used as written.
type SpecError struct {
	Spec string // the source as written, or a field
	Why  string
}

func (e *SpecError) Error() string { return fmt.Sprintf("device counters %q: %s", e.Spec, e.Why) }

// Parse reads a source written on one line: space-separated key=value
// fields, a value quoted with ' or " when it has spaces, e.g.
//
//	kind=haproxy url=http://127.0.0.1:8404/stats;csv frontend=fe_p256
//	kind=nginx url=http://127.0.0.1:8080/stub_status
//	kind=prometheus url=http://dut:8405/metrics sessions=haproxy_frontend_connections_total{proxy="fe"}
//	kind=command sessions='ssh dut show sessions' timeout=5s
//
// Keys: kind, url, frontend, counts_reads (true or false), timeout, and a
// counter's name (prometheus: its metric selector; command: its command).
func Parse(spec string) (Source, error) {
	var s Source
	bad := func(format string, a ...any) (Source, error) { return s, &SpecError{spec, fmt.Sprintf(format, a...)} }
	fields, err := split(spec)
	if err != nil {
		return bad("%v", err)
	}
	if len(fields) == 0 {
		return bad("empty: want kind=… and where to read")
	}
	counters := map[Counter]string{}
	seen := map[string]bool{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return bad("%q is not key=value", f)
		}
		if seen[k] {
			return bad("%s given twice", k)
		}
		seen[k] = true
		switch k {
		case "kind":
			s.Kind = v
		case "url":
			s.URL = v
		case "frontend":
			s.Frontend = v
		case "counts_reads":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bad("counts_reads %q is not true or false", v)
			}
			s.CountsReads = &b
		case "timeout":
			if s.Timeout, err = parseTimeout(v); err != nil {
				return bad("%v", err)
			}
		default:
			if !slices.Contains(Counters, Counter(k)) {
				return bad("unknown key %q (want kind, url, frontend, counts_reads, timeout or a counter: %s)",
					k, counterList())
			}
			counters[Counter(k)] = v
		}
	}
	if len(counters) > 0 {
		switch s.Kind {
		case KindPrometheus:
			s.Metrics = counters
		case KindCommand:
			s.Commands = counters
		default:
			return bad("counters are named only for the prometheus and command kinds, not %q", s.Kind)
		}
	}
	err = s.Check()
	if se, ok := err.(*SpecError); ok {
		se.Spec = spec
	}
	return s, err
}

func counterList() string {
	var names []string
	for _, c := range Counters {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// Check reports the first thing wrong with the source (a *SpecError).
func (s *Source) Check() error {
	bad := func(why string) error { return &SpecError{s.String(), why} }
	if !slices.Contains(kinds, s.Kind) {
		return bad(fmt.Sprintf("kind %q is not one of %s", s.Kind, strings.Join(kinds, ", ")))
	}
	if err := checkTimeout(s.Timeout); err != nil {
		return bad("timeout " + s.Timeout.String() + " " + err.Error())
	}
	if (s.Frontend != "" || len(s.Frontends) > 0) && s.Kind != KindHAProxy && s.Kind != kindTarget {
		return bad("kind=" + s.Kind + " has no frontend (frontend= names an haproxy frontend)")
	}
	if s.Kind == KindCommand {
		if s.URL != "" {
			return bad("a command source has no url")
		}
		if len(s.Commands) == 0 {
			return bad("a command source names a command per counter, e.g. sessions='ssh dut show sessions'")
		}
		for c, cmd := range s.Commands {
			if !slices.Contains(Counters, c) {
				return bad(fmt.Sprintf("unknown counter %q (want one of %s)", c, counterList()))
			}
			if words, err := split(cmd); err != nil || len(words) == 0 {
				return bad(fmt.Sprintf("the %s command %q is not a command", c, cmd))
			}
		}
		return nil
	}
	if len(s.Commands) > 0 {
		return bad("commands are for the command kind")
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad(fmt.Sprintf("url %q is not an http:// or https:// URL", s.URL))
	}
	switch s.Kind {
	case KindHAProxy:
		if s.Frontend == "" && len(s.Frontends) == 0 {
			return bad("an haproxy source names its frontend (frontend=NAME)")
		}
	case kindTarget:
		// The listener defaults to the run's profile.
	case KindPrometheus:
		if len(s.Metrics) == 0 {
			return bad("a prometheus source names a metric per counter, e.g. sessions=name{label=\"v\"}")
		}
		for c, sel := range s.Metrics {
			if !slices.Contains(Counters, c) {
				return bad(fmt.Sprintf("unknown counter %q (want one of %s)", c, counterList()))
			}
			if _, err := parseSelector(strings.ReplaceAll(sel, ProfileVar, "p")); err != nil {
				return bad(fmt.Sprintf("%s: %v", c, err))
			}
		}
	}
	if len(s.Metrics) > 0 && s.Kind != KindPrometheus {
		return bad("metrics are for the prometheus kind")
	}
	return nil
}

// For returns the source as read for a run of profile: the profile's
// frontend (Frontends, or Frontend; the target's listener defaults to the
// profile) and ProfileVar replaced everywhere.
func (s Source) For(profile string) Source {
	r := func(v string) string { return strings.ReplaceAll(v, ProfileVar, profile) }
	if f, ok := s.Frontends[profile]; ok {
		s.Frontend = f
	}
	s.Frontends = nil
	s.Frontend = r(s.Frontend)
	if s.Kind == kindTarget && s.Frontend == "" {
		s.Frontend = profile
	}
	s.URL = r(s.URL)
	s.Metrics, s.Commands = replaceProfile(s.Metrics, r), replaceProfile(s.Commands, r)
	return s
}

// replaceProfile is a copy of m with r applied to its values (nil for nil).
func replaceProfile(m map[Counter]string, r func(string) string) map[Counter]string {
	if m == nil {
		return nil
	}
	out := make(map[Counter]string, len(m))
	for c, v := range m {
		out[c] = r(v)
	}
	return out
}

// ReadsCounted says whether the device counts the reads of these counters
// (CountsReads, by default true for nginx only).
func (s *Source) ReadsCounted() bool {
	if s.CountsReads != nil {
		return *s.CountsReads
	}
	return s.Kind == KindNginx
}

// String is the source on one line, as the record names it.
func (s Source) String() string {
	parts := []string{"kind=" + s.Kind}
	if s.URL != "" {
		parts = append(parts, "url="+s.URL)
	}
	if s.Frontend != "" {
		parts = append(parts, "frontend="+s.Frontend)
	}
	for _, p := range slices.Sorted(maps.Keys(s.Frontends)) {
		parts = append(parts, "frontends."+p+"="+s.Frontends[p])
	}
	for _, m := range []map[Counter]string{s.Metrics, s.Commands} {
		for _, c := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, string(c)+"="+quote(m[c]))
		}
	}
	if s.CountsReads != nil {
		parts = append(parts, "counts_reads="+strconv.FormatBool(*s.CountsReads))
	}
	if s.Timeout > 0 {
		parts = append(parts, "timeout="+s.Timeout.String())
	}
	return strings.Join(parts, " ")
}

func quote(v string) string {
	if !strings.ContainsAny(v, " \t'\"") {
		return v
	}
	if !strings.Contains(v, "'") {
		return "'" + v + "'"
	}
	return strconv.Quote(v)
}

// split cuts s into words at unquoted spaces; '…' and "…" quote (a
// backslash escapes the next character inside "…"); braces {…} keep their
// content (a Prometheus selector's label list, its quoted values with their
// escapes) in one word, as written.
func split(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false // a word is open
	var q rune  // the open quote, outside braces
	esc := false
	brace, bq, besc := false, false, false // in braces; in a quoted label value; after its backslash
	for _, c := range s {
		switch {
		case brace:
			w.WriteRune(c)
			switch {
			case besc:
				besc = false
			case bq && c == '\\':
				besc = true
			case c == '"':
				bq = !bq
			case !bq && c == '}':
				brace = false
			}
		case esc:
			w.WriteRune(c)
			esc = false
		case q != 0:
			switch {
			case c == q:
				q = 0
			case c == '\\' && q == '"':
				esc = true
			default:
				w.WriteRune(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == '{':
			w.WriteRune(c)
			brace, in = true, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(c)
			in = true
		}
	}
	if q != 0 || esc || bq {
		return nil, errors.New("unclosed quote")
	}
	if brace {
		return nil, errors.New("unclosed brace")
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}
