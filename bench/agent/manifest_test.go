package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// manifestDocs splits a multi-document YAML stream.
func manifestDocs(b []byte) []string {
	var docs []string
	for _, d := range strings.Split(string(b), "\n---\n") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

// decodedManifest is a manifest's objects, decoded strictly.
type decodedManifest struct {
	Service   *corev1.Service
	Job       *batchv1.Job
	Secret    *corev1.Secret
	Policy    *networkingv1.NetworkPolicy
	ConfigMap *corev1.ConfigMap
}

// decodeManifestAll decodes every document strictly (an unknown or
// misspelled field is an error) into its k8s.io/api type: one Secret, one
// NetworkPolicy, one Service, one Job and perhaps a ConfigMap.
func decodeManifestAll(t *testing.T, b []byte) decodedManifest {
	t.Helper()
	var m decodedManifest
	for i, doc := range manifestDocs(b) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Service":
			m.Service = &corev1.Service{}
			obj = m.Service
		case "batch/v1 Job":
			m.Job = &batchv1.Job{}
			obj = m.Job
		case "v1 Secret":
			m.Secret = &corev1.Secret{}
			obj = m.Secret
		case "networking.k8s.io/v1 NetworkPolicy":
			m.Policy = &networkingv1.NetworkPolicy{}
			obj = m.Policy
		case "v1 ConfigMap":
			m.ConfigMap = &corev1.ConfigMap{}
			obj = m.ConfigMap
		default:
			t.Fatalf("document %d: unexpected %s %s", i, tm.APIVersion, tm.Kind)
		}
		// The splitter took the document's last newline with "---".
		if err := yaml.UnmarshalStrict([]byte(doc+"\n"), obj); err != nil {
			t.Fatalf("document %d (%s) does not decode strictly: %v\n%s", i, tm.Kind, err, doc)
		}
	}
	if m.Service == nil || m.Job == nil || m.Secret == nil || m.Policy == nil {
		t.Fatalf("want a Secret, a NetworkPolicy, a Service and a Job, got %+v:\n%s", m, b)
	}
	return m
}

// decodeManifest decodes a manifest strictly (decodeManifestAll) and
// returns its Service and Job.
func decodeManifest(t *testing.T, b []byte) (*corev1.Service, *batchv1.Job) {
	t.Helper()
	m := decodeManifestAll(t, b)
	return m.Service, m.Job
}

// manifestRun is a run of engine against url.
func manifestRun(engine vocab.Engine, url string, conc int, d time.Duration) runner.Spec {
	s := runner.Defaults(engine)
	s.Target.URL, s.Target.Address, s.Target.ServerName, s.Host = url, "dut:443", "dut", "dut"
	s.Concurrency, s.Duration = conc, d
	return s
}

// agentEnv returns the container's plain variables and those from the
// downward API (name → field path).
func agentEnv(t *testing.T, c corev1.Container) (plain, fields map[string]string) {
	plain, fields = map[string]string{}, map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			fields[e.Name] = e.ValueFrom.FieldRef.FieldPath
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			fields[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom == nil:
			plain[e.Name] = e.Value
		default:
			t.Errorf("env %s is neither a value nor from the downward API", e.Name)
		}
	}
	return plain, fields
}

// runOf decodes the run spec of the container's environment.
func runOf(t *testing.T, plain map[string]string) runner.Spec {
	t.Helper()
	var r runner.Spec
	if err := json.Unmarshal([]byte(plain[agent.EnvRun]), &r); err != nil || r.Agent == nil {
		t.Fatalf("%s %q: %v", agent.EnvRun, plain[agent.EnvRun], err)
	}
	return r
}

func validOptions() agent.ManifestOptions {
	return agent.ManifestOptions{
		Name:      "bench-a",
		Namespace: "lab",
		Image:     "registry.example/tlsbench:v1",
		Agents:    4,
		Run:       manifestRun(vocab.EngineCPS, "https://dut:443/1k", 512, 60*time.Second),
		// Not UTC, with a fraction of a second: written in UTC, fraction kept.
		StartAt:        time.Date(2026, 11, 30, 16, 0, 0, 250_000_000, time.FixedZone("CET", 3600)),
		StartTolerance: 2 * time.Second,
		ReportTo:       "http://10.0.0.9:7070/",
		CPU:            "2",
		Memory:         "1536Mi",
		ActiveDeadline: 30 * time.Minute,
		NodeSelector:   map[string]string{"node-role.example.com/loadgen": "true"},
		Token:          testToken,
	}
}

