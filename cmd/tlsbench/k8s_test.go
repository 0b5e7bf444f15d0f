package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// TestK8sManifest: the printed manifest decodes strictly into the
// Kubernetes types, and every agent's command line, variables expanded, is
// one the engine accepts.
func TestK8sManifest(t *testing.T) {
	start := time.Now().Add(30 * time.Minute).UTC().Truncate(time.Millisecond) // the Job lives 1h: start and load within it
	// A token file that does not exist yet: made, mode 0600.
	tokFile := filepath.Join(t.TempDir(), "run.token")
	caFile := filepath.Join(t.TempDir(), "collector-ca.pem")
	_, caPEM, err := agent.CollectorTLS([]string{"10.0.0.9"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(caFile, caPEM, 0o644)
	code, out, stderr := invoke(t, context.Background(), "k8s", "manifest", "--agents", "3", "--image", "registry.example/tlsbench:v1",
		"--name", "lab-cps", "--start-at", start.Format(time.RFC3339Nano), "--report-to", "https://10.0.0.9:7070/",
		"--node-selector", "role=loadgen", "--cpu", "500m", "--memory", "512Mi", "--token-file", tokFile, "--collector-cacert", caFile,
		"--", "cps", "https://192.0.2.7:8443/1k", "-c", "6", "-d", "5s", "--profile", "ecdhe-rsa-aes128-gcm-sha256-p256")
	if code != exitOK || !strings.Contains(stderr, "wrote a new token to "+tokFile) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := os.Stat(tokFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", st, err)
	}
	tokData, _ := os.ReadFile(tokFile)
	token := strings.TrimSpace(string(tokData))
	var svc corev1.Service
	var job batchv1.Job
	var secret corev1.Secret
	var policy networkingv1.NetworkPolicy
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("%d documents:\n%s", len(docs), out)
	}
	for i, obj := range []any{&secret, &policy, &svc, &job} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]+"\n"), obj); err != nil {
			t.Fatalf("document %d is not a %T (%v):\n%s", i, obj, err, docs[i])
		}
	}
	if secret.Kind != "Secret" || policy.Kind != "NetworkPolicy" || svc.Kind != "Service" || job.Kind != "Job" {
		t.Fatalf("kinds %s %s %s %s", secret.Kind, policy.Kind, svc.Kind, job.Kind)
	}
	// The token is in the Secret, and the pods' environment refers to it;
	// it is nowhere else in the manifest.
	if secret.StringData["token"] != token || secret.StringData["collector-ca.pem"] != string(caPEM) || strings.Count(out, token) != 1 {
		t.Errorf("the Secret holds %q (token %q), the token appears %d times", secret.StringData, token, strings.Count(out, token))
	}
	refs := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if refs[agent.EnvToken] != secret.Name+"/token" || refs[agent.EnvCollectorCA] != secret.Name+"/collector-ca.pem" {
		t.Errorf("the agents' credentials come from %v, want the Secret %s", refs, secret.Name)
	}
	// The policy: the agents' pods, no ingress, egress to the DUT's and
	// the collector's address and port only.
	ps := policy.Spec
	var egress []string
	for _, r := range ps.Egress {
		for _, to := range r.To {
			for _, p := range r.Ports {
				egress = append(egress, to.IPBlock.CIDR+":"+p.Port.String())
			}
		}
		if len(r.To) == 0 {
			egress = append(egress, "any")
		}
	}
	if !slices.Equal(ps.PolicyTypes, []networkingv1.PolicyType{"Ingress", "Egress"}) || len(ps.Ingress) != 0 ||
		!slices.Equal(egress, []string{"192.0.2.7/32:8443", "10.0.0.9/32:7070"}) ||
		ps.PodSelector.MatchLabels["app.kubernetes.io/instance"] != "lab-cps" {
		t.Errorf("network policy %+v, egress %v", ps, egress)
	}
	// The pods keep what they had: non-root, read-only root, no token of
	// the API, no capabilities.
	pod := job.Spec.Template.Spec
	cs := pod.Containers[0].SecurityContext
	if !*pod.SecurityContext.RunAsNonRoot || *pod.AutomountServiceAccountToken || !*cs.ReadOnlyRootFilesystem || *cs.AllowPrivilegeEscalation ||
		!slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("pod security %+v, container %+v", pod.SecurityContext, cs)
	}
	if job.Name != "lab-cps" || job.Spec.Template.Spec.Subdomain != svc.Name || *job.Spec.Completions != 3 {
		t.Errorf("job %s, subdomain %s, service %s", job.Name, job.Spec.Template.Spec.Subdomain, svc.Name)
	}
	// Every agent's run, as it reads it from its environment, is one the
	// engine accepts: its share of the load, the agreed start, the collector.
	run := manifestRun(t, job)
	if a := run.Agent; a == nil || a.Shards != 3 || !a.StartAt.Equal(start) || a.ReportTo != "https://10.0.0.9:7070/" {
		t.Errorf("agents' share %+v", a)
	}
	for i := range 3 {
		n := strconv.Itoa(i)
		env := map[string]string{agent.EnvRun: manifestEnv(job)[agent.EnvRun], agent.EnvShard: n, agent.EnvName: "lab-cps-" + n}
		spec, err := agent.FromEnv(func(v string) string { return env[v] })
		if err != nil {
			t.Errorf("agent %d: the engine refuses its run: %v", i, err)
			continue
		}
		if spec.Concurrency != 2 || spec.Agent.Shard != i || spec.Agent.Name != "lab-cps-"+n || spec.Profile != "ecdhe-rsa-aes128-gcm-sha256-p256" || spec.Duration != 5*time.Second {
			t.Errorf("agent %d runs %+v, %+v", i, spec, spec.Agent)
		}
	}

	// Without --start-at: now + --start-in (default 2m), a whole second.
	before := time.Now()
	// The token from the environment; names, not addresses: the policy
	// allows the ports, and DNS.
	t.Setenv(agent.EnvToken, testRunToken)
	code, out, stderr = invoke(t, context.Background(), "k8s", "manifest", "--agents", "2", "--image", "i", "--report-to", "http://collector:7070/",
		"--", "throughput", "https://dut/1m")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	docs = strings.Split(out, "\n---\n")
	if err := yaml.UnmarshalStrict([]byte(docs[3]), &job); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &policy); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(docs[0], testRunToken) || len(policy.Spec.Egress) != 3 || policy.Spec.Egress[2].Ports[0].Port.IntValue() != 53 {
		t.Errorf("secret %s\npolicy %+v", docs[0], policy.Spec)
	}
	at := manifestRun(t, job).Agent.StartAt
	if lo, hi := before.Add(2*time.Minute), time.Now().Add(2*time.Minute+time.Second); at.Before(lo.Truncate(time.Second)) || at.After(hi) || !at.Equal(at.Truncate(time.Second)) {
		t.Errorf("start %s, want within [%s, %s]", at, lo, hi)
	}
}

