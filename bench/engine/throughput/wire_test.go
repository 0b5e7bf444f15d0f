package throughput_test

// The packet-capture test of the throughput engine, in the style of
// bench/engine/cps's: every request's phases joined to its packets on lo
// (bench/internal/wirecap), none shorter than the packets it times.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/internal/wirecap"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// tracedReq is one traced sample.
type tracedReq struct {
	opened bool
	d      [vocab.NumTimed]time.Duration
	first  tlsconn.FirstByte
	failed bool
}

// wireReq is one request's packet intervals on a kept-alive connection:
//
//	connect    client SYN → server SYN/ACK (the request that opened it)
//	handshake  ClientHello → last handshake packet (likewise)
//	ttfb       the request's packet → the server's first data packet after it
//	transfer   that packet → the server's last data packet before the next
//	           request (or the connection's end)
//	total      the request's packet (or, opening it, the client SYN) → that
//	           last packet
type wireReq struct {
	d [vocab.NumTimed]time.Duration
	// The request's packet (or, opening the connection, the client SYN),
	// the response's first, second and last data packets.
	start, req, resp, second, last time.Time
}

// wireReqs splits one connection's packets into its requests.
func wireReqs(pkts []wirecap.Packet, server int) []wireReq {
	syn, synack := wirecap.Opening(pkts, server)
	var hello, lastHS time.Time
	var out []wireReq
	for _, p := range pkts {
		fromClient := p.DstPort == server
		if fromClient && (p.FIN || p.RST) {
			break // what the server sends after the client's close answers no request
		}
		if p.Payload == 0 {
			continue
		}
		switch {
		case fromClient && hello.IsZero():
			hello = p.At
		case fromClient && p.First == 0x17: // a request
			r := wireReq{start: p.At, req: p.At}
			if len(out) == 0 {
				r.d[vocab.PhaseConnect] = synack.Sub(syn)
				r.d[vocab.PhaseHandshake] = lastHS.Sub(hello)
				r.start = syn
			}
			out = append(out, r)
		case !fromClient && len(out) > 0:
			r := &out[len(out)-1]
			switch {
			case r.resp.IsZero():
				r.resp = p.At
			case r.second.IsZero():
				r.second = p.At
			}
			r.last = p.At
		}
		if len(out) == 0 {
			lastHS = p.At
		}
	}
	for i := range out {
		r := &out[i]
		if !r.resp.IsZero() {
			r.d[vocab.PhaseTTFB] = r.resp.Sub(r.req)
			r.d[vocab.PhaseTransfer] = r.last.Sub(r.resp)
			r.d[vocab.PhaseTotal] = r.last.Sub(r.start)
		}
	}
	return out
}

var wirePhases = []vocab.Phase{vocab.PhaseConnect, vocab.PhaseHandshake, vocab.PhaseTTFB, vocab.PhaseTransfer, vocab.PhaseTotal}

