package devcount

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
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
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c Counts
	var err error
	if s.Kind == KindCommand {
		c, err = s.readCommands(ctx)
	} else {
		var body []byte
		if body, err = get(ctx, s.URL); err == nil {
			c, err = s.parse(body)
		}
	}
	if err != nil {
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

// parse reads a page of the source's kind.
func (s *Source) parse(body []byte) (Counts, error) {
	switch s.Kind {
	case KindHAProxy:
		return ParseHAProxyCSV(body, s.Frontend)
	case KindNginx:
		return ParseStubStatus(body)
	case KindTarget:
		return ParseTargetStats(body, s.Frontend)
	case KindPrometheus:
		return s.parseProm(body)
	}
	return nil, fmt.Errorf("kind %q", s.Kind)
}

// ParseHAProxyCSV reads a frontend's counters from HAProxy's stats CSV (the
// stats page's ";csv", or `show stat`): sessions stot, requests req_tot,
// bytes_in bin, bytes_out bout, errors ereq + hrsp_4xx + hrsp_5xx (requests
// refused or answered with an error status).
func ParseHAProxyCSV(body []byte, frontend string) (Counts, error) {
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
		num := func(f string) (int64, error) {
			i := col[f]
			if i >= len(rec) {
				return 0, fmt.Errorf("frontend %s has no %s", frontend, f)
			}
			v := rec[i]
			if v == "" {
				return 0, nil // HAProxy leaves counters of another mode empty
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("frontend %s: %s %q is not a number", frontend, f, v)
			}
			return n, nil
		}
		c := Counts{}
		for counter, f := range map[Counter]string{Sessions: "stot", Requests: "req_tot", BytesIn: "bin", BytesOut: "bout"} {
			if c[counter], err = num(f); err != nil {
				return nil, err
			}
		}
		var errs int64
		for _, f := range []string{"ereq", "hrsp_4xx", "hrsp_5xx"} {
			n, err := num(f)
			if err != nil {
				return nil, err
			}
			errs += n
		}
		c[Errors] = errs
		return c, nil
	}
	return nil, fmt.Errorf("HAProxy's stats have no frontend %q (frontends: %s)", frontend, strings.Join(names, ", "))
}

// ParseStubStatus reads nginx's stub_status page: sessions accepts,
// requests requests, errors accepts − handled (connections dropped at a
// resource limit).
//
//	Active connections: 1
//	server accepts handled requests
//	 16 16 31
//	Reading: 0 Writing: 1 Waiting: 0
func ParseStubStatus(body []byte) (Counts, error) {
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
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("nginx stub_status: %q is not a number", f[i])
			}
			n[i] = v
		}
		return Counts{Sessions: n[0], Requests: n[2], Errors: n[0] - n[1]}, nil
	}
	return nil, errors.New("not nginx's stub_status page: no \"server accepts handled requests\" line")
}

// ParseTargetStats reads a listener's counters from the reference target's
// admin /stats ({"listeners":[…]}), the listener named by its profile:
// sessions connections, handshakes handshakes, requests requests, errors
// handshake_errors.
func ParseTargetStats(body []byte, listener string) (Counts, error) {
	var page struct {
		Listeners []struct {
			Profile         string `json:"profile"`
			Connections     *int64 `json:"connections"`
			Handshakes      *int64 `json:"handshakes"`
			Requests        *int64 `json:"requests"`
			HandshakeErrors *int64 `json:"handshake_errors"`
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
		if l.Connections == nil || l.Handshakes == nil || l.Requests == nil || l.HandshakeErrors == nil {
			return nil, fmt.Errorf("the target's listener %s lacks a counter", listener)
		}
		return Counts{Sessions: *l.Connections, Handshakes: *l.Handshakes, Requests: *l.Requests, Errors: *l.HandshakeErrors}, nil
	}
	return nil, fmt.Errorf("the target's /stats has no listener %q (listeners: %s)", listener, strings.Join(names, ", "))
}

// parseProm reads each counter's selector from an exposition.
func (s *Source) parseProm(body []byte) (Counts, error) {
	series, err := ParseExposition(body)
	if err != nil {
		return nil, err
	}
	c := Counts{}
	for counter, text := range s.Metrics {
		sel, err := ParseSelector(text)
		if err != nil {
			return nil, err
		}
		v, n := sel.Sum(series)
		if n == 0 {
			return nil, fmt.Errorf("no series matches %s (%s)", text, counter)
		}
		if v < 0 || v > math.MaxInt64/2 || math.IsNaN(v) {
			return nil, fmt.Errorf("%s is %g: not a count", text, v)
		}
		c[counter] = int64(math.Round(v))
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
		cmd := exec.CommandContext(ctx, words[0], words[1:]...)
		cmd.WaitDelay = 100 * time.Millisecond
		var out, stderr limited
		out.max, stderr.max = maxOutput, maxOutput
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			msg := strings.TrimSpace(stderr.String())
			if len(msg) > 200 {
				msg = msg[:200] + "…"
			}
			if msg != "" {
				return nil, fmt.Errorf("%s: %s: %v: %s", counter, words[0], err, msg)
			}
			return nil, fmt.Errorf("%s: %s: %v", counter, words[0], err)
		}
		text := strings.TrimSpace(out.String())
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(text, 64)
			if ferr != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt64/2 {
				if len(text) > 80 {
					text = text[:80] + "…"
				}
				return nil, fmt.Errorf("%s: %s printed %q, not a number", counter, words[0], text)
			}
			v = int64(f)
		}
		c[counter] = v
	}
	return c, nil
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