func TestManifestIndexedJob(t *testing.T) {
	o := validOptions()
	b, err := agent.Manifest(o)
	if err != nil {
		t.Fatal(err)
	}
	svc, job := decodeManifest(t, b)
	pod := job.Spec.Template
	spec := pod.Spec

	// Names, namespace, labels.
	for _, n := range []string{svc.Name, job.Name, svc.Namespace, job.Namespace, spec.Subdomain} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("%q is not a DNS-1123 label: %v", n, errs)
		}
	}
	// The host name of the last pod.
	if errs := validation.IsDNS1123Label(job.Name + "-3"); len(errs) > 0 {
		t.Errorf("pod host name: %v", errs)
	}
	if job.Name != "bench-a" || svc.Name != "bench-a" || job.Namespace != "lab" || svc.Namespace != "lab" {
		t.Errorf("names %s/%s, %s/%s", svc.Namespace, svc.Name, job.Namespace, job.Name)
	}
	want := map[string]string{"app.kubernetes.io/name": "tlsbench", "app.kubernetes.io/instance": "bench-a"}
	for what, l := range map[string]map[string]string{"service": svc.Labels, "job": job.Labels, "pod template": pod.Labels} {
		if !labels.SelectorFromSet(want).Matches(labels.Set(l)) {
			t.Errorf("%s labels %v lack %v", what, l, want)
		}
	}

	// The Indexed Job.
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v", job.Spec.CompletionMode)
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil || *job.Spec.Completions != 4 || *job.Spec.Parallelism != 4 {
		t.Errorf("completions %v, parallelism %v, want 4 and 4", job.Spec.Completions, job.Spec.Parallelism)
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v, want 0", job.Spec.BackoffLimit)
	}
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != 1800 {
		t.Errorf("activeDeadlineSeconds %v, want 1800", d)
	}
	if ttl := job.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl <= 0 {
		t.Errorf("ttlSecondsAfterFinished %v", ttl)
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", spec.RestartPolicy)
	}
	if a := spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken %v, want false", a)
	}
	if e := spec.EnableServiceLinks; e == nil || *e {
		t.Errorf("enableServiceLinks %v, want false", e)
	}
	if spec.NodeSelector["node-role.example.com/loadgen"] != "true" || len(spec.NodeSelector) != 1 {
		t.Errorf("nodeSelector %v", spec.NodeSelector)
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: want a numeric non-root user", sc)
	}

	// The headless Service names the pods' subdomain and selects them.
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP %q, want None (headless)", svc.Spec.ClusterIP)
	}
	if spec.Subdomain != svc.Name {
		t.Errorf("subdomain %q, service %q", spec.Subdomain, svc.Name)
	}
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("service selector %v does not select the pods %v", svc.Spec.Selector, pod.Labels)
	}

	// One agent per node: required anti-affinity against this job's pods.
	if spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil {
		t.Fatal("no pod anti-affinity")
	}
	terms := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 1 || terms[0].TopologyKey != corev1.LabelHostname {
		t.Fatalf("anti-affinity terms %+v, want one on %s", terms, corev1.LabelHostname)
	}
	sel, err := metav1.LabelSelectorAsSelector(terms[0].LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("anti-affinity selector %s does not match the pods %v", sel, pod.Labels)
	}
	other := labels.Set{"app.kubernetes.io/name": "tlsbench", "app.kubernetes.io/instance": "bench-b"}
	if sel.Matches(other) {
		t.Errorf("anti-affinity selector %s also matches another job's pods", sel)
	}

	// The container: env before use, agent flags, Guaranteed resources.
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	if c.Image != o.Image {
		t.Errorf("image %q", c.Image)
	}
	plain, env := agentEnv(t, c)
	if got := env[agent.EnvShard]; got != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("%s from %q", agent.EnvShard, got)
	}
	if got := env[agent.EnvName]; got != "metadata.name" {
		t.Errorf("%s from %q", agent.EnvName, got)
	}
	if !slices.Equal(c.Args, []string{"agent"}) {
		t.Errorf("args %q, want the agent command", c.Args)
	}
	// The run as data: every agent's share, the start and the collector.
	run := runOf(t, plain)
	a := run.Agent
	if a.Shards != 4 || a.StartTolerance != 2*time.Second || a.ReportTo != "http://10.0.0.9:7070/" || !a.StartAt.Equal(o.StartAt) ||
		a.StartAt.Format(time.RFC3339Nano) != "2026-11-30T15:00:00.25Z" {
		t.Errorf("agent share %+v", a)
	}
	if run.Engine != o.Run.Engine || run.Target.URL != o.Run.Target.URL || run.Concurrency != 512 || run.Duration != time.Minute {
		t.Errorf("run %+v, want %+v", run, o.Run)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okr := c.Resources.Requests[r]
		lim, okl := c.Resources.Limits[r]
		if !okr || !okl || req.Cmp(lim) != 0 {
			t.Errorf("%s: request %v, limit %v: want both, equal (Guaranteed QoS)", r, req.String(), lim.String())
		}
	}
	for r, s := range map[corev1.ResourceName]string{corev1.ResourceCPU: o.CPU, corev1.ResourceMemory: o.Memory} {
		q := resource.MustParse(s)
		if got := c.Resources.Limits[r]; got.Cmp(q) != 0 {
			t.Errorf("%s limit %s, want %s", r, got.String(), s)
		}
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container security context %+v", sc)
	}

	// Each agent's run is the container's, its index and name those of
	// its pod, its share of the load one quarter.
	for i := range 4 {
		r, err := agent.ManifestAgentSpec(o, i)
		if err != nil {
			t.Fatal(err)
		}
		if r.Agent.Shard != i || r.Agent.Shards != 4 || r.Agent.Name != "bench-a-"+strconv.Itoa(i) || r.Concurrency != 128 {
			t.Errorf("agent %d runs %+v with concurrency %d", i, r.Agent, r.Concurrency)
		}
		from, err := agent.FromEnv(func(v string) string {
			return map[string]string{agent.EnvRun: plain[agent.EnvRun], agent.EnvShard: strconv.Itoa(i), agent.EnvName: "bench-a-" + strconv.Itoa(i)}[v]
		})
		if err != nil || !reflect.DeepEqual(from, r) {
			t.Errorf("agent %d reads\n%+v (%v)\nwant\n%+v", i, from, err, r)
		}
	}
	if _, err := agent.ManifestAgentSpec(o, 4); err == nil {
		t.Error("agent index 4 of 4 accepted")
	}
}

