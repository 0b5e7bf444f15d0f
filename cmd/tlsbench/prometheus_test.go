package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/promexp"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

const prometheusBin = "/usr/bin/prometheus"

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrometheus starts the Debian package's Prometheus on loopback,
// scraping target every second, with its storage in a temporary directory;
// it is killed at the test's end. It returns its base URL. args are
// further flags.
func startPrometheus(t *testing.T, targets []string, args ...string) string {
	t.Helper()
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Skipf("%s not installed (Debian package prometheus): %v", prometheusBin, err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: tlsbench
    static_configs:
      - targets: ['%s']
`, strings.Join(targets, "', '"))), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prometheusBin, append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--storage.tsdb.retention.time=1h"}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	base := "http://" + addr
	c := http.Client{Timeout: time.Second}
	for i := 0; ; i++ {
		resp, err := c.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if i == 300 {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus not ready after 30 s: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// promResult is one series of a query's answer.
type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

// promQuery asks Prometheus's HTTP API: an instant query, or a range
// query from start to now when start is set.
func promQuery(t *testing.T, base, q string, start time.Time) []promResult {
	t.Helper()
	return promQueryAt(t, base, q, start, time.Time{})
}

// promQueryAt is promQuery up to at (if set): the instant query's time,
// the range query's end.
func promQueryAt(t *testing.T, base, q string, start, at time.Time) []promResult {
	t.Helper()
	v := url.Values{"query": {q}}
	if !at.IsZero() && start.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	path := "/api/v1/query"
	if !start.IsZero() {
		path = "/api/v1/query_range"
		v.Set("start", strconv.FormatInt(start.Unix(), 10))
		end := time.Now().Unix() + 1
		if !at.IsZero() {
			end = at.Unix()
		}
		v.Set("end", strconv.FormatInt(end, 10))
		v.Set("step", "1")
	}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(base + path + "?" + v.Encode())
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %s %v: %s", q, r.Status, err, body)
	}
	return r.Data.Result
}

func sampleValue(t *testing.T, r promResult) float64 {
	t.Helper()
	s, _ := r.Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("value %v: %v", r.Value, err)
	}
	return f
}

// TestPrometheus runs a CPS run (against the reference target in its own
// process, itself with --metrics-listen) and a small campaign with
// --metrics-listen, scraped every second by a real Prometheus,
// then checks through its HTTP API that the transactions counter equals the
// run record's, that histogram_quantile of the handshake latency is within
// one bucket of the record's p99, and that every query of the Grafana
// dashboard returns data.
func TestPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real Prometheus and two runs")
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// The reference target, as its own process, with its metrics.
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	serveMetrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	const prof = "ecdhe-ecdsa-aes128-sha256-p256"
	addrs := startServe(t, "--profile", prof, "--ca-out", ca, "--metrics-listen", serveMetrics)
	base := startPrometheus(t, []string{metricsAddr, serveMetrics})
	// A second one takes the native histograms (protobuf scrapes).
	native := startPrometheus(t, []string{metricsAddr}, "--enable-feature=native-histograms")
	t0 := time.Now()

	rec := filepath.Join(dir, "run.json")
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "4", "-d", "3s", "--warmup", "1s", "--dut", "promtest",
		"--json", rec, "--metrics-listen", metricsAddr, "--metrics-linger", "4s", "--cacert", ca, "https://localhost:"+portOf(addrs[prof])+"/1k")
	if code != exitOK {
		t.Fatalf("cps: exit %d: %s", code, stderr)
	}
	// The endpoint lingered 4 s with the final values: Prometheus 2.42's
	// range functions take no native histogram, so that one is asked at a
	// moment of the linger.
	lingered := time.Now().Add(-2 * time.Second)
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Transactions int64 `json:"transactions"`
		Latency      map[string]struct {
			P99 float64 `json:"p99"`
		} `json:"latency_us"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}

	got := promQuery(t, base, `last_over_time(tlsbench_transactions_total{engine="cps",dut="promtest"}[10m])`, time.Time{})
	if len(got) != 1 {
		t.Fatalf("transactions: %d series, want 1: %v", len(got), got)
	}
	txns := sampleValue(t, got[0])
	t.Logf("transactions: Prometheus %v, record %d", txns, r.Transactions)
	if int64(txns) != r.Transactions || r.Transactions == 0 {
		t.Errorf("transactions: Prometheus %v, record %d", txns, r.Transactions)
	}

	got = promQuery(t, base, `histogram_quantile(0.99, last_over_time(tlsbench_latency_seconds_bucket{engine="cps",dut="promtest",phase="handshake"}[10m]))`, time.Time{})
	if len(got) != 1 {
		t.Fatalf("handshake p99: %d series, want 1: %v", len(got), got)
	}
	q := sampleValue(t, got[0])
	want := r.Latency["handshake"].P99 / 1e6
	bq, bw := sort.SearchFloat64s(promexp.ClassicBuckets, q), sort.SearchFloat64s(promexp.ClassicBuckets, want)
	t.Logf("handshake p99: histogram_quantile %.6f s (bucket %d), record %.6f s (bucket %d)", q, bq, want, bw)
	if d := bq - bw; d < -1 || d > 1 {
		t.Errorf("handshake p99: histogram_quantile %.6f s in bucket %d, record %.6f s in bucket %d", q, bq, want, bw)
	}

	// Range query up to the linger's middle, its last point: a scrape
	// that timed out on a loaded machine leaves a staleness marker that
	// an instant query would stop at.
	got = promQueryAt(t, native, `histogram_quantile(0.99, tlsbench_latency_seconds{engine="cps",dut="promtest",phase="handshake"})`, t0, lingered)
	if len(got) != 1 || len(got[0].Values) == 0 {
		c := http.Client{Timeout: 5 * time.Second}
		var targets string
		if resp, err := c.Get(native + "/api/v1/targets"); err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			targets = string(b)
		}
		up := promQueryAt(t, native, `tlsbench_run_running{dut="promtest"}`, t0, lingered)
		if len(up) == 0 {
			// Not one scrape of the run succeeded within its 1 s timeout
			// (a loaded machine): nothing to compare, not an encoding fault.
			t.Logf("native handshake p99: no scrape of the run succeeded: targets: %.1000s", targets)
		} else {
			t.Fatalf("native handshake p99: %d series, want 1: %v; the run scraped: %v; targets: %.1000s", len(got), got, up, targets)
		}
	} else {
		nq := sampleValue(t, promResult{Value: got[0].Values[len(got[0].Values)-1]})
		// Native buckets are 2^(1/8) apart: within one of the record's.
		ratio := nq / want
		t.Logf("handshake p99: histogram_quantile over the native histogram %.6f s, record %.6f s (ratio %.3f)", nq, want, ratio)
		if f := math.Exp2(1.0 / 8); ratio > f*f || ratio < 1/(f*f) {
			t.Errorf("native handshake p99 %.6f s, record %.6f s: more than a bucket apart", nq, want)
		}
	}

	// A small campaign, for the dashboard's campaign panels.
	_, _, qerr := qualifyPlan(t, `name: prom
duts: [{name: ref, url: reference}]
tests:
  - {engine: cps, profiles: [ecdhe-ecdsa-aes128-sha256-p256]}
method:
  duration: 1s
  warmup: 200ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 500ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%}
  final: {min_accepted: 2, max_runs: 3, tolerance: 60%}
`, "--metrics-listen", metricsAddr, "--metrics-linger", "3s")
	_ = qerr

	dashboardQueries(t, base, t0)
}