// TestPhasesMatchTheWire: 3 workers, 6 requests each on connections kept
// alive for 3 requests (so 6 connections, one of them opened ahead of its
// first request), against the reference target under a packet capture.
// Counts exact: as many connections and requests in the capture as the
// engine made; for every request every phase is at least its packets,
// except a transfer shortened only by its stamp's lag (see bench/engine/cps's
// stampLag) and ttfb and transfer of a first byte flagged merged (then
// ttfb + transfer is at least request → response end).
func TestPhasesMatchTheWire(t *testing.T) {
	bin := wirecap.Require(t)
	for _, path := range []string{"/1k", "/1m"} {
		t.Run(path[1:], func(t *testing.T) {
			p := refProfile(t, profiles.SeedProfiles[1])
			tg, cfg := refTarget(t, p)
			server := wirecap.Port(t, tg.Listener(p.Name).Addr)
			cfg.Path = path
			cfg.RequestsPerConn = 3
			var mu sync.Mutex
			by := map[int][]tracedReq{}
			cfg.Trace = func(port int, s *metrics.Sample, first tlsconn.FirstByte) {
				mu.Lock()
				defer mu.Unlock()
				by[port] = append(by[port], tracedReq{opened: s.Opened, d: s.Dur, first: first, failed: s.Class != ""})
			}
			op, err := throughput.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			const workers, requests = 3, 6
			capt := wirecap.Start(t, bin, server)
			ctx := context.Background()
			do := func(i, k int, w engine.Worker) {
				s := metrics.Sample{Start: time.Now()}
				w.Do(ctx, &s)
				if s.Class != "" {
					t.Errorf("worker %d request %d: %s: %v", i, k, s.Class, s.Err)
				}
			}
			ws := make([]engine.Worker, workers)
			for i := range ws {
				if ws[i], err = op.NewWorker(i); err != nil {
					t.Fatal(err)
				}
			}
			// Worker 0's first connection is opened ahead of its first
			// request, whose total then starts at the request.
			var s metrics.Sample
			if !ws[0].(engine.Opener).Open(ctx, &s) {
				t.Fatalf("open: %v", s.Err)
			}
			do(0, 0, ws[0])
			var preopened int
			for port := range by {
				preopened = port
			}
			var wg sync.WaitGroup
			for i, w := range ws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := 0; k < requests; k++ {
						if i > 0 || k > 0 {
							do(i, k, w)
						}
					}
					w.(interface{ Close() error }).Close()
				}()
			}
			wg.Wait()
			pkts := capt.Stop(t)
			byPort := wirecap.ByClientPort(pkts, server)
			var phase, wire [vocab.NumTimed][]time.Duration
			var shorter [vocab.NumTimed]int
			var worst [vocab.NumTimed]time.Duration
			nconns, nreqs, merged, late := 0, 0, 0, 0
			for port, reqs := range by {
				conns := wirecap.Connections(byPort[port], server)
				var groups [][]tracedReq
				for _, r := range reqs {
					if r.opened || len(groups) == 0 {
						groups = append(groups, nil)
					}
					groups[len(groups)-1] = append(groups[len(groups)-1], r)
				}
				if len(groups) != len(conns) {
					t.Errorf("port %d: %d connections traced, %d in the capture", port, len(groups), len(conns))
					continue
				}
				for i, g := range groups {
					wreqs := wireReqs(conns[i], server)
					if len(wreqs) != len(g) {
						t.Errorf("port %d connection %d: %d requests traced, %d in the capture", port, i, len(g), len(wreqs))
						continue
					}
					nconns++
					for k, tr := range g {
						nreqs++
						w := wreqs[k]
						if port == preopened && i == 0 && k == 0 {
							w.d[vocab.PhaseTotal] = w.last.Sub(w.req)
						}
						if tr.failed || w.resp.IsZero() {
							t.Errorf("port %d connection %d request %d: failed or no response", port, i, k)
							continue
						}
						for _, p := range wirePhases {
							phase[p] = append(phase[p], tr.d[p])
							wire[p] = append(wire[p], w.d[p])
						}
						if tr.first.Merged {
							merged++
							if w.second.IsZero() || !w.second.Before(tr.first.Read) {
								t.Errorf("port %d connection %d request %d: flagged merged without a second segment before the first read", port, i, k)
							}
							if tr.d[vocab.PhaseTTFB]+tr.d[vocab.PhaseTransfer] < w.d[vocab.PhaseTTFB]+w.d[vocab.PhaseTransfer] {
								t.Errorf("port %d connection %d request %d: merged: ttfb + transfer %s shorter than its packets' %s", port, i, k,
									tr.d[vocab.PhaseTTFB]+tr.d[vocab.PhaseTransfer], w.d[vocab.PhaseTTFB]+w.d[vocab.PhaseTransfer])
							}
						}
						lag := tr.first.Arrived.Sub(w.resp)
						for _, p := range wirePhases {
							if tr.first.Merged && (p == vocab.PhaseTTFB || p == vocab.PhaseTransfer) {
								continue
							}
							if k > 0 && (p == vocab.PhaseConnect || p == vocab.PhaseHandshake) {
								continue
							}
							d := w.d[p] - tr.d[p]
							if d > 0 && p == vocab.PhaseTransfer && lag >= d {
								late++
								continue
							}
							if d > 0 {
								shorter[p]++
								worst[p] = max(worst[p], d)
							}
						}
					}
				}
			}
			if nconns != workers*requests/cfg.RequestsPerConn || nreqs != workers*requests {
				t.Errorf("%d connections and %d requests joined to their packets, want %d and %d", nconns, nreqs, workers*requests/cfg.RequestsPerConn, workers*requests)
			}
			t.Logf("%s: %d connections, %d requests joined; %d packets; %d first bytes flagged merged; %d transfers shorter only by their stamp's lag",
				path, nconns, nreqs, len(pkts), merged, late)
			t.Logf("%-10s %14s %14s %14s %14s %9s", "phase", "packets p50", "tlsbench p50", "packets p99", "tlsbench p99", "shorter")
			for _, p := range wirePhases {
				t.Logf("%-10s %14s %14s %14s %14s %9d", p, wirecap.Quantile(wire[p], .5), wirecap.Quantile(phase[p], .5),
					wirecap.Quantile(wire[p], .99), wirecap.Quantile(phase[p], .99), shorter[p])
				if shorter[p] > 0 {
					t.Errorf("%s shorter than its packets in %d requests (by up to %s)", p, shorter[p], worst[p])
				}
			}
		})
	}
}
