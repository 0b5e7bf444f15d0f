package devcount

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Counts is one reading (or the difference of two): the counters the
// source gives, by name.
type Counts map[Counter]int64

// Delta returns after − before for every counter both have. A counter that
// went down (the device restarted, or a counter wrapped) is an error.
func Delta(before, after Counts) (Counts, error) {
	d := Counts{}
	for c, a := range after {
		b, ok := before[c]
		if !ok {
			continue
		}
		if a < b {
			return nil, fmt.Errorf("%s went down from %d to %d (the device restarted or the counter wrapped)", c, b, a)
		}
		d[c] = a - b
	}
	return d, nil
}

// ReadError is a read that failed: the source, what was read and why.
type ReadError struct {
	Source string
	Err    error
}

func (e *ReadError) Error() string { return fmt.Sprintf("device counters (%s): %v", e.Source, e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// client reads counters: a new connection per read (no keep-alive), so
// that a device that counts its reads counts each exactly once.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

// Read takes one reading of the source (after For) within its timeout.
// Any failure is a *ReadError.
func (s *Source) Read(ctx context.Context) (Counts, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	read := s.readPage
	if s.Kind == KindCommand {
		read = s.readCommands
	}
	c, err := read(ctx)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within the timeout, %s: %w", timeout, err)
		}
		return nil, &ReadError{s.String(), err}
	}
	return c, nil
}

// maxBody bounds a page read.
const maxBody = 16 << 20

func get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP status %s", u, resp.Status)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("GET %s: the page is larger than %d bytes", u, maxBody)
	}
	return body, nil
}

// readPage gets the source's page and reads it as its kind's.
func (s *Source) readPage(ctx context.Context) (Counts, error) {
	body, err := get(ctx, s.URL)
	if err != nil {
		return nil, err
	}
	switch s.Kind {
	case KindHAProxy:
		return parseHAProxyCSV(body, s.Frontend)
	case KindNginx:
		return parseStubStatus(body)
	case kindTarget:
		return parseTargetStats(body, s.Frontend)
	case KindPrometheus:
		return s.parseProm(body)
	}
	return nil, fmt.Errorf("kind %q", s.Kind)
}

// haproxyColumns are the stats CSV's columns added into each counter.
var haproxyColumns = map[Counter][]string{Sessions: {"stot"}, Requests: {"req_tot"}, BytesIn: {"bin"},
	BytesOut: {"bout"}, Errors: {"ereq", "hrsp_4xx", "hrsp_5xx"}}

// parseHAProxyCSV reads a frontend's counters from HAProxy's stats CSV (the
// stats page's ";csv", or `show stat`): sessions stot, requests req_tot,
// bytes_in bin, bytes_out bout, errors ereq + hrsp_4xx + hrsp_5xx (requests
// refused or answered with an error status).
func parseHAProxyCSV(body []byte, frontend string) (Counts, error) {
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	r.Comment = 0
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("not HAProxy's stats CSV: %v", err)
	}
	if len(header) == 0 || !strings.HasPrefix(header[0], "# pxname") {
		return nil, fmt.Errorf("not HAProxy's stats CSV: the first line is not the \"# pxname,svname,…\" header")
	}
	header[0] = "pxname"
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, f := range []string{"svname", "stot", "req_tot", "bin", "bout", "ereq", "hrsp_4xx", "hrsp_5xx"} {
		if _, ok := col[f]; !ok {
			return nil, fmt.Errorf("HAProxy's stats CSV has no %s column", f)
		}
	}
	var names []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("HAProxy's stats CSV: %v", err)
		}
		if len(rec) <= col["svname"] || rec[col["svname"]] != "FRONTEND" {
			continue
		}
		names = append(names, rec[0])
		if rec[0] != frontend {
			continue
		}
		c := Counts{}
		for counter, fs := range haproxyColumns {
			c[counter] = 0 // an empty column counts 0: the counter is read
			for _, f := range fs {
				if col[f] >= len(rec) {
					return nil, fmt.Errorf("frontend %s has no %s", frontend, f)
				}
				if v := rec[col[f]]; v != "" { // HAProxy leaves counters of another mode empty
					n, err := parseCount(v)
					if err != nil {
						return nil, fmt.Errorf("frontend %s: %s %q: %v", frontend, f, v, err)
					}
					c[counter] += n
				}
			}
		}
		return c, nil
	}
	return nil, fmt.Errorf("HAProxy's stats have no frontend %q (frontends: %s)", frontend, strings.Join(names, ", "))
}

