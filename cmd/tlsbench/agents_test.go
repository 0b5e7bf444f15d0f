package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// fakeKubectlEnv, set to a directory, makes the test binary act as a fake
// kubectl whose "cluster" runs each Job's pods as local processes of the
// test binary (acting as tlsbench), with the completion index and pod name
// substituted as the kubelet would.
const fakeKubectlEnv = "TLSBENCH_FAKE_KUBECTL"

// collector starts a Collector on loopback and returns it with its URL.
func collector(t *testing.T) (*agent.Collector, string) {
	t.Helper()
	// The executor opens each run's batch with the run's own token.
	c := agent.NewCollector("")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Serve(ln, nil))
	return c, "http://" + ln.Addr().String()
}

// agentTarget starts the reference target in this process for one
// profile and writes its CA certificate; agents run in other processes.
func agentTarget(t *testing.T, profile string) (*target.Listener, *profiles.Profile, string) {
	t.Helper()
	p, err := profiles.Builtin().Get(profile)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, tg.CA.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return tg.Listener(p.Name), p, ca
}

func agentRequest(p *profiles.Profile, l *target.Listener, ca string, conc int) method.Request {
	return method.Request{
		Phase: vocab.Final,
		DUT:   plan.DUT{Name: "dut", URL: "https://localhost:" + portOf(l.Addr) + "/", CACert: ca},
		Test:  plan.Test{Engine: "cps", Path: "/1k"}, Profile: p,
		Concurrency: conc, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, ExpectSize: 1024,
	}
}

// checkMerged checks a merged record against the agents and the target:
// every agent reported once, and every transaction the agents counted is a
// handshake and a request the target served (exactly).
func checkMerged(t *testing.T, r *metrics.Run, agents int, before, after target.Stats) {
	t.Helper()
	if len(r.Agents) != agents {
		t.Fatalf("merged record has %d agents, want %d", len(r.Agents), agents)
	}
	var txns, whole int64
	for i, a := range r.Agents {
		if a.Shard != i || a.Shards != agents {
			t.Errorf("agent %d is shard %d/%d", i, a.Shard, a.Shards)
		}
		if a.StartSkewMS < 0 || a.StartSkewMS > 1000 {
			t.Errorf("agent %s started %.1f ms after the agreed time (tolerance 1 s)", a.Name, a.StartSkewMS)
		}
		if a.Transactions == 0 {
			t.Errorf("agent %s made no transaction", a.Name)
		}
		txns += a.Transactions
	}
	if r.Transactions != txns {
		t.Errorf("merged transactions %d, the agents' sum %d", r.Transactions, txns)
	}
	// Each agent made one preflight transaction before the load: the
	// target saw it, whole_run does not count it, the record's preflight
	// does (summed over the agents).
	whole = r.Whole.Transactions
	pf := r.Preflight
	if pf == nil || !pf.OK || pf.Transactions != int64(agents) || pf.Handshakes != int64(agents) {
		t.Fatalf("merged preflight %+v, want ok with one transaction and handshake per agent (%d)", pf, agents)
	}
	hs, reqs := after.Handshakes-before.Handshakes, after.Requests-before.Requests
	if whole+pf.Handshakes != hs || whole+pf.Transactions != reqs || r.Whole.Errors != 0 {
		t.Errorf("agents: %d transactions (%d errors) + %d preflight; target: %d handshakes, %d requests", whole, r.Whole.Errors, pf.Transactions, hs, reqs)
	}
	h, err := r.Histogram("total")
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != r.Transactions {
		t.Errorf("merged total histogram holds %d values, transactions %d", h.TotalCount(), r.Transactions)
	}
}

