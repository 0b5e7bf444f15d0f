package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/protocol"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// newFlags returns a flag set that prints nothing by itself.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.Usage = func() {}
	fs.SetInterspersed(true)
	flagSetMade(fs)
	return fs
}

// parseFlags parses args; help prints the usage to stdout and returns
// errHelp.
func parseFlags(fs *pflag.FlagSet, usage string, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	var ue *usageError
	if errors.As(err, &ue) { // a flag's own check
		return ue
	}
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: %s\n\nFlags:\n%s", usage, fs.FlagUsages())
		return errHelp
	}
	if err != nil {
		return usagef("%s", err)
	}
	return checkFlagValues(fs)
}

// checkFlagValues refuses the values no flag of tlsbench takes: a float that
// is NaN, infinite or negative, and a negative duration.
func checkFlagValues(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		switch f.Value.Type() {
		case "float64":
			v, perr := strconv.ParseFloat(f.Value.String(), 64)
			switch {
			case perr != nil || math.IsNaN(v) || math.IsInf(v, 0):
				err = usagef("--%s must be a finite number, got %s", f.Name, f.Value)
			case v < 0:
				err = usagef("--%s must not be negative, got %s", f.Name, f.Value)
			}
		case "duration":
			if d, perr := time.ParseDuration(f.Value.String()); perr == nil && d < 0 {
				err = usagef("--%s must not be negative, got %s", f.Name, f.Value)
			}
		}
	})
	return err
}

// errHelp ends a command successfully after printing help.
var errHelp = errors.New("help")

// loadProfiles returns the built-in profiles plus the user's files.
func loadProfiles(files []string) (*profiles.Set, error) {
	set := profiles.Builtin()
	for _, f := range files {
		if err := set.LoadFile(f); err != nil {
			return nil, usagef("%s", profileText(err))
		}
	}
	return set, nil
}

// endpoint is a parsed https URL (plan.ParseTarget's), --resolve and
// --sni applied.
type endpoint = plan.Target

// parseTarget parses an https URL and applies --resolve and --sni; a URL
// without a path gets defaultPath.
func parseTarget(raw string, resolves []string, sni, defaultPath string) (*endpoint, error) {
	t, err := plan.ParseTarget(raw, defaultPath)
	if err != nil {
		return nil, usagef("%v", err)
	}
	for _, r := range resolves {
		host, port, addr, err := parseResolve(r)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(host, t.Host) && port == t.Port {
			t.Address = net.JoinHostPort(addr, port)
		}
	}
	if sni != "" {
		if t.ServerName, err = plan.ALabel(sni); err != nil {
			return nil, usagef("bad --sni: %v", err)
		}
	}
	return t, nil
}

// resolveDUTs applies qualify's --resolve to the --dut DUTs, as the engines
// apply it to their URL: a DUT whose URL has the host and port dials the
// address. A --resolve that matches no DUT is refused.
func resolveDUTs(duts []plan.DUT, resolves []string) error {
	for _, r := range resolves {
		host, port, addr, err := parseResolve(r)
		if err != nil {
			return err
		}
		hit := false
		for i, d := range duts {
			if t, err := plan.ParseTarget(d.URL, "/"); err == nil && strings.EqualFold(t.Host, host) && t.Port == port {
				duts[i].Resolve, hit = addr, true
			}
		}
		if !hit {
			return usagef("bad --resolve %q: no --dut URL has host %s and port %s", r, host, port)
		}
	}
	return nil
}

// parseResolve parses curl's --resolve form host:port:addr; an
// internationalized host is returned as its A-label.
func parseResolve(s string) (host, port, addr string, err error) {
	bad := func(why string) error { return usagef("bad --resolve %q: %s (want host:port:addr)", s, why) }
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 {
		return "", "", "", bad("too few fields")
	}
	host, port, addr = parts[0], parts[1], strings.Trim(parts[2], "[]")
	if host == "" {
		return "", "", "", bad("no host")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", "", "", bad(fmt.Sprintf("port %q is not 1-65535", port))
	}
	if net.ParseIP(addr) == nil {
		return "", "", "", bad(fmt.Sprintf("%q is not an IP address", addr))
	}
	if a, err := plan.ALabel(host); err == nil {
		host = a
	}
	return host, port, addr, nil
}