// parseStubStatus reads nginx's stub_status page: sessions accepts,
// requests requests, errors accepts − handled (connections dropped at a
// resource limit).
//
//	Active connections: 1
//	server accepts handled requests
//	 16 16 31
//	Reading: 0 Writing: 1 Waiting: 0
func parseStubStatus(body []byte) (Counts, error) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "server accepts handled requests" {
			continue
		}
		if !sc.Scan() {
			break
		}
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("nginx stub_status: %q is not three numbers", sc.Text())
		}
		var n [3]int64
		for i := range f {
			v, err := parseCount(f[i])
			if err != nil {
				return nil, fmt.Errorf("nginx stub_status: %q: %v", f[i], err)
			}
			n[i] = v
		}
		if n[1] > n[0] {
			return nil, fmt.Errorf("nginx stub_status: %d handled of %d accepted: not counts", n[1], n[0])
		}
		return Counts{Sessions: n[0], Requests: n[2], Errors: n[0] - n[1]}, nil
	}
	return nil, errors.New("not nginx's stub_status page: no \"server accepts handled requests\" line")
}

// parseTargetStats reads a listener's counters from the reference target's
// admin /stats ({"listeners":[…]}), the listener named by its profile:
// sessions connections, handshakes handshakes + resumed (the target counts
// full and resumed handshakes apart), requests requests, errors
// handshake_errors.
func parseTargetStats(body []byte, listener string) (Counts, error) {
	var page struct {
		Listeners []struct {
			Profile         string       `json:"profile"`
			Connections     *json.Number `json:"connections"`
			Handshakes      *json.Number `json:"handshakes"`
			Resumed         *json.Number `json:"resumed"`
			Requests        *json.Number `json:"requests"`
			HandshakeErrors *json.Number `json:"handshake_errors"`
		} `json:"listeners"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("not the reference target's /stats: %v", err)
	}
	var names []string
	for _, l := range page.Listeners {
		names = append(names, l.Profile)
		if l.Profile != listener {
			continue
		}
		if l.Connections == nil || l.Handshakes == nil || l.Resumed == nil || l.Requests == nil ||
			l.HandshakeErrors == nil {
			return nil, fmt.Errorf("the target's listener %s lacks a counter", listener)
		}
		c := Counts{}
		for k, v := range map[Counter]*json.Number{Sessions: l.Connections, Handshakes: l.Handshakes,
			Requests: l.Requests, Errors: l.HandshakeErrors, "resumed": l.Resumed} {
			n, err := parseCount(v.String())
			if err != nil {
				return nil, fmt.Errorf("the target's listener %s: %s %s: %v", listener, k, v, err)
			}
			c[k] = n
		}
		c[Handshakes] += c["resumed"]
		delete(c, "resumed")
		return c, nil
	}
	return nil, fmt.Errorf("the target's /stats has no listener %q (listeners: %s)", listener, strings.Join(names, ", "))
}

// parseProm reads each counter's selector from an exposition.
func (s *Source) parseProm(body []byte) (Counts, error) {
	series, err := parseExposition(body)
	if err != nil {
		return nil, err
	}
	c := Counts{}
	for counter, text := range s.Metrics {
		sel, err := parseSelector(text)
		if err != nil {
			return nil, err
		}
		v, n := sel.Sum(series)
		if n == 0 {
			return nil, fmt.Errorf("no series matches %s (%s)", text, counter)
		}
		if c[counter], err = countOf(v); err != nil {
			return nil, fmt.Errorf("%s is %g: %v", text, v, err)
		}
	}
	return c, nil
}

// maxOutput bounds a command's output.
const maxOutput = 4096

// readCommands runs each counter's command in turn, within ctx.
func (s *Source) readCommands(ctx context.Context) (Counts, error) {
	c := Counts{}
	for _, counter := range slices.Sorted(maps.Keys(s.Commands)) {
		words, err := split(s.Commands[counter])
		if err != nil || len(words) == 0 {
			return nil, fmt.Errorf("%s: %q is not a command", counter, s.Commands[counter])
		}
		text, err := runCommand(ctx, words)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", counter, words[0], err)
		}
		if c[counter], err = parseCount(text); err != nil {
			if len(text) > 80 {
				text = text[:80] + "…"
			}
			return nil, fmt.Errorf("%s: %s printed %q: %v", counter, words[0], text, err)
		}
	}
	return c, nil
}

// runCommand runs a command in a process group of its own, and returns
// what it printed, trimmed. When ctx ends (the read's deadline, or the
// run's interruption) the whole group is killed, not only the command: a
// shell's children, an ssh it started. Whatever of the group outlives the
// command is killed too, so that no read leaves a process behind.
func runCommand(ctx context.Context, words []string) (string, error) {
	cmd := exec.CommandContext(ctx, words[0], words[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Its output is waited for once it has exited or been killed, for
	// half a second at most (a loaded machine may take a while to read it;
	// a process outside the group may hold the pipes).
	cmd.WaitDelay = 500 * time.Millisecond
	var out, stderr limited
	out.max, stderr.max = maxOutput, maxOutput
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	groups.Store(cmd.Process.Pid, nil)
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	groups.Delete(cmd.Process.Pid)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			if len(msg) > 200 {
				msg = msg[:200] + "…"
			}
			return "", fmt.Errorf("%v: %s", err, msg)
		}
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// limited keeps the first max bytes written to it.
type limited struct {
	bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// groups are the process groups of the commands running (their ids).
var groups sync.Map

// KillCommands kills the process groups of the commands being run (for a
// process about to exit without waiting for its reads to end).
func KillCommands() {
	groups.Range(func(id, _ any) bool {
		_ = syscall.Kill(-id.(int), syscall.SIGKILL)
		return true
	})
}

// haproxyVersion finds the version on HAProxy's stats page (HTML).
var haproxyVersion = regexp.MustCompile(`HAProxy version ([^,<\s]+)`)

// Version is the device's software as its stats page names it: HAProxy's
// stats page ("HAProxy version 2.6.12-1, released …": the CSV's URL without
// ";csv"), a Prometheus exposition's name_build_info{version="…"}. It is ""
// when the source says none (nginx's stub_status, commands, the reference
// target) or the page cannot be read: informational, never an error.
func (s *Source) Version(ctx context.Context) string {
	u := s.URL
	switch s.Kind {
	case KindHAProxy:
		u, _, _ = strings.Cut(u, ";")
	case KindPrometheus:
	default:
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Timeout, defaultTimeout))
	defer cancel()
	body, err := get(ctx, u)
	if err != nil {
		return ""
	}
	if s.Kind == KindHAProxy {
		if m := haproxyVersion.FindSubmatch(body); m != nil {
			return "HAProxy " + string(m[1])
		}
		return ""
	}
	series, _ := parseExposition(body)
	for _, x := range series {
		if name, ok := strings.CutSuffix(x.Name, "_build_info"); ok && x.Labels["version"] != "" {
			name, _, _ = strings.Cut(name, "_")
			return strings.Replace(name, "haproxy", "HAProxy", 1) + " " + x.Labels["version"]
		}
	}
	return ""
}
