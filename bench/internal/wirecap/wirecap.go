// Package wirecap captures a test's loopback traffic with tcpdump and reads
// it back, for the tests that join the phases the engines measure to the
// packets they time (bench/engine/cps, bench/engine/throughput). Captures need tcpdump
// and root: Require skips the test, with a message, without them (in CI a
// missing tcpdump fails: make deps-test installs it).
package wirecap

import (
	"bufio"
	"bytes"
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
	"syscall"
	"testing"
	"time"
)

// Require skips the test unless tcpdump is installed (in CI, where make
// deps-test installs it, its absence fails the test) and the test runs as
// root; it returns tcpdump's path.
func Require(t *testing.T) string {
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

// Start starts tcpdump (bin) on lo for TCP port port, bounded by packet
// count (MaxPackets) and by the test (killed when it ends), and waits until
// it listens.
func Start(t *testing.T, bin string, port int) *capture {
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

// Stop ends the capture (after the last packets are written) and returns
// the packets.
func (c *capture) Stop(t *testing.T) []Packet {
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

// Packet is what the tests need of a TCP segment.
type Packet struct {
	At               time.Time
	SrcPort, DstPort int
	SYN, ACK, FIN    bool
	RST              bool
	Payload          int  // TCP payload length
	First            byte // first payload byte (TLS record type)
}

// Opening returns when one connection's packets (in capture order) carry
// the client's SYN and the server's SYN/ACK, the server listening on
// server; zero for one not captured.
func Opening(pkts []Packet, server int) (syn, synack time.Time) {
	for _, p := range pkts {
		switch fromClient := p.DstPort == server; {
		case fromClient && p.SYN && !p.ACK && syn.IsZero():
			syn = p.At
		case !fromClient && p.SYN && p.ACK && synack.IsZero():
			synack = p.At
		}
	}
	return syn, synack
}

// readPcap reads a classic pcap file (microsecond or nanosecond, either byte
// order) of IPv4 TCP packets on Ethernet (DLT_EN10MB, what tcpdump writes for
// lo), Linux cooked (v1, v2), BSD loopback (DLT_NULL) or raw IP links.
func readPcap(b []byte) ([]Packet, error) {
	if len(b) < 24 {
		return nil, errors.New("pcap: short file")
	}
	var bo binary.ByteOrder
	nano := false
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		if m := o.Uint32(b); bo == nil && (m == 0xa1b2c3d4 || m == 0xa1b23c4d) {
			bo, nano = o, m == 0xa1b23c4d
		}
	}
	if bo == nil {
		return nil, fmt.Errorf("pcap: magic %x", b[:4])
	}
	// The link-layer header's length by link type: Ethernet, Linux cooked
	// v1 and v2, BSD loopback, raw IP (two numbers).
	lt := bo.Uint32(b[20:])
	link, ok := map[uint32]int{1: 14, 113: 16, 276: 20, 0: 4, 101: 0, 12: 0}[lt]
	if !ok {
		return nil, fmt.Errorf("pcap: link type %d", lt)
	}
	var out []Packet
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
		p := Packet{
			At:      time.Unix(sec, frac),
			SrcPort: int(binary.BigEndian.Uint16(tcp[0:])), DstPort: int(binary.BigEndian.Uint16(tcp[2:])),
			FIN: flags&0x01 != 0, SYN: flags&0x02 != 0, RST: flags&0x04 != 0, ACK: flags&0x10 != 0,
			Payload: total - ihl - doff,
		}
		if p.Payload > 0 && len(tcp) > doff {
			p.First = tcp[doff]
		}
		out = append(out, p)
	}
	return out, nil
}

// ByClientPort groups the packets of a capture on server's port by the
// client's port.
func ByClientPort(pkts []Packet, server int) map[int][]Packet {
	by := map[int][]Packet{}
	for _, p := range pkts {
		port := p.SrcPort
		if port == server {
			port = p.DstPort
		}
		by[port] = append(by[port], p)
	}
	return by
}

// Connections splits one client port's packets into its connections, at
// each client SYN.
func Connections(pkts []Packet, server int) [][]Packet {
	var out [][]Packet
	for _, p := range pkts {
		if p.DstPort == server && p.SYN && !p.ACK || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// Quantile returns the q-quantile of v (0 when empty).
func Quantile(v []time.Duration, q float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// Port returns the port of a host:port address.
func Port(t *testing.T, addr string) int {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	port, err := strconv.Atoi(addr[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Duration is the steady window of each captured run: 1 s, or
// TLSBENCH_WIRE_DURATION (a Go duration).
func Duration(t *testing.T) time.Duration {
	d := time.Second
	if v := os.Getenv("TLSBENCH_WIRE_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("TLSBENCH_WIRE_DURATION: %v", err)
		}
	}
	return d
}
