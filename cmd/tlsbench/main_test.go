package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestMain lets the test binary act as tlsbench when qualify starts it as
// the reference target's process.
func TestMain(m *testing.M) {
	if dir := os.Getenv(fakeKubectlEnv); dir != "" {
		os.Exit(fakeKubectl(dir, os.Args[1:]))
	}
	if os.Getenv(childEnv) == "1" {
		startBusyAgent() // TestQualifyBusyAgent's CPU-bound agent
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// invoke runs the CLI in-process and returns exit code, stdout and stderr.
func invoke(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	validateOutputs(t, args, out.String()) // every JSON written is valid against its schema
	return code, out.String(), errb.String()
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	badProfile := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badProfile, []byte("name: x\nmin_version: TLS1.2\nmax_version: TLS1.2\nciphers: [AES128-SHA]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // in the one-line message
	}{
		{[]string{}, ""}, // no command: usage
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},                             // unknown command
		{[]string{"cps", "--profile", "nope"}, `unknown profile "nope"`},                     // unknown profile
		{[]string{"cps", "http://example.test/"}, "scheme must be https"},                    // plain HTTP
		{[]string{"cps", "https://"}, "no host"},                                             // no host
		{[]string{"cps", "https://a b/"}, "bad URL"},                                         // malformed URL
		{[]string{"cps", "https://h:99999/"}, "port"},                                        // port out of range
		{[]string{"cps", "https://h/", "https://i/"}, "one URL at most"},                     // two URLs
		{[]string{"cps", "-d", "soon"}, "duration"},                                          // bad duration
		{[]string{"cps", "-d", "0s"}, "duration must be positive"},                           // zero duration
		{[]string{"cps", "--warmup", "-1s"}, "--warmup must not be negative"},                // negative warm-up
		{[]string{"cps", "-c", "0"}, "concurrency must be at least 1"},                       // no connections
		{[]string{"cps", "--rate", "-5"}, "rate must not be negative"},                       // negative rate
		{[]string{"cps", "--cacert", filepath.Join(dir, "missing.pem")}, "--cacert"},         // unreadable CA file
		{[]string{"cps", "--cacert", notPEM}, "no PEM certificate"},                          // CA file without PEM
		{[]string{"cps", "--resolve", "h:443"}, "bad --resolve"},                             // too few fields
		{[]string{"cps", "--resolve", "h:x:127.0.0.1"}, "bad --resolve"},                     // bad port
		{[]string{"cps", "--resolve", "h:443:not-an-ip"}, "bad --resolve"},                   // bad address
		{[]string{"cps", "https://h/", "--resolve", ":443:127.0.0.1"}, "bad --resolve"},      // no host
		{[]string{"cps", "--source", "127.0.0.300"}, "bad --source"},                         // bad source
		{[]string{"cps", "--source", "127.0.0.9-127.0.0.1"}, "bad --source"},                 // empty range
		{[]string{"cps", "--source", "10.0.0.0/8"}, "bad --source"},                          // too many sources
		{[]string{"cps", "-H", "NoColon"}, "bad --header"},                                   // header without colon
		{[]string{"cps", "--connect-timeout", "0s"}, "--connect-timeout must be positive"},   // zero deadline
		{[]string{"cps", "--no-such-flag"}, "unknown flag"},                                  // unknown flag
		{[]string{"cps", "--profile-file", badProfile}, "bad.yaml:4"},                        // bad profile file: file and line
		{[]string{"cps", "--profile-file", filepath.Join(dir, "none.yaml")}, "profile file"}, // missing profile file
		{[]string{"profiles", "show", "nope"}, `unknown profile "nope"`},                     // show unknown profile
		{[]string{"profiles", "frob"}, "unknown arguments"},                                  // bad subcommand
		{[]string{"serve", "--port", "70000"}, "bad --port"},                                 // port out of range
		{[]string{"serve", "--listen", "nowhere"}, "bad --listen"},                           // not an address
		{[]string{"serve", "--cert", "x.pem"}, "--cert and --key go together"},               // cert without key
		{[]string{"serve", "--profile", "nope"}, `unknown profile "nope"`},                   // unknown profile
		{[]string{"serve", "extra"}, "unexpected arguments"},                                 // stray argument
		{[]string{"version", "extra"}, "takes no arguments"},
		{[]string{"throughput", "--pipeline", "0"}, "--pipeline must be at least 1"},
		{[]string{"serve", "--fault", "explode"}, `unknown fault "explode"`},
		{[]string{"serve", "--fault", "alert:2"}, "fraction"},
		{[]string{"serve", "--slow-delay", "0s"}, "--slow-delay"},
		{[]string{"serve", "--delay", "-1s"}, "--delay"},
		{[]string{"qualify", "--plan", filepath.Join(dir, "none.yaml")}, "plan"},                          // missing plan
		{[]string{"qualify", "--plan", badProfile}, "bad.yaml:2: field min_version is not a known field"}, // not a plan
		{[]string{"qualify", "--dut", "nourl"}, "bad --dut"},                                              // NAME=URL
		{[]string{"qualify", "--dut", "a=http://x/"}, "scheme must be https"},                             // plain HTTP DUT
		{[]string{"qualify", "--resume", dir, "--quick"}, "--resume takes the plan"},                      // conflicting flags
		{[]string{"qualify", "--resume", filepath.Join(dir, "nothing")}, "--resume"},                      // no campaign there
		{[]string{"throughput", "--requests-per-conn", "-1"}, "--requests-per-conn must not be negative"},
		{[]string{"throughput", "--verify-body", "md5:00"}, "--verify-body"},
		{[]string{"throughput", "ftp://h/"}, "scheme must be https"},
		{[]string{"throughput", "--profile", "nope"}, `unknown profile "nope"`},
		{[]string{"serve", "--plain", "--profile", "tls13-x25519mlkem768"}, "--plain serves no TLS"}, // stray argument
		// Agents.
		{[]string{"cps", "https://h/", "--shard", "1"}, "bad --shard"},
		{[]string{"cps", "https://h/", "--shard", "4/4"}, "want 0 ≤ i < N"},
		{[]string{"cps", "https://h/", "--shard", "0/8", "-c", "4"}, "cannot be divided among 8 agents"},
		{[]string{"cps", "https://h/", "--shard", "0/2", "-c", "4", "--source", "127.0.0.2"}, "source addresses cannot be divided"},
		{[]string{"cps", "--shard", "0/2"}, "need a URL"},
		{[]string{"cps", "https://h/", "--start-at", "tomorrow"}, "bad --start-at"},
		{[]string{"cps", "https://h/", "--start-tolerance", "-1s"}, "--start-tolerance must not be negative"},
		{[]string{"cps", "https://h/", "--report-to", "ftp://c/"}, "bad --report-to"},
		{[]string{"cps", "https://h/", "--report-to", "http://c/", "--profile", "rsa2048-aes128-gcm-sha256", "--profile", "ecdhe-ecdsa-aes128-sha256-p256"}, "take one --profile"},
		{[]string{"qualify", "--executor", "cloud"}, "bad --executor"},
		{[]string{"qualify", "--agents", "3"}, "need --executor processes or kubernetes"},
		{[]string{"qualify", "--executor", "processes", "--agents", "-1"}, "--agents must be at least 1"},
		{[]string{"qualify", "--executor", "kubernetes"}, "needs --agents N"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2"}, "needs --image"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1"}, "needs --collect-url"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1", "--collect-url", "http://10.0.0.5:7070"}, "reference target runs on this machine"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1", "--collect-url", "10.0.0.5", "--dut", "a=https://a/"}, "bad --collect-url"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1", "--collect-url", "http://c:1", "--dut", "a=https://a/", "--node-selector", "pool"}, "bad --node-selector"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1", "--collect-url", "http://c:1", "--dut", "a=https://a/", "--agent-cpu", "lots"}, "bad CPU quantity"},
		{[]string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1", "--collect-url", "http://c:1", "--dut", "a=https://a/", "--namespace", "Bad_NS"}, "bad namespace"},
		{[]string{"collect", "--expect", "2", "-o", "m.json"}, "--listen ADDR is required"},
		{[]string{"collect", "--listen", "127.0.0.1:0", "--expect", "0", "-o", "m.json"}, "--expect must be at least 1"},
		{[]string{"collect", "--listen", "127.0.0.1:0", "--expect", "2"}, "-o FILE is required"},
		{[]string{"collect", "--listen", "999.0.0.1:0", "--expect", "2", "-o", "m.json"}, "--listen"},
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitBadUsage, stderr)
			continue
		}
		if tc.want == "" {
			continue
		}
		if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%q: %d lines on stderr, want one: %q", tc.args, lines, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q does not name %q", tc.args, stderr, tc.want)
		}
		if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%q: stack trace on stderr", tc.args)
		}
	}
}

