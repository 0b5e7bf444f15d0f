package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// netnsLab is a small network the test builds: the target's namespace
// holds a bridge (10.77.0.1/24); each agent's namespace is wired to it by a
// veth pair with its own address (10.77.0.10+i); the test's own namespace
// joins the bridge as 10.77.0.254, where the collector listens.
type netnsLab struct {
	prefix string
	agents int
}

const (
	labTargetIP = "10.77.0.1"
	labHostIP   = "10.77.0.254"
)

func (n *netnsLab) ns(name string) string { return n.prefix + name }

func ip(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func newNetnsLab(t *testing.T, agents int) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root; skipped (run as root to test agents in their own namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed; skipped (apt-get install iproute2)")
	}
	n := &netnsLab{prefix: fmt.Sprintf("tb%d", os.Getpid()%100000), agents: agents}
	tns := n.ns("t")
	t.Cleanup(func() {
		for i := range agents {
			exec.Command("ip", "netns", "del", n.ns(fmt.Sprint("a", i))).Run()
		}
		exec.Command("ip", "netns", "del", tns).Run()
		exec.Command("ip", "link", "del", n.prefix+"h").Run()
	})
	ip(t, "netns", "add", tns)
	ip(t, "-n", tns, "link", "set", "lo", "up")
	ip(t, "-n", tns, "link", "add", "br0", "type", "bridge")
	ip(t, "-n", tns, "addr", "add", labTargetIP+"/24", "dev", "br0")
	ip(t, "-n", tns, "link", "set", "br0", "up")
	link := func(ns, dev, peer, addr string) {
		// dev lives in ns (or here when ns is ""), peer joins the bridge.
		ip(t, "link", "add", dev, "type", "veth", "peer", "name", peer)
		ip(t, "link", "set", peer, "netns", tns)
		ip(t, "-n", tns, "link", "set", peer, "master", "br0")
		ip(t, "-n", tns, "link", "set", peer, "up")
		pre := []string{}
		if ns != "" {
			ip(t, "link", "set", dev, "netns", ns)
			pre = []string{"-n", ns}
		}
		ip(t, append(pre, "addr", "add", addr+"/24", "dev", dev)...)
		ip(t, append(pre, "link", "set", dev, "up")...)
	}
	link("", n.prefix+"h", n.prefix+"hb", labHostIP)
	for i := range agents {
		ns := n.ns(fmt.Sprint("a", i))
		ip(t, "netns", "add", ns)
		ip(t, "-n", ns, "link", "set", "lo", "up")
		link(ns, fmt.Sprintf("%sa%d", n.prefix, i), fmt.Sprintf("%sb%d", n.prefix, i), fmt.Sprintf("10.77.0.%d", 10+i))
	}
	return n
}

// TestAgentsInNetworkNamespaces: two agents, each in its own network
// namespace with its own address, measure a target in a third namespace
// and push their records to the coordinator in the test's namespace.
func TestAgentsInNetworkNamespaces(t *testing.T) {
	const agents = 2
	lab := newNetnsLab(t, agents)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")

	// The target, in its namespace; its admin port gives its counters.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := exec.Command("ip", "netns", "exec", lab.ns("t"), self, "serve", "--listen", labTargetIP, "--port", "0",
		"--profile", p.Name, "--hostname", "dut.test", "--ca-out", ca, "--admin", labTargetIP+":9440")
	srv.Env = append(os.Environ(), childEnv+"=1")
	served, err := testdut.StartServed(ctx, "the target in its namespace", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	addr := served.Addr(p.Name)
	if addr == "" || served.Admin != labTargetIP+":9440" {
		t.Fatalf("the target in its namespace: ready line %+v", served.Ready)
	}
	stats := func() target.Stats {
		t.Helper()
		c := http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + labTargetIP + ":9440/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var all struct{ Listeners []target.Stats }
		if err := json.NewDecoder(resp.Body).Decode(&all); err != nil || len(all.Listeners) != 1 {
			t.Fatalf("admin /stats: %v (%d listeners)", err, len(all.Listeners))
		}
		return all.Listeners[0]
	}

	coll := agent.NewCollector("")
	ln, err := net.Listen("tcp", labHostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Serve(ln, nil)()
	e := &agent.Executor{
		Local: &method.Local{Tool: toolInfo(), UserAgent: "tlsbench/test"},
		Launcher: &agent.Processes{
			Command: []string{self, "agent"}, Env: append(os.Environ(), childEnv+"=1"),
			Wrap: func(i int, argv []string) []string {
				return append([]string{"ip", "netns", "exec", lab.ns(fmt.Sprint("a", i))}, argv...)
			},
		},
		Agents: agents, Margin: 3 * time.Second, Tolerance: time.Second, Collector: coll, ReportURL: "http://" + ln.Addr().String(),
	}
	_, port, _ := net.SplitHostPort(addr)
	req := method.Request{
		Phase: vocab.Final,
		DUT:   plan.DUT{Name: "dut", URL: "https://dut.test:" + port + "/", Resolve: labTargetIP, CACert: ca},
		Test:  plan.Test{Engine: "cps", Path: "/1k"}, Profile: p,
		Concurrency: 4, Duration: 2 * time.Second, Warmup: 300 * time.Millisecond, ExpectSize: 1024,
	}
	before := stats()
	r, err := e.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	checkMerged(t, r, agents, before, stats())
	if r.Target.Address != net.JoinHostPort(labTargetIP, port) || r.Target.ServerName != "dut.test" {
		t.Errorf("target %s (SNI %s), want %s:%s (SNI dut.test)", r.Target.Address, r.Target.ServerName, labTargetIP, port)
	}
	t.Logf("%d agents in their namespaces: %.0f CPS merged, %d transactions, skews %v", agents, *r.CPS, r.Transactions, skews(r))
}