func TestManifestDefaults(t *testing.T) {
	o := agent.ManifestOptions{
		Image: "tlsbench:dev", Agents: 1, Run: manifestRun(vocab.EngineThroughput, "https://dut/1m", 8, 10*time.Second),
		StartAt: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC), ReportTo: "http://collector:7070/", Token: testToken,
	}
	b, err := agent.Manifest(o)
	if err != nil {
		t.Fatal(err)
	}
	svc, job := decodeManifest(t, b)
	d := agent.DefaultManifestOptions()
	if job.Name != d.Name || svc.Name != d.Name || job.Namespace != "" || svc.Namespace != "" {
		t.Errorf("names %q/%q %q/%q", job.Namespace, job.Name, svc.Namespace, svc.Name)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if cpu, mem := c.Resources.Limits[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory]; cpu.String() != d.CPU || mem.String() != d.Memory {
		t.Errorf("resources %v", c.Resources)
	}
	if d := *job.Spec.ActiveDeadlineSeconds; d != 3600 {
		t.Errorf("activeDeadlineSeconds %d", d)
	}
	plain, _ := agentEnv(t, c)
	if a := runOf(t, plain).Agent; a.ReportTo != o.ReportTo || a.StartAt.Format(time.RFC3339Nano) != "2026-11-30T15:00:00Z" || a.StartTolerance != time.Second || a.Shards != 1 {
		t.Errorf("agent share %+v", a)
	}
	if len(job.Spec.Template.Spec.NodeSelector) != 0 {
		t.Errorf("nodeSelector %v", job.Spec.Template.Spec.NodeSelector)
	}
}