// manifestEnv returns the plain variables of the Job's container.
func manifestEnv(job batchv1.Job) map[string]string {
	env := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	return env
}

// manifestRun decodes the run the Job's agents receive.
func manifestRun(t *testing.T, job batchv1.Job) runner.Spec {
	t.Helper()
	var r runner.Spec
	if err := json.Unmarshal([]byte(manifestEnv(job)[agent.EnvRun]), &r); err != nil {
		t.Fatalf("%s: %v", agent.EnvRun, err)
	}
	return r
}

func TestK8sBadInput(t *testing.T) {
	t.Setenv(agent.EnvToken, testRunToken)
	loose := filepath.Join(t.TempDir(), "loose.token")
	os.WriteFile(loose, []byte(testRunToken), 0o644)
	short := filepath.Join(t.TempDir(), "short.token")
	os.WriteFile(short, []byte("abc"), 0o600)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	base := []string{"k8s", "manifest", "--agents", "4", "--image", "tlsbench:v1", "--report-to", "http://10.0.0.9:7070/"}
	with := func(flags []string, engine ...string) []string {
		a := append(slices.Clone(base), flags...)
		return append(append(a, "--"), engine...)
	}
	cps := []string{"cps", "https://dut/1k", "-c", "8"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"k8s"}, "want a subcommand"},
		{[]string{"k8s", "apply"}, `unknown subcommand "apply"`},
		{[]string{"k8s", "manifest", "--image", "i", "--", "cps", "https://dut/"}, "--agents N is required"},
		{with([]string{"--agents", "0"}, cps...), "--agents N is required and at least 1, got 0"},
		{[]string{"k8s", "manifest", "--agents", "2", "--", "cps", "https://dut/"}, "--image is required"},
		// Without a collector, every agent's record is lost with its pod.
		{[]string{"k8s", "manifest", "--agents", "2", "--image", "i", "--", "cps", "https://dut/"}, "--report-to URL is required"},
		{with(nil), "nothing after --"},
		{append(slices.Clone(base), cps...), "the engine command follows --"},
		{append(slices.Clone(base), "extra", "--", "cps", "https://dut/"), `got "extra" before --`},
		{with(nil, "cps", "http://dut/1k"), "scheme must be https"},
		{with(nil, "cps", "https://dut/1k", "-c", "2"), "cannot be divided among 4 agents"},
		{with(nil, "cps", "-c", "8"), "need a URL"},
		{with(nil, "cps", "https://dut/", "--profile", "ecdhe-ecdsa-aes128-sha256-p256", "--profile", "ecdhe-rsa-aes128-gcm-sha256-p256"), "one --profile"},
		{with(nil, "cps", "https://dut/", "--no-such-flag"), "unknown flag"},
		{with(nil, "serve"), `engine "serve"`},
		{with(nil, "cps", "https://dut/", "--shard", "0/2"), "--shard"},
		{with(nil, "cps", "https://dut/", "--json", "r.json"), "--json"},
		{with([]string{"--start-at", "2020-01-01T00:00:00Z"}, cps...), "has passed"},
		{with([]string{"--start-at", "tomorrow"}, cps...), "bad --start-at"},
		{with([]string{"--start-at", future, "--start-in", "5m"}, cps...), "exclude each other"},
		{with([]string{"--start-in", "0s"}, cps...), "--start-in must be positive"},
		{with([]string{"--start-tolerance", "0s"}, cps...), "--start-tolerance must be positive"},
		{with([]string{"--active-deadline", "1m"}, cps...), "ends before the start"},
		{with([]string{"--cpu", "1Gi"}, cps...), "bad CPU quantity"},
		{with([]string{"--memory", "0"}, cps...), "bad memory quantity"},
		{with([]string{"--name", "Lab_CPS"}, cps...), "bad name"},
		{with([]string{"--namespace", "a.b"}, cps...), "bad namespace"},
		{with([]string{"--node-selector", "loadgen"}, cps...), "bad --node-selector"},
		{with([]string{"--node-selector", "a b=c"}, cps...), "bad node selector"},
		{with([]string{"--report-to", "collector:7070"}, cps...), "bad report URL"},
		{with([]string{"--agents", "x"}, cps...), "--agents"},
		{with([]string{"--token-file", loose}, cps...), "mode 0644 lets others read or change it"},
		{with([]string{"--token-file", short}, cps...), "3 characters, want at least 22"},
		{with([]string{"--token-file", filepath.Join(loose, "x")}, cps...), "--token-file"},
		{with([]string{"--collector-cacert", loose}, cps...), "--collector-cacert is for an https --report-to"},
		{with(nil, "cps", "https://dut/", "-c", "8", "--token-file", loose), "give them to k8s manifest"},
	} {
		code, out, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitBadUsage, stderr)
			continue
		}
		if out != "" {
			t.Errorf("%q: printed %q", tc.args, out)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q, want one line naming %q", tc.args, stderr, tc.want)
		}
	}
	code, out, _ := invoke(t, context.Background(), "k8s", "manifest", "--help")
	if code != exitOK || !strings.Contains(out, "--start-in") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}