// TestUnreachable: a target that refuses connections is exit 1, in words.
func TestUnreachable(t *testing.T) {
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-d", "1s", "https://127.0.0.1:1/1k")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d: %s", code, exitFailed, stderr)
	}
	if !strings.Contains(stderr, "cannot connect to 127.0.0.1:1") || !strings.Contains(stderr, "refused") {
		t.Errorf("stderr %q", stderr)
	}
}

// TestCPSRecord runs cps against the in-process target and checks the run
// record's contract fields.
func TestCPSRecord(t *testing.T) {
	rec := recordOf(t, "CPS (SR=0)", "cps", "-q", "-c", "2", "-d", "500ms", "--warmup", "0s")
	for _, path := range []string{
		"schema", "engine", "profile", "target", "complete",
		"negotiated.version", "negotiated.cipher_suite", "negotiated.group", "negotiated.cert_key",
		"duration_s", "transactions", "cps", "resumed", "errors.total", "errors.by_class",
		"latency_us.connect.p50", "latency_us.handshake.p90", "latency_us.ttfb.p99", "latency_us.total.p999", "latency_us.total.max",
		"histograms.handshake", "series", "client.cpu_s", "client.max_rss_bytes",
	} {
		if _, ok := lookup(rec, path); !ok {
			t.Errorf("record has no %s", path)
		}
	}
	if v, _ := lookup(rec, "negotiated.cipher_suite"); v != "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256" {
		t.Errorf("negotiated.cipher_suite = %v", v)
	}
	if v, _ := lookup(rec, "negotiated.cert_key"); v != "ECDSA P-256" {
		t.Errorf("negotiated.cert_key = %v", v)
	}
	if v, _ := lookup(rec, "complete"); v != true {
		t.Errorf("complete = %v", v)
	}
	if v, _ := lookup(rec, "transactions"); v.(float64) <= 0 {
		t.Errorf("transactions = %v", v)
	}
}