// TestManifestStrictDecodeCatchesTypos proves the strict decoding above
// would notice a misspelled field: the same documents with one field
// renamed fail.
func TestManifestStrictDecodeCatchesTypos(t *testing.T) {
	b, err := agent.Manifest(validOptions())
	if err != nil {
		t.Fatal(err)
	}
	docs := manifestDocs(b)
	if len(docs) != 4 {
		t.Fatalf("%d documents", len(docs))
	}
	jobDoc := -1
	decode := func(doc string) error {
		switch {
		case strings.Contains(doc, "kind: Service"):
			return yaml.UnmarshalStrict([]byte(doc), &corev1.Service{})
		case strings.Contains(doc, "kind: Secret"):
			return yaml.UnmarshalStrict([]byte(doc), &corev1.Secret{})
		case strings.Contains(doc, "kind: NetworkPolicy"):
			return yaml.UnmarshalStrict([]byte(doc), &networkingv1.NetworkPolicy{})
		}
		return yaml.UnmarshalStrict([]byte(doc), &batchv1.Job{})
	}
	for i, doc := range docs {
		if strings.Contains(doc, "kind: Job") {
			jobDoc = i
		}
	}
	for _, doc := range docs {
		if err := decode(doc); err != nil {
			t.Fatalf("the unchanged document fails: %v", err)
		}
	}
	fields := []string{"clusterIP", "selector", "completionMode", "backoffLimit", "restartPolicy", "subdomain",
		"automountServiceAccountToken", "requiredDuringSchedulingIgnoredDuringExecution", "topologyKey",
		"fieldPath", "limits", "readOnlyRootFilesystem", "secretKeyRef", "policyTypes", "podSelector", "ipBlock", "egress"}
	for _, f := range fields {
		found := false
		for _, doc := range docs {
			if !strings.Contains(doc, " "+f+":") {
				continue
			}
			found = true
			typo := strings.Replace(doc, " "+f+":", " "+f+"s:", 1)
			if err := decode(typo); err == nil {
				t.Errorf("%s misspelled %ss: decoded without error", f, f)
			}
		}
		if !found {
			t.Errorf("field %s not in the manifest", f)
		}
	}
	// A field at the wrong level is unknown there too: the pod's
	// restartPolicy in the Job's spec.
	moved := strings.Replace(docs[jobDoc], "  completionMode: Indexed\n", "  completionMode: Indexed\n  restartPolicy: Never\n", 1)
	if moved == docs[jobDoc] {
		t.Fatal("completionMode not found at the Job spec's level")
	}
	if err := decode(moved); err == nil {
		t.Error("restartPolicy in the Job's spec decoded without error")
	}
}