// TestProcessesExecutor runs one method run as 4 agent processes against
// the reference target: start-at, shards, push, merge.
func TestProcessesExecutor(t *testing.T) {
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	coll, url := collector(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := &agent.Executor{
		Local:    &method.Local{Tool: toolInfo(), UserAgent: "tlsbench/test"},
		Launcher: &agent.Processes{Command: []string{self, "agent"}, Env: append(os.Environ(), childEnv+"=1")},
		Agents:   4, Margin: 3 * time.Second, Tolerance: time.Second, Collector: coll, ReportURL: url,
	}
	req := agentRequest(p, l, ca, 8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The target's handshakes inside the steady window, sampled at its
	// ends (the agents start at the agreed time, to within milliseconds).
	before := l.Stats()
	samples := make(chan target.Stats, 2)
	start := time.Now().Add(e.Margin)
	go func() {
		for _, at := range []time.Duration{req.Warmup, req.Warmup + req.Duration} {
			time.Sleep(time.Until(start.Add(at)))
			samples <- l.Stats()
		}
	}()
	watch := watchTokens(t)
	r, err := e.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	after := l.Stats()
	watch.check(t, 4)
	checkMerged(t, r, 4, before, after)
	if r.Load.Concurrency != 8 {
		t.Errorf("merged concurrency %d, want 8 (2 per agent)", r.Load.Concurrency)
	}
	s0, s1 := <-samples, <-samples
	targetCPS := float64(s1.Handshakes-s0.Handshakes) / req.Duration.Seconds()
	cps := metrics.Value(r.CPS)
	if d := cps/targetCPS - 1; d < -0.1 || d > 0.1 {
		t.Errorf("merged CPS %.0f, the target's handshakes over the window %.0f/s (%.1f%% apart)", cps, targetCPS, 100*d)
	}
	t.Logf("4 agents: merged %.0f CPS, target %.0f handshakes/s over the window; %d transactions, skews %v",
		cps, targetCPS, r.Transactions, skews(r))
}

func skews(r *metrics.Run) []string {
	var s []string
	for _, a := range r.Agents {
		s = append(s, fmt.Sprintf("%.2fms", a.StartSkewMS))
	}
	return s
}

// TestKubernetesExecutor drives the Kubernetes executor against a fake
// kubectl: the manifest it applies is run as the cluster would run it.
func TestKubernetesExecutor(t *testing.T) {
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	coll, url := collector(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv(fakeKubectlEnv, dir)
	e := &agent.Executor{
		Local: &method.Local{Tool: toolInfo(), UserAgent: "tlsbench/test"},
		Launcher: &agent.Kubernetes{
			Kubectl: []string{self, "--context", "lab"}, Namespace: "bench", Image: "registry.example/tlsbench:test",
			CPU: "1", Memory: "512Mi", Poll: 200 * time.Millisecond,
		},
		Agents: 3, Margin: 3 * time.Second, Tolerance: time.Second, Collector: coll, ReportURL: url,
	}
	req := agentRequest(p, l, ca, 6)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := l.Stats()
	watch := watchTokens(t)
	r, err := e.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	tokens := watch.check(t, 3)
	checkMerged(t, r, 3, before, l.Stats())

	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(calls)
	for _, want := range []string{"--context lab apply -f - --namespace bench", "--context lab delete job/tlsbench-final-", "configmap/tlsbench-final-", "--ignore-not-found"} {
		if !strings.Contains(log, want) {
			t.Errorf("kubectl calls lack %q:\n%s", want, log)
		}
	}
	// The CA file went with the Job, in a ConfigMap the pods mount.
	manifests, _ := filepath.Glob(filepath.Join(dir, "tlsbench-*.yaml"))
	if len(manifests) != 1 {
		t.Fatalf("%d manifests applied, want 1", len(manifests))
	}
	m, _ := os.ReadFile(manifests[0])
	if !strings.Contains(string(m), "kind: ConfigMap") || !strings.Contains(string(m), agent.ManifestFilesDir+"/ca.pem") || strings.Contains(string(m), ca) {
		t.Errorf("the manifest does not ship the CA file in a ConfigMap:\n%s", m)
	}
	// The token the pods had is in the Secret only: not in the ConfigMap,
	// the Job, nor kubectl's command lines.
	for tok := range tokens {
		for _, doc := range strings.Split(string(m), "\n---\n") {
			if strings.Contains(doc, tok) != strings.Contains(doc, "kind: Secret") {
				t.Errorf("the token is in a document other than the Secret, or not in it:\n%s", doc)
			}
		}
		if strings.Contains(log, tok) {
			t.Errorf("the token is in kubectl's command line:\n%s", log)
		}
	}
	for _, want := range []string{"secret/tlsbench-final-", "networkpolicy/tlsbench-final-"} {
		if !strings.Contains(log, want) {
			t.Errorf("kubectl delete lacks %q:\n%s", want, log)
		}
	}
	// The Job is gone: its agents were stopped by the delete.
	if strings.Count(log, " apply ") != 1 || strings.Count(log, " delete ") != 1 {
		t.Errorf("want one apply and one delete:\n%s", log)
	}
}

// TestKubernetesExecutorFailedAgent: an agent that cannot run (a bad
// argument) is reported through the Job's failed count before the
// deadline, with the pods named.
func TestKubernetesExecutorFailedAgent(t *testing.T) {
	_, p, _ := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	coll, url := collector(t)
	self, _ := os.Executable()
	t.Setenv(fakeKubectlEnv, t.TempDir())
	e := &agent.Executor{
		Local:    &method.Local{Tool: toolInfo()},
		Launcher: &agent.Kubernetes{Kubectl: []string{self}, Image: "x/tlsbench:1", Poll: 200 * time.Millisecond},
		Agents:   2, Margin: time.Second, Tolerance: time.Second, Collector: coll, ReportURL: url,
	}
	// Nothing listens on port 1: every agent fails its probe.
	req := method.Request{
		Phase: vocab.Final, DUT: plan.DUT{Name: "dut", URL: "https://127.0.0.1:1/", Insecure: true},
		Test: plan.Test{Engine: "cps"}, Profile: p, Concurrency: 2, Duration: time.Second,
	}
	begin := time.Now()
	_, err := e.Run(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "missing shards") {
		t.Fatalf("err = %v, want the failed agents and the missing shards", err)
	}
	if el := time.Since(begin); el > 20*time.Second {
		t.Errorf("a failed agent took %s to be noticed", el)
	}
}

// fakeKubectl is the fake kubectl's main.
func fakeKubectl(dir string, args []string) int {
	f, _ := os.OpenFile(filepath.Join(dir, "calls"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	fmt.Fprintf(f, "kubectl %s\n", strings.Join(args, " "))
	f.Close()
	var verb []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--context" || a == "--namespace" || a == "-o" || a == "-f" || a == "-l":
			if a == "-o" || a == "-l" {
				verb = append(verb, a, args[i+1])
			}
			i++
		case strings.HasPrefix(a, "--"):
		default:
			verb = append(verb, a)
		}
	}
	if len(verb) == 0 {
		fmt.Fprintln(os.Stderr, "fake kubectl: no verb")
		return 1
	}
	switch verb[0] {
	case "apply":
		return fakeApply(dir)
	case "delete":
		for _, obj := range verb[1:] {
			if name, ok := strings.CutPrefix(obj, "job/"); ok {
				pids, _ := os.ReadFile(filepath.Join(dir, name+".pids"))
				for _, s := range strings.Fields(string(pids)) {
					if pid, err := strconv.Atoi(s); err == nil {
						_ = syscall.Kill(-pid, syscall.SIGTERM)
					}
				}
			}
		}
		return 0
	case "get":
		if len(verb) > 1 && strings.HasPrefix(verb[1], "job/") {
			name := strings.TrimPrefix(verb[1], "job/")
			failed, _ := os.ReadFile(filepath.Join(dir, name+".failed"))
			fmt.Print(strings.Count(string(failed), "\n"))
			return 0
		}
		if len(verb) > 1 && verb[1] == "pods" {
			fmt.Println("(fake cluster)")
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "fake kubectl: unsupported %q\n", verb)
	return 1
}

// fakeApply runs the Indexed Job of the manifest on stdin: one process per
// completion index, args expanded from the container's env.
func fakeApply(dir string) int {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 1
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	secrets := map[string]map[string]string{} // the Secrets applied before the Job
	for {
		var doc struct {
			Kind       string            `yaml:"kind"`
			Data       map[string]string `yaml:"data"`
			StringData map[string]string `yaml:"stringData"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Spec struct {
				CompletionMode string `yaml:"completionMode"`
				Completions    int    `yaml:"completions"`
				Template       struct {
					Spec struct {
						Containers []struct {
							Args []string `yaml:"args"`
							Env  []struct {
								Name      string `yaml:"name"`
								Value     string `yaml:"value"`
								ValueFrom *struct {
									FieldRef struct {
										FieldPath string `yaml:"fieldPath"`
									} `yaml:"fieldRef"`
									SecretKeyRef *struct {
										Name string `yaml:"name"`
										Key  string `yaml:"key"`
									} `yaml:"secretKeyRef"`
								} `yaml:"valueFrom"`
							} `yaml:"env"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "fake kubectl:", err)
			return 1
		}
		if doc.Kind == "Secret" {
			secrets[doc.Metadata.Name] = doc.StringData
			continue
		}
		if doc.Kind == "ConfigMap" {
			// The volume the pods mount at agent.ManifestFilesDir.
			mdir := filepath.Join(dir, "volumes", doc.Metadata.Name)
			os.MkdirAll(mdir, 0o755)
			for k, v := range doc.Data {
				os.WriteFile(filepath.Join(mdir, k), []byte(v), 0o644)
			}
			continue
		}
		if doc.Kind != "Job" {
			continue
		}
		name := doc.Metadata.Name
		if doc.Spec.CompletionMode != "Indexed" || len(doc.Spec.Template.Spec.Containers) != 1 {
			fmt.Fprintln(os.Stderr, "fake kubectl: not an Indexed Job of one container")
			return 1
		}
		c := doc.Spec.Template.Spec.Containers[0]
		self, _ := os.Executable()
		var pids []string
		for i := range doc.Spec.Completions {
			pod := fmt.Sprintf("%s-%d-x7k2p", name, i)
			// The downward API and the plain values, the mounted ConfigMap
			// where the manifest points.
			mount := strings.NewReplacer(agent.ManifestFilesDir, filepath.Join(dir, "volumes", name+"-files"))
			var env []string
			for _, e := range c.Env {
				v := mount.Replace(e.Value)
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					ref := e.ValueFrom.SecretKeyRef
					sv, ok := secrets[ref.Name][ref.Key]
					if !ok { // the kubelet's CreateContainerConfigError
						fmt.Fprintf(os.Stderr, "fake kubectl: secret %s has no key %s\n", ref.Name, ref.Key)
						return 1
					}
					v = sv
				} else if e.ValueFrom != nil {
					switch e.ValueFrom.FieldRef.FieldPath {
					case "metadata.annotations['batch.kubernetes.io/job-completion-index']":
						v = strconv.Itoa(i)
					case "metadata.name":
						v = pod
					}
				}
				env = append(env, e.Name+"="+v)
			}
			argv := c.Args
			// The "kubelet": a pod whose agent exits non-zero counts as
			// failed. Each pod is a process group, killed as one by delete.
			out, _ := os.Create(filepath.Join(dir, pod+".log"))
			script := `"$0" "$@" || echo ` + pod + ` >> ` + filepath.Join(dir, name+".failed")
			cmd := exec.Command("sh", append([]string{"-c", script, self}, argv...)...)
			cmd.Env = append(append(os.Environ(), childEnv+"=1", fakeKubectlEnv+"="), env...)
			cmd.Stdout, cmd.Stderr = out, out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "fake kubectl:", err)
				return 1
			}
			pids = append(pids, strconv.Itoa(cmd.Process.Pid))
		}
		os.WriteFile(filepath.Join(dir, name+".pids"), []byte(strings.Join(pids, "\n")), 0o644)
		os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644)
	}
	return 0
}

