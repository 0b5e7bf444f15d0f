package cps_test

// Packet-capture tests: the phases tlsbench measures are joined, connection
// by connection (by the client's source port), to the packets tcpdump saw on
// the loopback interface, and no phase may be shorter than the packets it
// times. They need tcpdump and root and are skipped, with a message,
// without them (in CI a missing tcpdump fails: make deps-test installs it).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// requireCapture skips the test unless tcpdump is installed (in CI, where
// make deps-test installs it, its absence fails the test) and the test runs
// as root.
func requireCapture(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tcpdump (Debian package tcpdump) is required in CI: %v", err)
		}
		t.Skipf("no packet capture: tcpdump (Debian package tcpdump) not installed: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("no packet capture: capturing on lo needs root")
	}
	return bin
}

// capture is a running tcpdump on lo for one server port.
type capture struct {
	cmd    *exec.Cmd
	file   string
	stderr bytes.Buffer
}

// maxPackets bounds a capture; a CPS connection is about 12 packets.
const maxPackets = 400_000

// startCapture starts tcpdump on lo for TCP port port, bounded by packet
// count (maxPackets) and by the test (killed when it ends), and waits until
// it listens.
func startCapture(t *testing.T, bin string, port int) *capture {
	t.Helper()
	c := &capture{file: filepath.Join(t.TempDir(), "cap.pcap")}
	c.cmd = exec.Command(bin, "-i", "lo", "-n", "-U", "--immediate-mode", "-B", "16384", "-s", "128",
		"--time-stamp-precision=nano", "-c", strconv.Itoa(maxPackets), "-w", c.file,
		fmt.Sprintf("tcp port %d", port))
	pr, pw := io.Pipe()
	c.cmd.Stderr = io.MultiWriter(&c.stderr, pw)
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "listening on") {
				ok = true
				ready <- true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatalf("tcpdump did not start: %s", c.stderr.String())
	}
	return c
}

// stop ends the capture (after the last packets are written) and returns
// the packets.
func (c *capture) stop(t *testing.T) []packet {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // the last packets reach the buffer
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	if s := c.stderr.String(); !strings.Contains(s, "\n0 packets dropped by kernel") {
		t.Logf("tcpdump: %s", s)
	}
	data, err := os.ReadFile(c.file)
	if err != nil {
		t.Fatal(err)
	}
	pkts, err := readPcap(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkts) >= maxPackets {
		t.Fatalf("the capture reached its bound of %d packets", maxPackets)
	}
	return pkts
}

// packet is what the tests need of a TCP segment.
type packet struct {
	at               time.Time
	srcPort, dstPort int
	syn, ack, fin    bool
	rst              bool
	payload          int  // TCP payload length
	first            byte // first payload byte (TLS record type)
}