func TestManifestRefuses(t *testing.T) {
	for _, tc := range []struct {
		edit func(*agent.ManifestOptions)
		want string
	}{
		{func(o *agent.ManifestOptions) { o.Agents = 0 }, "agents"},
		{func(o *agent.ManifestOptions) { o.Agents = -3 }, "agents"},
		{func(o *agent.ManifestOptions) { o.Agents = 100001 }, "agents"},
		{func(o *agent.ManifestOptions) { o.Name = "Bench" }, "bad name"},
		{func(o *agent.ManifestOptions) { o.Name = "bench_a" }, "bad name"},
		{func(o *agent.ManifestOptions) { o.Name = "-bench" }, "bad name"},
		{func(o *agent.ManifestOptions) { o.Name = "bench." }, "bad name"},
		{func(o *agent.ManifestOptions) { o.Name, o.Agents = strings.Repeat("a", 62), 10 }, "61 characters at most"},
		{func(o *agent.ManifestOptions) { o.Namespace = "Lab" }, "bad namespace"},
		{func(o *agent.ManifestOptions) { o.Image = "" }, "image"},
		{func(o *agent.ManifestOptions) { o.Image = "tlsbench v1" }, "bad image"},
		{func(o *agent.ManifestOptions) { o.Run.Engine = "" }, `engine ""`},
		{func(o *agent.ManifestOptions) { o.Run.Engine = "serve" }, `engine "serve"`},
		{func(o *agent.ManifestOptions) { o.StartAt = time.Time{} }, "start time"},
		{func(o *agent.ManifestOptions) { o.StartTolerance = -time.Second }, "tolerance"},
		{func(o *agent.ManifestOptions) { o.ReportTo = "" }, "no report URL: every agent's record would be lost"},
		{func(o *agent.ManifestOptions) { o.ReportTo = "ftp://c/" }, "bad report URL"},
		{func(o *agent.ManifestOptions) { o.ReportTo = "collector:7070" }, "bad report URL"},
		{func(o *agent.ManifestOptions) { o.CPU = "1Gi" }, "CPU quantity"},
		{func(o *agent.ManifestOptions) { o.CPU = "0" }, "CPU quantity"},
		{func(o *agent.ManifestOptions) { o.CPU = "0m" }, "CPU quantity"},
		{func(o *agent.ManifestOptions) { o.CPU = "-1" }, "CPU quantity"},
		{func(o *agent.ManifestOptions) { o.CPU = "two" }, "CPU quantity"},
		{func(o *agent.ManifestOptions) { o.Memory = "1GB" }, "memory quantity"},
		{func(o *agent.ManifestOptions) { o.Memory = "0Mi" }, "memory quantity"},
		{func(o *agent.ManifestOptions) { o.Memory = "512m" }, "memory quantity"},
		{func(o *agent.ManifestOptions) { o.ActiveDeadline = -time.Minute }, "negative"},
		{func(o *agent.ManifestOptions) { o.NodeSelector = map[string]string{"bad key": "x"} }, "node selector"},
		{func(o *agent.ManifestOptions) { o.NodeSelector = map[string]string{"/role": "x"} }, "node selector"},
		{func(o *agent.ManifestOptions) { o.NodeSelector = map[string]string{"role": "a b"} }, "node selector"},
	} {
		o := validOptions()
		tc.edit(&o)
		_, err := agent.Manifest(o)
		if err == nil {
			t.Errorf("%+v: accepted", o)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q: want one line naming %q", err, tc.want)
		}
		if _, err2 := agent.ManifestAgentSpec(o, 0); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("ManifestAgentSpec: %v, Manifest: %v", err2, err)
		}
	}
	o := validOptions()
	o.Name, o.Agents = strings.Repeat("a", 61), 10
	if _, err := agent.Manifest(o); err != nil {
		t.Errorf("a 61-character name with 10 agents: %v", err)
	}
}

// TestManifestQuantities: every quantity Manifest accepts is one
// Kubernetes parses, and positive.
func TestManifestQuantities(t *testing.T) {
	for _, tc := range []struct {
		cpu, memory string
		ok          bool
	}{
		{"500m", "512Mi", true}, {"2", "1Gi", true}, {"1.5", "2G", true}, {"0.25", "1.5Gi", true},
		{"100m", "1073741824", true}, {"16", "64Ki", true}, {"3", "2T", true},
		{"1.2345", "1Gi", false}, {"1e3", "1Gi", false}, {"1", "1e9", false}, {"1", "1Gi ", false},
		{"1", "-1Gi", false}, {" 1", "1Gi", false}, {"1", "", true},
	} {
		o := validOptions()
		o.CPU, o.Memory = tc.cpu, tc.memory
		b, err := agent.Manifest(o)
		if (err == nil) != tc.ok {
			t.Errorf("cpu %q memory %q: error %v, want ok=%v", tc.cpu, tc.memory, err, tc.ok)
			continue
		}
		if err != nil {
			continue
		}
		for _, s := range []string{tc.cpu, tc.memory} {
			if s == "" {
				continue
			}
			q, err := resource.ParseQuantity(s)
			if err != nil || q.Sign() <= 0 {
				t.Errorf("accepted %q, which Kubernetes parses as %v, %v", s, q.String(), err)
			}
		}
		decodeManifest(t, b)
	}
}