// dashboardQueries runs every query of docs/grafana/tlsbench.json, its
// template variables substituted, as a range query since t0, and checks
// that each returns data.
func dashboardQueries(t *testing.T, base string, t0 time.Time) {
	t.Helper()
	data, err := os.ReadFile("../../docs/grafana/tlsbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	vars := strings.NewReplacer("$__rate_interval", "5s", "$dut", ".*", "$profile", ".*", "$engine", ".*")
	left := regexp.MustCompile(`\$\w+`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			q := vars.Replace(tg.Expr)
			if v := left.FindString(q); v != "" {
				t.Errorf("panel %q: variable %s not substituted: %s", p.Title, v, q)
				continue
			}
			res := promQuery(t, base, q, t0)
			points := 0
			for _, r := range res {
				points += len(r.Values)
			}
			t.Logf("dashboard %q: %s → %d series, %d points", p.Title, q, len(res), points)
			if points == 0 {
				t.Errorf("dashboard panel %q: no data for %s", p.Title, q)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("the dashboard has no query")
	}
}

// TestServeMetrics: serve --metrics-listen exposes each listener's
// counters, the same as its admin /stats, after a CPS run against it.
func TestServeMetrics(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	adminAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	const prof = "ecdhe-ecdsa-aes128-sha256-p256"
	addrs := startServe(t, "--profile", prof, "--ca-out", ca, "--metrics-listen", metricsAddr, "--admin", adminAddr)
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "1s", "--warmup", "0s", "--cacert", ca,
		"https://localhost:"+portOf(addrs[prof])+"/1k")
	if code != exitOK {
		t.Fatalf("cps: exit %d: %s", code, stderr)
	}
	c := http.Client{Timeout: 5 * time.Second}
	get := func(u string) string {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		return string(b)
	}
	var stats struct {
		Listeners []struct {
			Profile     string `json:"profile"`
			Handshakes  int64  `json:"handshakes"`
			Requests    int64  `json:"requests"`
			Connections int64  `json:"connections"`
		} `json:"listeners"`
	}
	if err := json.Unmarshal([]byte(get("http://"+adminAddr+"/stats")), &stats); err != nil || len(stats.Listeners) != 1 {
		t.Fatalf("/stats: %v %+v", err, stats)
	}
	text := get("http://" + metricsAddr + "/metrics")
	for name, want := range map[string]int64{"tlsbench_target_handshakes_total": stats.Listeners[0].Handshakes,
		"tlsbench_target_requests_total": stats.Listeners[0].Requests, "tlsbench_target_connections_total": stats.Listeners[0].Connections} {
		m := regexp.MustCompile(`(?m)^` + name + `\{[^}]*profile="` + prof + `"[^}]*\} (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no %s in:\n%.2000s", name, text)
			continue
		}
		got, _ := strconv.ParseFloat(m[1], 64)
		if int64(got) != want || want == 0 {
			t.Errorf("%s = %v, /stats says %d", name, got, want)
		}
	}
}

// TestAgentMetricsAndStream: an agent takes its metrics address from
// TLSBENCH_METRICS_LISTEN, labels its metrics with its name and shard, and
// streams its seconds and record to --stream FILE; the exposed
// transactions are the record's.
func TestAgentMetricsAndStream(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	const prof = "ecdhe-ecdsa-aes128-sha256-p256"
	addrs := startServe(t, "--profile", prof, "--ca-out", ca)
	spec := runner.Defaults(vocab.EngineCPS)
	spec.Profile, spec.Concurrency, spec.Duration, spec.Warmup = prof, 2, 2*time.Second, 0
	spec.Target = metrics.Target{URL: "https://localhost:" + portOf(addrs[prof]) + "/1k", Address: addrs[prof], ServerName: "localhost", CAFile: ca}
	spec.Host, spec.Path = "localhost", "/1k"
	spec.Agent = &runner.Agent{Name: "a1", Shard: 0, Shards: 1, StartAt: time.Now().Add(time.Second), StartTolerance: 2 * time.Second}
	vars, err := agent.RunSpec{Spec: spec}.Env(0, "a1")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		t.Setenv(k, val)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	t.Setenv(envMetricsListen, metricsAddr)
	stream := filepath.Join(dir, "agent.jsonl")
	done := make(chan int, 1)
	go func() {
		code, _, stderr := invoke(t, context.Background(), "agent", "--stream", stream, "--metrics-linger", "3s")
		if code != exitOK {
			t.Errorf("agent: exit %d: %s", code, stderr)
		}
		done <- code
	}()
	c := http.Client{Timeout: 2 * time.Second}
	running := regexp.MustCompile(`(?m)^tlsbench_run_running\{[^}]*agent="a1"[^}]*shard="0"[^}]*\} 0$`)
	txns := regexp.MustCompile(`(?m)^tlsbench_transactions_total\{[^}]*agent="a1"[^}]*\} (\S+)$`)
	var text string
	for i := 0; ; i++ {
		if i == 150 {
			t.Fatalf("the agent's metrics never showed its run finished:\n%.3000s", text)
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := c.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		if text = string(b); running.MatchString(text) {
			break
		}
	}
	<-done
	data, err := os.ReadFile(stream)
	if err != nil {
		t.Fatal(err)
	}
	n, rec := checkStream(t, stream, string(data))
	if n < 2 || rec == nil || !strings.Contains(string(data), `"agent":"a1","shard":0`) {
		t.Fatalf("stream: %d seconds, record %v:\n%.500s", n, rec != nil, data)
	}
	m := txns.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no transactions in:\n%.2000s", text)
	}
	got, _ := strconv.ParseFloat(m[1], 64)
	if want, _ := rec["transactions"].(float64); got != want || want == 0 {
		t.Errorf("agent's transactions: metrics %v, record %v", got, want)
	}
}

// TestImpactMetrics: each round of each side of an impact study is a run
// in the metrics (method_phase the side, run the round), frozen at its
// record's transactions.
func TestImpactMetrics(t *testing.T) {
	a, b, ca := impactTargets(t, 0)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	jsonFile := filepath.Join(t.TempDir(), "runs.json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, stderr := invoke(t, context.Background(), "impact", "-q", "--baseline", a, "--candidate", b, "--cacert", ca,
			"-c", "2", "-d", "500ms", "--warmup", "0s", "--rounds", "2", "--cooldown", "0s", "--json", jsonFile,
			"--profile", "ecdhe-ecdsa-aes128-gcm-sha256-p256", "--metrics-listen", metricsAddr, "--metrics-linger", "3s")
		if code != exitOK {
			t.Errorf("impact: exit %d: %s", code, stderr)
		}
	}()
	c := http.Client{Timeout: 2 * time.Second}
	finished := regexp.MustCompile(`(?m)^tlsbench_run_running\{[^}]*method_phase="candidate"[^}]*run="2"[^}]*\} 0$`)
	var text string
	for i := 0; ; i++ {
		if i == 300 {
			t.Fatalf("the study's last round never showed finished:\n%.3000s", text)
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := c.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		if text = string(body); finished.MatchString(text) {
			break
		}
	}
	<-done
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var runs struct {
		Baseline, Candidate []struct {
			Transactions int64 `json:"transactions"`
		}
	}
	if err := json.Unmarshal(data, &runs); err != nil || len(runs.Baseline) != 2 || len(runs.Candidate) != 2 {
		t.Fatalf("runs: %v %+v", err, runs)
	}
	for side, rs := range map[string][]struct {
		Transactions int64 `json:"transactions"`
	}{"baseline": runs.Baseline, "candidate": runs.Candidate} {
		for i, r := range rs {
			re := regexp.MustCompile(`(?m)^tlsbench_transactions_total\{[^}]*method_phase="` + side + `"[^}]*run="` + strconv.Itoa(i+1) + `"[^}]*\} (\S+)$`)
			m := re.FindStringSubmatch(text)
			if m == nil {
				t.Errorf("%s round %d: no transactions", side, i+1)
				continue
			}
			if got, _ := strconv.ParseFloat(m[1], 64); int64(got) != r.Transactions || got == 0 {
				t.Errorf("%s round %d: metrics %v, record %d", side, i+1, got, r.Transactions)
			}
		}
	}
}