// readPcap reads a classic pcap file (microsecond or nanosecond, either byte
// order) of IPv4 TCP packets on Ethernet (DLT_EN10MB, what tcpdump writes for
// lo), Linux cooked (v1, v2), BSD loopback (DLT_NULL) or raw IP links.
func readPcap(b []byte) ([]packet, error) {
	if len(b) < 24 {
		return nil, errors.New("pcap: short file")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	nano := false
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4:
	case 0xa1b23c4d:
		nano = true
	default:
		bo = binary.BigEndian
		switch binary.BigEndian.Uint32(b) {
		case 0xa1b2c3d4:
		case 0xa1b23c4d:
			nano = true
		default:
			return nil, fmt.Errorf("pcap: magic %x", b[:4])
		}
	}
	var link int
	switch lt := bo.Uint32(b[20:]); lt {
	case 1: // Ethernet
		link = 14
	case 113: // Linux cooked v1
		link = 16
	case 276: // Linux cooked v2
		link = 20
	case 0: // BSD loopback
		link = 4
	case 101, 12: // raw IP
		link = 0
	default:
		return nil, fmt.Errorf("pcap: link type %d", lt)
	}
	var out []packet
	for off := 24; off+16 <= len(b); {
		sec, frac := int64(bo.Uint32(b[off:])), int64(bo.Uint32(b[off+4:]))
		incl := int(bo.Uint32(b[off+8:]))
		off += 16
		if off+incl > len(b) {
			break // a truncated last record
		}
		rec := b[off : off+incl]
		off += incl
		if !nano {
			frac *= 1000
		}
		if len(rec) < link+20 {
			continue
		}
		ip := rec[link:]
		if ip[0]>>4 != 4 || ip[9] != 6 {
			continue // IPv4 TCP only
		}
		ihl := int(ip[0]&15) * 4
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if len(ip) < ihl+20 {
			continue
		}
		tcp := ip[ihl:]
		doff := int(tcp[12]>>4) * 4
		flags := tcp[13]
		p := packet{
			at:      time.Unix(sec, frac),
			srcPort: int(binary.BigEndian.Uint16(tcp[0:])), dstPort: int(binary.BigEndian.Uint16(tcp[2:])),
			fin: flags&0x01 != 0, syn: flags&0x02 != 0, rst: flags&0x04 != 0, ack: flags&0x10 != 0,
			payload: total - ihl - doff,
		}
		if p.payload > 0 && len(tcp) > doff {
			p.first = tcp[doff]
		}
		out = append(out, p)
	}
	return out, nil
}

// wirePhases are one connection's packet intervals, as the client's phases
// would time them; ok is false when a packet is missing.
type wirePhases struct {
	d         [vocab.NumTimed]time.Duration
	serverFIN bool // the server's FIN came before the client's
	ok        bool
}

// wireOf computes a connection's packet intervals from its packets (in
// capture order), the server listening on server:
//
//	connect    client SYN → server SYN/ACK
//	handshake  client's first data (ClientHello) → last data packet, either
//	           way, before the request
//	ttfb       request's first data packet (the client's first TLS
//	           application-data record) → server's first data packet after it
//	transfer   that packet → server's FIN
//	total      client SYN → server's FIN
func wireOf(pkts []packet, server int) wirePhases {
	var syn, synack, hello, lastHS, req, resp, sfin, cfin time.Time
	for _, p := range pkts {
		fromClient := p.dstPort == server
		switch {
		case fromClient && p.syn && !p.ack && syn.IsZero():
			syn = p.at
		case !fromClient && p.syn && p.ack && synack.IsZero():
			synack = p.at
		}
		if p.payload > 0 {
			switch {
			case fromClient && hello.IsZero():
				hello = p.at
			case fromClient && req.IsZero() && p.first == 0x17:
				req = p.at
			case !fromClient && !req.IsZero() && resp.IsZero():
				resp = p.at
			}
			if req.IsZero() && !(fromClient && p.first == 0x17) {
				lastHS = p.at
			}
		}
		if p.fin {
			if fromClient && cfin.IsZero() {
				cfin = p.at
			}
			if !fromClient && sfin.IsZero() {
				sfin = p.at
			}
		}
	}
	var w wirePhases
	for _, t := range []time.Time{syn, synack, hello, lastHS, req, resp, sfin} {
		if t.IsZero() {
			return w
		}
	}
	w.ok = true
	w.serverFIN = cfin.IsZero() || !cfin.Before(sfin)
	w.d[vocab.PhaseConnect] = synack.Sub(syn)
	w.d[vocab.PhaseHandshake] = lastHS.Sub(hello)
	w.d[vocab.PhaseTTFB] = resp.Sub(req)
	w.d[vocab.PhaseTransfer] = sfin.Sub(resp)
	w.d[vocab.PhaseTotal] = sfin.Sub(syn)
	return w
}

// wirePhaseList are the phases compared with the wire.
var wirePhaseList = []vocab.Phase{vocab.PhaseConnect, vocab.PhaseHandshake, vocab.PhaseTTFB, vocab.PhaseTransfer, vocab.PhaseTotal}