// TestManifestNodeSelector: the keys and values Manifest accepts are
// Kubernetes label keys and values.
func TestManifestNodeSelector(t *testing.T) {
	for _, sel := range []map[string]string{
		{"kubernetes.io/arch": "amd64"}, {"role": ""}, {"example.com/pool": "load_gen.1"}, {"a": "b", "c": "d"},
	} {
		o := validOptions()
		o.NodeSelector = sel
		b, err := agent.Manifest(o)
		if err != nil {
			t.Errorf("%v: %v", sel, err)
			continue
		}
		_, job := decodeManifest(t, b)
		for k, v := range job.Spec.Template.Spec.NodeSelector {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				t.Errorf("%s=%s: %v", k, v, errs)
			}
		}
		if len(job.Spec.Template.Spec.NodeSelector) != len(sel) {
			t.Errorf("nodeSelector %v, want %v", job.Spec.Template.Spec.NodeSelector, sel)
		}
	}
}

// TestManifestShipsFiles: a run's CA and profile files are read here and
// shipped in a ConfigMap that the pods mount where the rewritten run
// points.
func TestManifestShipsFiles(t *testing.T) {
	dir := t.TempDir()
	ca, prof := filepath.Join(dir, "lab-ca.pem"), filepath.Join(dir, "mine.yaml")
	os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644)
	os.WriteFile(prof, []byte("profiles: []\n"), 0o644)
	run := manifestRun(vocab.EngineCPS, "https://dut/", 8, time.Second)
	run.Target.CAFile, run.ProfileFiles = ca, []string{prof}
	files, err := agent.ShipFiles(&run)
	if err != nil {
		t.Fatal(err)
	}
	if run.Target.CAFile != agent.ManifestFilesDir+"/lab-ca.pem" || !slices.Equal(run.ProfileFiles, []string{agent.ManifestFilesDir + "/mine.yaml"}) || len(files) != 2 {
		t.Fatalf("ShipFiles: cacert %s, profile files %q, %d files", run.Target.CAFile, run.ProfileFiles, len(files))
	}
	o := validOptions()
	o.Run, o.Files = run, files
	b, err := agent.Manifest(o)
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	var job *batchv1.Job
	for _, doc := range manifestDocs(b) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "ConfigMap":
			cm = &corev1.ConfigMap{}
			// The splitter took the document's last newline with "---".
			if err := yaml.UnmarshalStrict([]byte(doc+"\n"), cm); err != nil {
				t.Fatal(err)
			}
		case "Job":
			job = &batchv1.Job{}
			if err := yaml.UnmarshalStrict([]byte(doc), job); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cm == nil || job == nil {
		t.Fatalf("want a ConfigMap and a Job:\n%s", b)
	}
	if cm.Data["lab-ca.pem"] != string(files["lab-ca.pem"]) || cm.Data["mine.yaml"] != "profiles: []\n" {
		t.Errorf("ConfigMap data %q", cm.Data)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != cm.Name ||
		len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != pod.Volumes[0].Name ||
		c.VolumeMounts[0].MountPath != agent.ManifestFilesDir || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("the pods do not mount the ConfigMap %s read-only at %s: volumes %+v, mounts %+v", cm.Name, agent.ManifestFilesDir, pod.Volumes, c.VolumeMounts)
	}
	if errs := validation.IsDNS1123Subdomain(cm.Name); len(errs) > 0 {
		t.Errorf("ConfigMap name %q: %v", cm.Name, errs)
	}
	for k := range cm.Data {
		if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
			t.Errorf("key %q: %v", k, errs)
		}
	}

	// Refused: two files of one name, a missing file.
	other := filepath.Join(dir, "sub")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "lab-ca.pem"), []byte("x"), 0o644)
	two := runner.Spec{Target: metrics.Target{CAFile: ca}, ProfileFiles: []string{filepath.Join(other, "lab-ca.pem")}}
	if _, err := agent.ShipFiles(&two); err == nil || !strings.Contains(err.Error(), "same name") {
		t.Errorf("two files named lab-ca.pem: err = %v", err)
	}
	if _, err := agent.ShipFiles(&runner.Spec{Target: metrics.Target{CAFile: filepath.Join(dir, "none.pem")}}); err == nil {
		t.Error("a missing file was shipped")
	}
}
