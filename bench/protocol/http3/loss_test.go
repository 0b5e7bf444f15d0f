package http3_test

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// lossyProxy relays UDP datagrams between clients and the server at to,
// over an upstream socket per client address, and drops every nth datagram
// it is given (either way) and each client's first (its first Initial: the
// handshake goes on only after a PTO); nth 0 drops none. It stops at the
// test's end.
func lossyProxy(t *testing.T, to string, nth int) string {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	server, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	drop := func() bool {
		mu.Lock()
		defer mu.Unlock()
		n++
		return nth > 0 && n%nth == 0
	}
	ups := map[string]*net.UDPConn{}
	t.Cleanup(func() {
		_ = front.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, up := range ups {
			_ = up.Close()
		}
	})
	back := func(up *net.UDPConn, client *net.UDPAddr) { // the server's datagrams to client
		buf := make([]byte, 2048)
		for {
			k, err := up.Read(buf)
			if err != nil {
				return
			}
			if !drop() {
				_, _ = front.WriteToUDP(buf[:k], client)
			}
		}
	}
	go func() {
		buf := make([]byte, 2048)
		for {
			k, client, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			mu.Lock()
			up, first := ups[client.String()], false
			if up == nil {
				if up, err = net.DialUDP("udp", nil, server); err != nil {
					mu.Unlock()
					return
				}
				ups[client.String()], first = up, true
				go back(up, client)
			}
			mu.Unlock()
			if !(first && nth > 0) && !drop() {
				_, _ = up.Write(buf[:k])
			}
		}
	}()
	return front.LocalAddr().String()
}

// TestLosses: the record's QUIC account of losses is real. Through a proxy
// that drops each connection's first datagram and every 5th, a cps run and
// a throughput run succeed; cps counts a handshake PTO on every connection
// (its lost Initial is sent again on a PTO, never declared lost), and
// throughput packets declared lost (it does not count PTOs), in the
// per-second series as in the record, which is valid. Through the same
// proxy dropping none, no packet is lost and PTOs are rare: a busy
// loopback's PTO is about 1 ms, which a server's pause can exceed.
func TestLosses(t *testing.T) {
	srv := serveH3(t, nil, nil)
	for _, tc := range []struct {
		e    vocab.Engine
		path string
		size int64
		nth  int
	}{
		{vocab.EngineCPS, "/1k", 1024, 5},
		{vocab.EngineThroughput, "/bytes/3000", 3000, 5},
		{vocab.EngineCPS, "/1k", 1024, 0},
		{vocab.EngineThroughput, "/bytes/3000", 3000, 0},
	} {
		s := spec(tc.e, lossyProxy(t, srv.addr, tc.nth), srv.ca)
		s.Path, s.ExpectSize, s.Duration = tc.path, tc.size, time.Second
		r, err := runner.Run(context.Background(), &s)
		if err != nil {
			t.Fatal(err)
		}
		q := r.QUIC
		if q == nil || !r.Preflight.OK || r.Whole.Transactions == 0 {
			t.Fatalf("%s, every %d dropped: quic %+v, preflight %+v, %d transactions", tc.e, tc.nth, q,
				r.Preflight, r.Whole.Transactions)
		}
		var lost, ptos int64
		for _, sec := range r.Series {
			lost, ptos = lost+sec.QUICPacketsLost, ptos+sec.QUICPTOs
		}
		t.Logf("%s, every %d dropped: %d transactions, %d errors; quic %+v, PTOs %+v; series: %d lost, %d PTOs",
			tc.e, tc.nth, r.Whole.Transactions, r.Errors.Total, *q, q.PTOs, lost, ptos)
		p := q.PTOs
		if tc.e == vocab.EngineCPS && p == nil {
			t.Fatal("cps: PTOs not counted")
		}
		if tc.e == vocab.EngineThroughput { // not counted (their cost per packet)
			if p != nil || ptos != 0 {
				t.Errorf("throughput: PTOs counted")
			}
			p = &metrics.QUICPTOs{}
		}
		if tc.nth == 0 {
			if q.PacketsLost+lost != 0 || p.Connections > q.Connections/4 {
				t.Errorf("%s, no drop: losses counted", tc.e)
			}
			continue
		}
		if lost > q.PacketsLost || ptos > p.Count || tc.e == vocab.EngineThroughput && (q.PacketsLost == 0 || lost == 0) ||
			tc.e == vocab.EngineCPS && (p.Handshake < q.Connections || p.Connections != q.Connections || ptos == 0) {
			t.Errorf("%s, every %d dropped: losses not counted", tc.e, tc.nth)
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Valid(t, schemas.Run, "the record", data)
		if _, err := metrics.DecodeRun(data); err != nil {
			t.Errorf("%s: %v", tc.e, err)
		}
	}
}
