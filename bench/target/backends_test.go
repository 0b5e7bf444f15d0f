package target_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
)

// getJSON reads url's JSON into v, under a deadline.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestBackendsCount: a pool of 3 backends serves the objects in plain
// HTTP/1.1 on consecutive ports, keeps a connection alive for several
// requests, closes an HTTP/1.0 one after its response, and counts every
// object request exactly (per backend, in total, by second), never /stats.
func TestBackendsCount(t *testing.T) {
	p, err := target.StartBackends(target.BackendsConfig{Count: 3, Admin: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	begin := time.Now().Unix()
	// Backend 1: 5 requests on one kept-alive connection.
	c, err := net.Dial("tcp", p.Backends[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for i := range 5 {
		fmt.Fprintf(c, "GET /1k HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on one connection: %v", i, err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n != 1024 {
			t.Fatalf("request %d: %s, %d bytes; want 200, 1024", i, resp.Status, n)
		}
	}
	// Backend 2: HTTP/1.0, closed after the response; and /stats, not counted.
	for range 2 {
		raw := statusAndClose(t, p.Backends[1].Addr, "GET /bytes/100 HTTP/1.0\r\n\r\n")
		if !strings.HasPrefix(raw, "HTTP/1.1 200") || !strings.HasSuffix(raw, "\r\n\r\n"+string(target.Pattern[:100])) {
			t.Fatalf("HTTP/1.0 answer %q", raw[:min(len(raw), 40)])
		}
	}
	if got := statusOf(t, p.Backends[1].Addr, "GET /stats HTTP/1.0\r\n\r\n"); got != "200" {
		t.Fatalf("/stats: %s", got)
	}
	if got := statusOf(t, p.Backends[2].Addr, "GET /nope HTTP/1.0\r\n\r\n"); got != "404" {
		t.Fatalf("/nope: %s", got)
	}
	each, total := p.Requests()
	if fmt.Sprint(each) != "[5 2 1]" || total != 8 {
		t.Errorf("requests %v total %d, want [5 2 1] 8", each, total)
	}
	var stats struct {
		Listeners []target.Stats `json:"listeners"`
	}
	getJSON(t, "http://"+p.AdminAddr+"/stats", &stats)
	if len(stats.Listeners) != 4 {
		t.Fatalf("/stats: %d listeners, want 3 and the total", len(stats.Listeners))
	}
	tot := stats.Listeners[3]
	if tot.Profile != target.TotalName || tot.Requests != 8 || tot.Connections != 1+3+1 {
		t.Errorf("/stats total %+v, want 8 requests over 5 connections", tot)
	}
	if l := stats.Listeners[0]; l.Profile != "backend-1" || l.Address != p.Backends[0].Addr || l.Requests != 5 {
		t.Errorf("/stats backend-1 %+v", l)
	}
	var secs struct {
		Backends []string               `json:"backends"`
		Seconds  []target.BackendSecond `json:"seconds"`
	}
	end := time.Now().Unix()
	getJSON(t, fmt.Sprintf("http://%s/seconds?from=%d&to=%d", p.AdminAddr, begin, end), &secs)
	var sum int64
	for _, s := range secs.Seconds {
		sum += s.Total
	}
	if len(secs.Backends) != 3 || len(secs.Seconds) != int(end-begin+1) || sum != 8 {
		t.Errorf("/seconds %+v: want 3 backends, %d seconds summing to 8", secs, end-begin+1)
	}
	if _, n := p.Between(time.Unix(begin, 0), time.Unix(end+1, 0)); n != 8 {
		t.Errorf("Between the test's seconds: %d, want 8", n)
	}
	// Close stops every listener and closes the kept-alive connection.
	p.Close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a kept-alive connection is still open after Close")
	}
	for _, addr := range append(p.Addrs(), p.AdminAddr) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s accepts after Close", addr)
		}
	}
}

// statusAndClose sends raw on a new connection and reads to the server's
// close: it fails the test when the server keeps the connection open.
func statusAndClose(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, raw)
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the HTTP/1.0 connection open: %v", err)
	}
	return string(b)
}

// TestBackendsPorts: consecutive ports from the first, a range past 65535
// refused, a taken port an error that closes what was started.
func TestBackendsPorts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p, err := target.StartBackends(target.BackendsConfig{Count: 2, Port: port})
	if err != nil {
		t.Skipf("ports %d-%d not free: %v", port, port+1, err)
	}
	want := []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", port+1)}
	if got := p.Addrs(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("addresses %v, want %v", got, want)
	}
	if _, err := target.StartBackends(target.BackendsConfig{Count: 1, Port: port + 1}); err == nil {
		t.Error("a taken port: no error")
	}
	p.Close()
	for _, cfg := range []target.BackendsConfig{{Count: 0}, {Count: 2, Port: 65535}, {Count: 1, Port: -1}} {
		if _, err := target.StartBackends(cfg); !errors.Is(err, target.ErrBackends) {
			t.Errorf("%+v: %v, want ErrBackends", cfg, err)
		}
	}
}