// waitListening returns once addr accepts connections: the collector
// started there is ready for the agents' records.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile returns once file exists.
func waitFile(t *testing.T, file string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			return
		}
	}
	t.Fatalf("%s was not written", file)
}

// TestCollect: `collect` merges the records of agents started by hand with
// --shard, --start-at and --report-to; at its deadline it names the shards
// that did not report.
func TestCollect(t *testing.T) {
	l, p, ca := agentTarget(t, "ecdhe-ecdsa-aes128-sha256-p256")
	url := "https://localhost:" + portOf(l.Addr) + "/1k"
	dir := t.TempDir()
	tok := tokenFile(t)
	for _, tc := range []struct {
		expect, agents int
		deadline       string
		code           int
		want           string
		tls            bool
	}{
		{2, 2, "15s", exitOK, "merged record of 2 agents", false},
		{3, 2, "8s", exitFailed, "missing shards 2/3", false}, // the agents push within 4 s, 8 under -race
		// Over https, its certificate made for the run, its CA given to
		// the agents.
		{2, 2, "15s", exitOK, "merged record of 2 agents", true},
	} {
		ports, err := testdut.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
		out := filepath.Join(dir, fmt.Sprintf("merged-%d.json", tc.expect))
		type result struct {
			code           int
			stdout, stderr string
		}
		done := make(chan result, 1)
		collectArgs := []string{"collect", "--listen", addr, "--expect", strconv.Itoa(tc.expect),
			"-o", out, "--deadline", tc.deadline, "--keep", filepath.Join(dir, "agents"), "--token-file", tok}
		scheme, agentTLS := "http", []string{}
		if tc.tls {
			caOut := filepath.Join(dir, "collector-ca.pem")
			collectArgs = append(collectArgs, "--tls-ca-out", caOut)
			scheme, agentTLS = "https", []string{"--report-cacert", caOut}
		}
		go func() {
			code, so, se := invoke(t, context.Background(), collectArgs...)
			done <- result{code, so, se}
		}()
		waitListening(t, addr)
		if tc.tls { // collect listens, then writes its CA (atomically)
			waitFile(t, agentTLS[1])
		}
		before := l.Stats()
		start := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
		errs := make(chan string, tc.agents)
		for i := range tc.agents {
			go func() {
				args := []string{"cps", url, "--cacert", ca, "--profile", p.Name, "-c", "4", "-d", "1s", "--warmup", "0",
					"--shard", fmt.Sprintf("%d/%d", i, tc.expect), "--start-at", start, "--agent", fmt.Sprint("hand-", i),
					"--report-to", scheme + "://" + addr + "/", "--token-file", tok, "-q"}
				code, _, se := invoke(t, context.Background(), append(args, agentTLS...)...)
				if code != exitOK {
					errs <- se
				}
				errs <- ""
			}()
		}
		for range tc.agents {
			if e := <-errs; e != "" {
				t.Fatalf("agent: %s", e)
			}
		}
		after := l.Stats()
		res := <-done
		if tc.tls && !strings.Contains(res.stderr, "https://") {
			t.Errorf("collect --tls-ca-out: %s", res.stderr)
		}
		if res.code != tc.code || !strings.Contains(res.stdout+res.stderr, tc.want) {
			t.Fatalf("collect --expect %d with %d agents: exit %d, want %d and %q:\n%s%s", tc.expect, tc.agents, res.code, tc.code, tc.want, res.stdout, res.stderr)
		}
		if tc.code != exitOK {
			if !strings.Contains(res.stderr, "hand-0, hand-1") {
				t.Errorf("the deadline message does not name the agents that reported: %s", res.stderr)
			}
			continue
		}
		r, err := metrics.ReadRun(out)
		if err != nil {
			t.Fatal(err)
		}
		checkMerged(t, r, 2, before, after)
		if _, err := os.Stat(filepath.Join(dir, "agents", "shard-1-of-2.json")); err != nil {
			t.Errorf("--keep: %v", err)
		}
	}
}

