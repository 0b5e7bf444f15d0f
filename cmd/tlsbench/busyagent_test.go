package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// busyShardEnv, set to a shard index, makes the agent process of that shard
// (a child of the test binary acting as tlsbench) CPU-bound: one core
// (GOMAXPROCS 1) and a goroutine that keeps it busy for at most
// busyAgentFor, beside the agent's own work.
const busyShardEnv = "TLSBENCH_TEST_BUSY_SHARD"

const busyAgentFor = 2 * time.Minute

// startBusyAgent starts the busy goroutine when this process is the agent
// of the shard busyShardEnv names (TestMain, child processes only).
func startBusyAgent() {
	shard := os.Getenv(busyShardEnv)
	if shard == "" || len(os.Args) < 2 || os.Args[1] != "agent" || os.Getenv(agent.EnvShard) != shard {
		return
	}
	runtime.GOMAXPROCS(1)
	go func() {
		x := 0
		for end := time.Now().Add(busyAgentFor); ; x++ {
			if x%(1<<16) == 0 && time.Now().After(end) {
				return
			}
		}
	}()
}

// TestQualifyBusyAgent: a campaign made by 2 agent processes, the second
// of them CPU-bound (its one core kept busy) and the first of 8 cores
// (GOMAXPROCS 8) nearly idle (one connection to a target that waits 200 ms
// before each response). The merged record's utilization, the CPU-weighted
// mean (busy·1 + idle·8) ÷ 9, stays below the plan's max_generator_cpu of
// 15% (at most (100% + 8 × 2%) ÷ 9 = 12.9%), yet the run is rejected as
// generator-bound, the busy agent named in the reason, as long as the busy
// agent got more than 15% of its core (a loaded 2-core machine gave it
// 39%).
func TestQualifyBusyAgent(t *testing.T) {
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, tg.CA.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, fmt.Appendf(nil, `name: busy
duts: [{name: dut, url: "https://localhost:%s/", cacert: %q}]
tests:
  - {engine: cps, profiles: [%s]}
method:
  duration: 1s
  warmup: 200ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 2}, probe_duration: 1s, min_gain: 5%%}
  accept: {max_generator_cpu: 15%%}
  final: {min_accepted: 1, max_runs: 1, tolerance: 60%%}
`, portOf(tg.Listener(p.Name).Addr), ca, p.Name), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(busyShardEnv, "1")
	t.Setenv("GOMAXPROCS", "8") // the agents' (the busy one sets 1)
	out := filepath.Join(dir, "campaign")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, _, stderr := invoke(t, ctx, "qualify", "-q", "--plan", plan, "--out", out,
		"--executor", "processes", "--agents", "2", "--start-margin", "1s")
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatalf("exit %d, %s: %v", code, stderr, err)
	}
	judged := 0
	for _, e := range entries {
		if e.Run == nil || len(e.Run.Agents) != 2 {
			continue // the preliminary connection
		}
		judged++
		busy, idle := e.Run.Agents[1].Client, e.Run.Agents[0].Client
		t.Logf("%s run: busy agent %.1f%% of %d cores, idle agent %.1f%% of %d, merged %.1f%%; reasons %q",
			e.Phase, 100*busy.Utilization, busy.Cores, 100*idle.Utilization, idle.Cores, 100*e.Run.Client.Utilization, e.Reasons)
		if busy.Cores != 1 || idle.Cores != 8 || busy.Utilization <= 0.15 || e.Run.Client.Utilization >= 0.15 {
			t.Fatalf("busy agent %.1f%% of %d cores, idle agent %.1f%% of %d, merged %.1f%%: "+
				"want the busy agent above 15%% of 1 core, the merged mean below, the idle agent of 8 cores",
				100*busy.Utilization, busy.Cores, 100*idle.Utilization, idle.Cores, 100*e.Run.Client.Utilization)
		}
		want := fmt.Sprintf("generator-bound: agent %s (shard 1/2): its CPU was %.0f%% of 1 cores, above 15%%",
			e.Run.Agents[1].Name, 100*busy.Utilization)
		if e.Accepted || !strings.Contains(strings.Join(e.Reasons, "; "), want) {
			t.Errorf("%s run accepted %v, reasons %q: want it rejected with %q", e.Phase, e.Accepted, e.Reasons, want)
		}
	}
	if judged == 0 {
		t.Fatalf("exit %d, %s: no run made by 2 agents in the ledger", code, stderr)
	}
}