// traced collects the phases of every connection by local port, in the
// order the connections ended (a port may be used again once its
// connection is closed: no TIME_WAIT holds it).
type traced struct {
	mu sync.Mutex
	by map[int][][vocab.NumTimed]time.Duration
	n  int
}

func (tr *traced) trace(port int, s *metrics.Sample) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	d := s.Dur
	if s.Class != "" {
		d = [vocab.NumTimed]time.Duration{} // kept for the order, not compared
	}
	tr.by[port] = append(tr.by[port], d)
	tr.n++
}

// connections splits one port's packets into its connections, at each
// client SYN.
func connections(pkts []packet, server int) [][]packet {
	var out [][]packet
	for _, p := range pkts {
		if p.dstPort == server && p.syn && !p.ack || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// wireRun is one load against the target with its capture.
type wireRun struct {
	name string
	cfg  bench.Config
}

// wireReport is the comparison of one run with its packets.
type wireReport struct {
	joined      int
	shorter     [vocab.NumTimed]int // connections whose phase is shorter than its packets
	worst       [vocab.NumTimed]time.Duration
	phase       [vocab.NumTimed][]time.Duration
	wire        [vocab.NumTimed][]time.Duration
	clientFirst int // connections the client closed first
}

func quantile(v []time.Duration, q float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// measureWire runs r against addr (port server) with a capture and joins
// every connection's phases to its packets.
func measureWire(t *testing.T, bin string, op func(trace func(int, *metrics.Sample)) bench.Op, server int, r wireRun) *wireReport {
	t.Helper()
	tr := &traced{by: map[int][][vocab.NumTimed]time.Duration{}}
	capt := startCapture(t, bin, server)
	res, err := bench.Apply(context.Background(), r.cfg, op(tr.trace))
	if err != nil {
		t.Fatal(err)
	}
	pkts := capt.stop(t)
	if n := res.Snapshot.AllErrors; n > 0 {
		t.Errorf("%s: %d errors: %v", r.name, n, res.Snapshot.Examples)
	}
	byPort := map[int][]packet{}
	for _, p := range pkts {
		port := p.srcPort
		if port == server {
			port = p.dstPort
		}
		byPort[port] = append(byPort[port], p)
	}
	rep := &wireReport{}
	missing, reused := 0, 0
	for port, phs := range tr.by {
		conns := connections(byPort[port], server)
		if len(conns) != len(phs) {
			t.Errorf("%s: port %d: %d connections traced, %d in the capture", r.name, port, len(phs), len(conns))
			continue
		}
		if len(phs) > 1 {
			reused += len(phs) - 1
		}
		for i, ph := range phs {
			if ph[vocab.PhaseTotal] == 0 {
				continue // failed
			}
			w := wireOf(conns[i], server)
			if !w.ok {
				missing++
				if missing <= 3 {
					for _, p := range conns[i] {
						t.Logf("%s: port %d incomplete: %+v", r.name, port, p)
					}
				}
				continue
			}
			rep.joined++
			if !w.serverFIN {
				rep.clientFirst++
			}
			for _, p := range wirePhaseList {
				rep.phase[p] = append(rep.phase[p], ph[p])
				rep.wire[p] = append(rep.wire[p], w.d[p])
				if d := w.d[p] - ph[p]; d > 0 {
					rep.shorter[p]++
					rep.worst[p] = max(rep.worst[p], d)
				}
			}
		}
	}
	t.Logf("%s: %d connections traced, %d joined to their packets (%d without all their packets; %d on a port used again), %d packets",
		r.name, tr.n, rep.joined, missing, reused, len(pkts))
	if rep.joined == 0 || missing > 0 {
		t.Fatalf("%s: %d of %d connections joined to their packets", r.name, rep.joined, tr.n)
	}
	t.Logf("%-10s %14s %14s %14s %14s %9s", "phase", "packets p50", "tlsbench p50", "packets p99", "tlsbench p99", "shorter")
	for _, p := range wirePhaseList {
		t.Logf("%-10s %14s %14s %14s %14s %8.2f%%", p, quantile(rep.wire[p], .5), quantile(rep.phase[p], .5),
			quantile(rep.wire[p], .99), quantile(rep.phase[p], .99), 100*float64(rep.shorter[p])/float64(rep.joined))
	}
	return rep
}

// wireDuration is the steady window of each captured run; longer with
// TLSBENCH_WIRE_DURATION (a Go duration).
func wireDuration(t *testing.T) time.Duration {
	d := time.Second
	if v := os.Getenv("TLSBENCH_WIRE_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("TLSBENCH_WIRE_DURATION: %v", err)
		}
	}
	return d
}

// wireOverhead is how much more than the packets tlsbench's p50 may be per
// phase at -c 1: the client's system calls and wake-ups on a shared
// machine (measured: see docs/METRICS.md).
const wireOverhead = time.Millisecond

// transferMerged: the transfer starts at the kernel's receive time of the
// response's first segment. When the client is slow to read it and a later
// segment (the close_notify) arrives first, the kernel merges the two in its
// receive queue and the merged one carries the later time: that transfer
// may then be shorter than its packets by the server's gap between response
// and close_notify (tens of µs). Measured in two 3 s runs: 2 of 1,926 and
// 1 of 3,115 connections at -c 1, 0 and 1 of 600 at --rate 200, none at
// -c 8. Up to 1% of the connections are tolerated for the transfer alone;
// every other phase must never be shorter.

// TestPhasesMatchTheWire runs CPS against the reference target at -c 1, -c 8
// and --rate 200 under a packet capture: for every connection and phase, the
// phase is at least its packet interval; at -c 1 the medians differ by at
// most wireOverhead; the server closed first on every connection; and the
// generator holds no TIME_WAIT socket of the run afterwards.
func TestPhasesMatchTheWire(t *testing.T) {
	bin := requireCapture(t)
	p, err := profiles.Builtin().Get(profiles.SeedProfiles[1])
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	addr := tg.Listeners[0].Addr
	server := portOf(t, addr)
	op := func(trace func(int, *metrics.Sample)) bench.Op {
		cfg := cps.Defaults()
		cfg.Profile, cfg.Address, cfg.Host = p, addr, "localhost"
		cfg.TLS = profiles.ClientOptions{ServerName: "localhost", RootCAs: tg.CA.Pool()}
		cfg.ExpectSize = 1024
		cfg.Trace = trace
		o, err := cps.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	d := wireDuration(t)
	runs := []wireRun{
		{"-c 1", bench.Config{Concurrency: 1, Duration: d, Drain: 10 * time.Second}},
		{"-c 8", bench.Config{Concurrency: 8, Duration: d, Drain: 10 * time.Second}},
		{"--rate 200", bench.Config{Concurrency: 64, Rate: 200, Duration: d, Drain: 10 * time.Second}},
	}
	for _, r := range runs {
		rep := measureWire(t, bin, op, server, r)
		for _, ph := range wirePhaseList {
			n, allowed := rep.shorter[ph], 0
			if ph == vocab.PhaseTransfer {
				allowed = rep.joined / 100
			}
			if n > allowed {
				t.Errorf("%s: %s shorter than its packets in %d of %d connections (by up to %s)", r.name, ph, n, rep.joined, rep.worst[ph])
			} else if n > 0 {
				t.Logf("%s: %s shorter than its packets in %d of %d connections (by up to %s): segments merged by the kernel before the client read them (see transferMerged)",
					r.name, ph, n, rep.joined, rep.worst[ph])
			}
		}
		if rep.clientFirst > 0 {
			t.Errorf("%s: the client closed first in %d of %d connections", r.name, rep.clientFirst, rep.joined)
		}
		if r.cfg.Concurrency == 1 && r.cfg.Rate == 0 {
			for _, ph := range wirePhaseList {
				if diff := quantile(rep.phase[ph], .5) - quantile(rep.wire[ph], .5); diff > wireOverhead {
					t.Errorf("%s: %s p50 exceeds its packets' by %s, more than %s", r.name, ph, diff, wireOverhead)
				}
			}
		}
		if n := timeWait(t, server); n > 0 {
			t.Errorf("%s: the generator holds %d TIME_WAIT sockets to port %d", r.name, n, server)
		}
	}
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	port, err := strconv.Atoi(addr[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// timeWait counts the client side's TIME_WAIT sockets to port (ss, Debian
// package iproute2): those whose peer is the server port.
func timeWait(t *testing.T, port int) int {
	t.Helper()
	out, err := exec.Command("ss", "-Htan", "state", "time-wait", fmt.Sprintf("( dport = :%d )", port)).Output()
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	return bytes.Count(out, []byte("\n"))
}

// closeRun runs CPS against addr (4 workers, no warm-up, for d) and returns
// the operation's close counts and the run's transactions.
func closeRun(t *testing.T, p *profiles.Profile, addr string, pool *x509.CertPool, linger0 bool, d time.Duration) (metrics.Closes, int64) {
	t.Helper()
	cfg := cps.Defaults()
	cfg.Profile, cfg.Address, cfg.Host = p, addr, "localhost"
	cfg.TLS = profiles.ClientOptions{ServerName: "localhost", RootCAs: pool}
	cfg.ExpectSize = 1024
	cfg.LingerZero = linger0
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bench.Apply(context.Background(), bench.Config{Concurrency: 4, Duration: d, Drain: 10 * time.Second}, op)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if s.AllErrors > 0 || s.AllOK == 0 {
		t.Fatalf("%d transactions, %d errors %v", s.AllOK, s.AllErrors, s.Examples)
	}
	return op.Closes(), s.AllOK
}

// TestServerClosesFirst: the client waits for the server's TCP FIN after its
// close_notify, so that after a CPS run against the reference target and
// against nginx the generator holds no TIME_WAIT socket of the run (counted
// with ss on the run's dedicated server port); with --linger0 neither side
// does. Before the wait, a one-second run left hundreds.
func TestServerClosesFirst(t *testing.T) {
	if _, err := exec.LookPath("ss"); err != nil {
		t.Skipf("ss (Debian package iproute2) not installed: %v", err)
	}
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, addr string, pool *x509.CertPool, wantCloseNotify bool) {
		port := portOf(t, addr)
		for _, linger0 := range []bool{false, true} {
			closes, n := closeRun(t, p, addr, pool, linger0, time.Second)
			tw := timeWait(t, port)
			t.Logf("linger0 %v: %d transactions; closes %+v; generator TIME_WAIT sockets to port %d: %d", linger0, n, closes, port, tw)
			if tw != 0 {
				t.Errorf("linger0 %v: the generator holds %d TIME_WAIT sockets of the run", linger0, tw)
			}
			if closes.ClientFirst != 0 || closes.ServerFirst != n {
				t.Errorf("linger0 %v: closes %+v, want the server first on all %d", linger0, closes, n)
			}
			if wantCloseNotify && closes.NoCloseNotify != 0 {
				t.Errorf("linger0 %v: %d connections without close_notify", linger0, closes.NoCloseNotify)
			}
		}
	}
	t.Run("reference", func(t *testing.T) {
		tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		check(t, tg.Listeners[0].Addr, tg.CA.Pool(), true)
	})
	t.Run("nginx", func(t *testing.T) {
		addr, pool := startNginx(t)
		check(t, addr, pool, false)
	})
}

// startNginx starts nginx (Debian package nginx) serving /1k over TLS 1.2
// with ECDHE-ECDSA-AES128-SHA256 on P-256 on a free loopback port, one
// worker, no session cache or tickets; it is stopped when the test ends.
func startNginx(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, NoFile: 1088, Servers: []testdut.NginxServer{
		{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1"},
	}})
	return n.Addrs[0], ca.Pool()
}