// recordOf runs an engine command with --json, checks that stdout holds
// table, and returns the run record as generic JSON.
func recordOf(t *testing.T, table string, args ...string) map[string]any {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := invoke(t, context.Background(), append(args, "--json", file)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, table) {
		t.Errorf("no %s table on stdout: %q", table, stdout)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// TestCPSInterrupted: an interrupted run writes its record, incomplete.
// It is interrupted once its stream shows a second with transactions in
// the window (the load has started), however long that takes on a busy
// machine (at most 25 s of the 30 planned).
func TestCPSInterrupted(t *testing.T) {
	dir := t.TempDir()
	file, stream := filepath.Join(dir, "run.json"), filepath.Join(dir, "stream.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel()
		for end := time.Now().Add(25 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			data, _ := os.ReadFile(stream)
			for line := range strings.Lines(string(data)) {
				var sec struct {
					Type   string `json:"type"`
					Steady int64  `json:"steady_transactions"`
				}
				if json.Unmarshal([]byte(line), &sec) == nil && sec.Type == "second" && sec.Steady > 0 {
					return
				}
			}
		}
	}()
	code, _, stderr := invoke(t, ctx, "cps", "-q", "-c", "2", "-d", "30s", "--warmup", "0s", "--json", file,
		"--stream", stream)
	if code != exitFailed || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var rec struct {
		Complete     bool    `json:"complete"`
		Transactions int64   `json:"transactions"`
		DurationS    float64 `json:"duration_s"`
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Complete || rec.Transactions == 0 || rec.DurationS <= 0 || rec.DurationS >= 30 {
		t.Errorf("record %+v: want incomplete, with transactions, over less than the 30 s planned", rec)
	}
}

// TestServeAndMeasure starts `serve`, measures it with `cps` over its URL
// and CA file, and checks the counts it prints when it stops.
func TestServeAndMeasure(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testdut.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--port", "0", "--profile", "rsa2048-aes128-gcm-sha256", "--ca-out", ca}, &out, &errb)
	}()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "rsa2048-aes128-gcm-sha256" {
				addr = f[1]
			}
		}
	}
	if addr == "" {
		t.Fatalf("serve printed no address: %q %q", out.String(), errb.String())
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	file := filepath.Join(dir, "run.json")
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s",
		"--profile", "rsa2048-aes128-gcm-sha256", "--cacert", ca, "--resolve", "tlsbench.test:"+port+":127.0.0.1",
		"--json", file, "https://tlsbench.test:"+port+"/1k")
	// The certificate does not name tlsbench.test: every handshake fails
	// chain verification, and the run says so.
	if code != exitFailed || !strings.Contains(stderr, "certificate") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s",
		"--profile", "rsa2048-aes128-gcm-sha256", "--cacert", ca, "--json", file, "https://localhost:"+port+"/1k")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "HANDSHAKES") {
		t.Errorf("serve printed no counts when stopped: %q", out.String())
	}
}

