package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/runner"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestK8sManifest: the printed manifest decodes strictly into the
// Kubernetes types, and every agent's command line, variables expanded, is
// one the engine accepts.
func TestK8sManifest(t *testing.T) {
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	code, out, stderr := invoke(t, context.Background(), "k8s", "manifest", "--agents", "3", "--image", "registry.example/tlsbench:v1",
		"--name", "lab-cps", "--start-at", start.Format(time.RFC3339Nano), "--report-to", "http://10.0.0.9:7070/",
		"--node-selector", "role=loadgen", "--cpu", "500m", "--memory", "512Mi",
		"--", "cps", "https://dut.example:8443/1k", "-c", "6", "-d", "5s", "--profile", "ecdhe-rsa-aes128-gcm-sha256-p256")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var svc corev1.Service
	var job batchv1.Job
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents:\n%s", len(docs), out)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &svc); err != nil || svc.Kind != "Service" {
		t.Fatalf("the first document is not a Service (%v):\n%s", err, docs[0])
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil || job.Kind != "Job" {
		t.Fatalf("the second document is not a Job (%v):\n%s", err, docs[1])
	}
	if job.Name != "lab-cps" || job.Spec.Template.Spec.Subdomain != svc.Name || *job.Spec.Completions != 3 {
		t.Errorf("job %s, subdomain %s, service %s", job.Name, job.Spec.Template.Spec.Subdomain, svc.Name)
	}
	// Every agent's run, as it reads it from its environment, is one the
	// engine accepts: its share of the load, the agreed start, the collector.
	run := manifestRun(t, job)
	if a := run.Agent; a == nil || a.Shards != 3 || !a.StartAt.Equal(start) || a.ReportTo != "http://10.0.0.9:7070/" {
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
	code, out, stderr = invoke(t, context.Background(), "k8s", "manifest", "--agents", "2", "--image", "i", "--report-to", "http://collector:7070/",
		"--", "throughput", "https://dut/1m")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	docs = strings.Split(out, "\n---\n")
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
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