// TestQualifyProcesses runs the method with --executor processes: every
// run is made by 2 agent processes and judged on the merged record, pushed
// over https to a collector whose certificate the coordinator made.
func TestQualifyProcesses(t *testing.T) {
	out, stdout, stderr := qualifyPlan(t, `name: agents
duts: [{name: ref, url: reference}]
tests:
  - {engine: cps, profiles: [ecdhe-ecdsa-aes128-sha256-p256]}
method:
  duration: 600ms
  warmup: 100ms
  cooldown: 0s
  explore: {concurrency: {min: 4, max: 4}, probe_duration: 300ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%}
  final: {min_accepted: 2, max_runs: 4, tolerance: 60%}
`, "--executor", "processes", "--agents", "2", "--start-margin", "1s", "--collect-tls")
	if !strings.Contains(stderr, "by 2 agent processes each") || !strings.Contains(stdout, "CPS (SR=0)") {
		t.Errorf("stderr %q\nstdout %q", stderr, stdout)
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	finals := 0
	for _, e := range entries {
		want := min(2, e.Level)
		if len(e.Run.Agents) != want {
			t.Errorf("%s run at c=%d was made by %d agents, want %d", e.Phase, e.Level, len(e.Run.Agents), want)
		}
		if e.Phase == vocab.Final && e.Accepted {
			finals++
		}
		// Every agent ran with the plan's DUT name (--dut), and the merged
		// record keeps it with the device's certificate.
		if e.Run.Target.DUT != "ref" || len(e.Run.Target.LeafSHA256) != 64 {
			t.Errorf("%s run: target %+v, want DUT ref and a leaf fingerprint", e.Phase, e.Run.Target)
		}
	}
	if finals < 2 {
		t.Errorf("%d accepted final runs, want at least 2", finals)
	}
}

// TestCollectTokenInput: collect and an agent's --report-to refuse to run
// without a token, with one others may read, or a short one (exit 2, one
// line).
func TestCollectTokenInput(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose")
	os.WriteFile(loose, []byte(testRunToken), 0o640)
	t.Setenv(agent.EnvToken, "")
	base := []string{"collect", "--listen", "127.0.0.1:0", "--expect", "1", "-o", filepath.Join(dir, "m.json")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{base, "no token: give the run's token with --token-file FILE or $TLSBENCH_TOKEN"},
		{append(slices.Clone(base), "--token-file", loose), "mode 0640 lets others read or change it"},
		{append(slices.Clone(base), "--token-file", dir), "not a regular file"},
		{append(slices.Clone(base), "--tls-host", "c.example", "--token-file", tokenFile(t)), "--tls-host needs --tls-ca-out"},
		{[]string{"cps", "https://127.0.0.1:1/", "--report-to", "http://127.0.0.1:1/"}, "no token"},
		{[]string{"cps", "https://127.0.0.1:1/", "--token-file", tokenFile(t)}, "--token-file and --report-cacert need --report-to"},
		{[]string{"cps", "https://127.0.0.1:1/", "--report-to", "http://127.0.0.1:1/", "--token-file", tokenFile(t), "--report-cacert", loose}, "is for an https collector"},
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	t.Setenv(agent.EnvToken, "short")
	if code, _, stderr := invoke(t, context.Background(), base...); code != exitBadUsage || !strings.Contains(stderr, "want at least 22") {
		t.Errorf("a short $TLSBENCH_TOKEN: exit %d, %q", code, stderr)
	}
}

// TestExecutorTLSInput: --collect-tls wants an https --collect-url, and an
// executor of agents.
func TestExecutorTLSInput(t *testing.T) {
	k8s := []string{"qualify", "--executor", "kubernetes", "--agents", "2", "--image", "x/tb:1", "--dut", "a=https://a/"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(k8s), "--collect-url", "http://10.0.0.5:7070", "--collect-tls"), "want https://HOST:PORT"},
		{append(slices.Clone(k8s), "--collect-url", "https://10.0.0.5:7070"), "want http://HOST:PORT"},
		{[]string{"qualify", "--collect-tls"}, "need --executor processes or kubernetes"},
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