// TestThroughputRecord runs throughput against the in-process target and
// checks the record's contract fields and its byte accounting.
func TestThroughputRecord(t *testing.T) {
	rec := recordOf(t, "THROUGHPUT", "throughput", "-q", "-c", "2", "-d", "500ms", "--warmup", "0s",
		"--verify-body", "pattern", "--expect-size", "1048576", "--pipeline", "2")
	for _, path := range []string{
		"engine", "gbps", "wire_gbps", "requests", "bytes.payload", "bytes.wire_in", "bytes.wire_out",
		"connections_opened", "latency_us.ttfb.p50", "latency_us.ttfb.p999", "latency_us.total.max", "config.engine.pipeline",
	} {
		if _, ok := lookup(rec, path); !ok {
			t.Errorf("record has no %s", path)
		}
	}
	if _, ok := rec["cps"]; ok {
		t.Error("a throughput record has a cps field")
	}
	req, _ := lookup(rec, "requests")
	payload, _ := lookup(rec, "bytes.payload")
	if req.(float64) == 0 || payload.(float64) != req.(float64)*1048576 {
		t.Errorf("payload %v for %v requests of 1 MiB", payload, req)
	}
	if v, _ := lookup(rec, "engine"); v != "throughput" {
		t.Errorf("engine %v", v)
	}
	// Both connections were opened before the load and held to the end.
	for _, path := range []string{"load.pre_opened", "load.connections_held", "load.connections_held_peak"} {
		if v, _ := lookup(rec, path); v != 2.0 {
			t.Errorf("%s = %v, want 2", path, v)
		}
	}
}