// parseSources parses --source: comma-separated addresses, ranges
// (127.0.0.2-127.0.0.200) and CIDR blocks (127.0.1.0/24).
func parseSources(specs []string) ([]net.IP, error) {
	const limit = 1 << 16
	var out []net.IP
	for _, spec := range specs {
		for _, item := range strings.Split(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			switch {
			case strings.Contains(item, "/"):
				_, n, err := net.ParseCIDR(item)
				if err != nil || n.IP.To4() == nil {
					return nil, usagef("bad --source %q: not an IPv4 CIDR block", item)
				}
				ones, bits := n.Mask.Size()
				if bits-ones > 16 {
					return nil, usagef("bad --source %q: more than %d addresses", item, limit)
				}
				first := binary.BigEndian.Uint32(n.IP.To4())
				for i := uint32(0); i < 1<<(bits-ones); i++ {
					out = append(out, u32IP(first+i))
				}
			case strings.Contains(item, "-"):
				lo, hi, _ := strings.Cut(item, "-")
				a, b := net.ParseIP(lo).To4(), net.ParseIP(hi).To4()
				if a == nil || b == nil {
					return nil, usagef("bad --source %q: a range is IPv4-IPv4", item)
				}
				x, y := binary.BigEndian.Uint32(a), binary.BigEndian.Uint32(b)
				if y < x || y-x >= limit {
					return nil, usagef("bad --source %q: empty range or more than %d addresses", item, limit)
				}
				for i := x; i <= y; i++ {
					out = append(out, u32IP(i))
				}
			default:
				ip := net.ParseIP(item)
				if ip == nil {
					return nil, usagef("bad --source %q: not an IP address", item)
				}
				out = append(out, ip)
			}
			if len(out) > limit {
				return nil, usagef("--source: more than %d addresses", limit)
			}
		}
	}
	return out, nil
}

func u32IP(v uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, v)
	return ip
}

// parseHeaders parses repeated "Name: value" flags.
func parseHeaders(hs []string) ([][2]string, error) {
	var out [][2]string
	for _, h := range hs {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, usagef("bad --header %q: want 'Name: value'", h)
		}
		value = strings.TrimSpace(value)
		if _, err := httpreq.ParseTemplate(value); err != nil {
			return nil, usagef("bad --header %q: %v", h, err)
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}

// Flags with a domain: each value is checked as it is parsed, and its error
// is the command's one line (parseFlags unwraps pflag's).

// engineList is a repeatable engine flag (cps or throughput).
type engineList struct {
	flag    string
	engines []string
}

func (v *engineList) String() string { return strings.Join(v.engines, ",") }
func (v *engineList) Type() string   { return "engine" }
func (v *engineList) Set(s string) error {
	if _, err := vocab.ParseEngine(s); err != nil {
		return usagef("bad %s %q: want cps or throughput", v.flag, s)
	}
	v.engines = append(v.engines, s)
	return nil
}

// httpValue is --http VERSION: an HTTP version whose protocol is registered
// (protocol.Versions), kept as the protocol's name.
type httpValue struct{ name *string }

// addHTTPFlag adds --http to fs, setting *name.
func addHTTPFlag(fs *pflag.FlagSet, name *string) {
	fs.Var(httpValue{name}, "http", "carry the transactions over HTTP `VERSION`: "+
		strings.Join(protocol.Versions(), " or ")+" (default 1.1)")
}

func (v httpValue) String() string { return strings.TrimPrefix(*v.name, "http/") }
func (v httpValue) Type() string   { return "version" }
func (v httpValue) Set(s string) error {
	p, err := protocol.ForVersion(s)
	if err != nil || s == "" {
		return usagef("bad --http %q: want %s", s, strings.Join(protocol.Versions(), " or "))
	}
	*v.name = p.Name
	return nil
}

// shardValue is --shard i/N, with 0 ≤ i < N.
type shardValue struct {
	i, n int
	set  bool
}

func (v *shardValue) String() string {
	if !v.set {
		return ""
	}
	return fmt.Sprintf("%d/%d", v.i, v.n)
}
func (v *shardValue) Type() string { return "shard" }
func (v *shardValue) Set(s string) (err error) {
	v.i, v.n, err = parseShard(s)
	v.set = err == nil
	return err
}

// timeValue is an instant in RFC 3339.
type timeValue struct {
	flag string
	t    *time.Time
}

func (v timeValue) String() string {
	if v.t == nil || v.t.IsZero() {
		return ""
	}
	return v.t.Format(time.RFC3339Nano)
}
func (v timeValue) Type() string { return "time" }
func (v timeValue) Set(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return usagef("bad %s %q: want RFC 3339, e.g. 2026-11-30T15:04:05Z", v.flag, s)
	}
	*v.t = t
	return nil
}