// qualifyPlan runs qualify -q with the plan in a new campaign directory
// (returned with the output), failing the test unless it exits 0.
func qualifyPlan(t *testing.T, plan string, args ...string) (out, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(file, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "campaign")
	code, stdout, stderr := invoke(t, context.Background(), append([]string{"qualify", "-q", "--plan", file, "--out", out}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return out, stdout, stderr
}

// TestQualify runs a whole campaign against the reference target (a child
// process) with short durations, then checks the summary and that the same
// directory cannot be started again but can be resumed to the same table.
func TestQualify(t *testing.T) {
	out, stdout, stderr := qualifyPlan(t, `name: tiny
duts: [{name: ref, url: reference}]
tests:
  - {engine: cps, profiles: [ecdhe-ecdsa-aes128-sha256-p256, rsa2048-aes128-gcm-sha256]}
  - {engine: throughput, path: /bytes/64k, profiles: [ecdhe-ecdsa-aes128-sha256-p256]}
method:
  duration: 300ms
  warmup: 50ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 8}, probe_duration: 150ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%}
  final: {min_accepted: 2, max_runs: 4, tolerance: 60%}
`)
	for _, want := range []string{"ECDHE-ECDSA-AES128-SHA256", "AES128-GCM-SHA256", "prime256v1 (P-256)", "RSA 2048 key exchange", "Gbps"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"preliminary", "exploratory", "final", "run 1/4"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q", want)
		}
	}
	var s struct {
		Rows []struct {
			DUT, Profile, Cipher string
			CPS, Gbps            *float64
			CPSRuns              struct{ Accepted, Total int } `json:"cps_runs"`
			GbpsRuns             struct{ Accepted, Total int } `json:"gbps_runs"`
			Consistent           bool
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 2 {
		t.Fatalf("%d rows: %s", len(s.Rows), data)
	}
	r := s.Rows[0]
	if r.DUT != "ref" || r.CPS == nil || *r.CPS <= 0 || r.Gbps == nil || *r.Gbps <= 0 || r.CPSRuns.Accepted < 2 || r.GbpsRuns.Total == 0 {
		t.Errorf("row %+v", r)
	}
	if s.Rows[1].Gbps != nil || s.Rows[1].GbpsRuns.Total != 0 {
		t.Errorf("rsa row has a throughput cell: %+v", s.Rows[1])
	}
	// On Linux every loaded run measured the machine's noise, the
	// reference target (the child process qualify started) as the DUT's
	// CPU, apart from the other processes'.
	if runtime.GOOS == "linux" {
		entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Phase == vocab.Preliminary {
				continue
			}
			if n := e.Run.Noise; n == nil || n.DUTProcesses != 1 || n.DUTCores == nil {
				t.Errorf("%s run c=%d: noise %+v, want the reference target's CPU", e.Phase, e.Level, n)
			}
		}
	}
	// The directory holds a campaign: a new one is refused, a resume makes
	// no run and prints the same table.
	if code, _, stderr := invoke(t, context.Background(), "qualify", "--plan", filepath.Join(filepath.Dir(out), "plan.yaml"), "--out", out); code != exitBadUsage || !strings.Contains(stderr, "--resume") {
		t.Errorf("second campaign in the same directory: exit %d, %s", code, stderr)
	}
	code, again, stderr := invoke(t, context.Background(), "qualify", "-q", "--resume", out)
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "(from the ledger)") != strings.Count(stderr, " c=") {
		t.Errorf("resume of a finished campaign made runs:\n%s", stderr)
	}
	if again != stdout {
		t.Errorf("resumed table differs:\n%s\nvs\n%s", again, stdout)
	}
}

// TestCalibrate measures one profile against the reference target (a child
// process) and sizes goals.
func TestCalibrate(t *testing.T) {
	code, stdout, stderr := invoke(t, context.Background(), "calibrate", "-d", "500ms", "--profile", "rsa2048-aes128-gcm-sha256", "--cps", "105000", "--gbps", "53")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"105k CPS of rsa2048-aes128-gcm-sha256 needs ≈", "53.0 Gbps of rsa2048-aes128-gcm-sha256 needs ≈", "CPU/HANDSHAKE"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestCPUProfile: --cpuprofile writes a pprof profile (gzip) of the run.
func TestCPUProfile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.pprof")
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s", "--cpuprofile", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("profile %s: %v, %d bytes, not gzip", file, err, len(data))
	}
}
