package agent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// ManifestOptions says what Manifest writes. DefaultManifestOptions fills
// the defaults; Manifest applies them to zero fields too.
type ManifestOptions struct {
	// Name names the Job and its headless Service (the pods' subdomain): a
	// DNS-1123 label, as NAME-INDEX must be too. Default "tlsbench".
	Name string
	// Namespace, if set, is written into the objects (else kubectl's).
	Namespace string
	// Image is the agent image (see the Dockerfile). Required.
	Image string
	// Agents is N, the number of agents: one pod each, one per node.
	Agents int
	// Run is the run every agent takes a share of; Manifest sets its Agent.
	// Its files (CA, profiles) are those in the pods: see ShipFiles.
	Run runner.Spec
	// Command is the container's arguments (FromEnv reads the run).
	// Default ["agent"].
	Command []string
	// StartAt is when every agent starts the load. Required.
	StartAt time.Time
	// StartTolerance is how late an agent may still start. Default 1s.
	StartTolerance time.Duration
	// ReportTo is the collector's URL as the agents reach it. Required: a
	// pod keeps no file.
	ReportTo string
	// CPU and Memory are each agent's requests and limits (500m, 1.5;
	// 512Mi, 2G). Defaults "1" and "1Gi".
	CPU, Memory string
	// ActiveDeadline bounds the Job's life, waiting for StartAt included;
	// TTLAfterFinished keeps the finished Job and its pods' logs. Default
	// 1h each.
	ActiveDeadline, TTLAfterFinished time.Duration
	// NodeSelector, if set, restricts the agents to nodes with these labels.
	NodeSelector map[string]string
	// Files (base name → content) are shipped in a ConfigMap (NAME-files)
	// mounted read-only at ManifestFilesDir; see ShipFiles.
	Files map[string][]byte
	// Token is the run's token, in a Secret (NAME-auth) that the agents'
	// environment references (EnvToken), never in a command line. Required.
	Token string
	// CollectorCA, for an https ReportTo, is the PEM of the collector's CA,
	// in the same Secret (EnvCollectorCA).
	CollectorCA []byte
}

// ErrNoReportURL is a manifest without a collector to report to.
var ErrNoReportURL = errors.New("no report URL: every agent's record would be lost with its pod; " +
	"run tlsbench collect and give its URL")

// ManifestFilesDir is where the agents find the shipped files.
const ManifestFilesDir = "/etc/tlsbench/files"

// manifestMaxFiles bounds the shipped files (a ConfigMap holds 1 MiB).
const manifestMaxFiles = 900 << 10

// ShipFiles rewrites run's CA and profile file names to their place in the
// agents' pods and returns the files to ship with the manifest.
func ShipFiles(run *runner.Spec) (map[string][]byte, error) {
	files := map[string][]byte{}
	from := map[string]string{} // base name → local path
	total := 0
	ship := func(path string) (string, error) {
		base := filepath.Base(path)
		if base == "." || base == ".." || !manifestFileKey.MatchString(base) {
			return "", fmt.Errorf("file %s: its name must be letters, digits, '-', '_' or '.' to be shipped", path)
		}
		if prev, ok := from[base]; ok && prev != path {
			return "", fmt.Errorf("files %s and %s have the same name; the agents' directory holds one", prev, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if total += len(data); total > manifestMaxFiles {
			return "", fmt.Errorf("the files to ship exceed %d KiB (a ConfigMap holds 1 MiB)", manifestMaxFiles>>10)
		}
		from[base], files[base] = path, data
		return ManifestFilesDir + "/" + base, nil
	}
	var err error
	if f := run.Target.CAFile; f != "" {
		if run.Target.CAFile, err = ship(f); err != nil {
			return nil, fmt.Errorf("cacert: %w", err)
		}
	}
	pf := append([]string(nil), run.ProfileFiles...)
	for i, f := range pf {
		if pf[i], err = ship(f); err != nil {
			return nil, fmt.Errorf("profile file: %w", err)
		}
	}
	run.ProfileFiles = pf
	if len(files) == 0 {
		files = nil
	}
	return files, nil
}

// DefaultManifestOptions returns the defaults of ManifestOptions.
func DefaultManifestOptions() ManifestOptions {
	return ManifestOptions{
		Name:             "tlsbench",
		Command:          []string{"agent"},
		StartTolerance:   runner.DefaultStartTolerance,
		CPU:              "1",
		Memory:           "1Gi",
		ActiveDeadline:   time.Hour,
		TTLAfterFinished: time.Hour,
	}
}

// The labels of the Job, the Service and the pods.
const (
	manifestLabelApp      = "app.kubernetes.io/name"
	manifestLabelInstance = "app.kubernetes.io/instance"
	// manifestIndexAnnotation is the annotation Kubernetes puts on each
	// pod of an Indexed Job: its index, 0 to N-1.
	manifestIndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// manifestMaxAgents is Kubernetes' limit on completions and
	// parallelism of an Indexed Job.
	manifestMaxAgents = 100000
	// manifestNonrootID is the user and group nonroot of the distroless
	// image (see the Dockerfile).
	manifestNonrootID = 65532
)

// Manifest returns the YAML of a headless Service and an Indexed Job that
// run o.Run as o.Agents synchronized agents, one per node, ready for
// kubectl apply -f -. It refuses options Kubernetes or the agents would.
func Manifest(o ManifestOptions) ([]byte, error) {
	o, err := o.checked()
	if err != nil {
		return nil, err
	}
	if err := CheckToken(o.Token); err != nil {
		return nil, err
	}
	labels := map[string]string{manifestLabelApp: "tlsbench", manifestLabelInstance: o.Name}
	run, err := json.Marshal(o.run())
	if err != nil {
		return nil, err
	}
	policy, err := o.networkPolicy(labels)
	if err != nil {
		return nil, err
	}
	objects := []manifestObject{o.secret(labels), policy}
	if len(o.Files) > 0 {
		objects = append(objects, o.filesConfigMap(labels))
	}
	return o.encode(append(objects, o.service(labels), o.job(labels, string(run))))
}

// meta is the metadata of the manifest's objects named after the run.
func (o ManifestOptions) meta(labels map[string]string) manifestMeta {
	return manifestMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels}
}

// service is the headless Service the agents' pods name as their subdomain.
func (o ManifestOptions) service(labels map[string]string) manifestObject {
	return manifestObject{
		APIVersion: "v1",
		Kind:       "Service",
		Metadata:   o.meta(labels),
		// Headless: only the pods' DNS records (NAME-INDEX.NAME.NAMESPACE.svc).
		Spec: manifestServiceSpec{ClusterIP: "None", Selector: labels},
	}
}

// job is the Indexed Job of the agents, run being the run spec as JSON.
func (o ManifestOptions) job(labels map[string]string, run string) manifestObject {
	return manifestObject{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   o.meta(labels),
		Spec: manifestJobSpec{
			CompletionMode: "Indexed",
			Completions:    o.Agents,
			Parallelism:    o.Agents,
			// No retries: a re-run agent would start after the agreed
			// start and refuse, or measure a different window.
			BackoffLimit:            0,
			ActiveDeadlineSeconds:   manifestSeconds(o.ActiveDeadline),
			TTLSecondsAfterFinished: manifestSeconds(o.TTLAfterFinished),
			Template: manifestPodTemplate{
				Metadata: manifestMeta{Labels: labels},
				Spec:     o.podSpec(labels, run),
			},
		},
	}
}

// podSpec is an agent's pod: one per node, non-root, no API credentials.
func (o ManifestOptions) podSpec(labels map[string]string, run string) manifestPodSpec {
	var volumes []manifestVolume
	if len(o.Files) > 0 {
		volumes = []manifestVolume{{Name: "files", ConfigMap: manifestConfigMapVolume{Name: o.Name + "-files"}}}
	}
	return manifestPodSpec{
		Subdomain:     o.Name,
		RestartPolicy: "Never",
		// Agents never talk to the API server: no credentials.
		AutomountServiceAccountToken: false,
		EnableServiceLinks:           false,
		NodeSelector:                 o.NodeSelector,
		Volumes:                      volumes,
		Affinity: manifestAffinity{PodAntiAffinity: manifestPodAntiAffinity{
			// One agent per node: two would share its CPUs, NIC
			// and ports, and measure the node, not the DUT.
			Required: []manifestAffinityTerm{{
				LabelSelector: manifestLabelSelector{MatchLabels: labels},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}},
		// By number: the kubelet verifies runAsNonRoot only for those.
		SecurityContext: manifestPodSecurity{
			RunAsNonRoot:   true,
			RunAsUser:      manifestNonrootID,
			RunAsGroup:     manifestNonrootID,
			SeccompProfile: manifestSeccomp{Type: "RuntimeDefault"},
		},
		Containers: []manifestContainer{o.agentContainer(run)},
	}
}

// agentContainer runs the agent with the run, its identity and its
// credentials in the environment.
func (o ManifestOptions) agentContainer(run string) manifestContainer {
	resources := map[string]string{"cpu": o.CPU, "memory": o.Memory}
	var mounts []manifestVolumeMount
	if len(o.Files) > 0 {
		mounts = []manifestVolumeMount{{Name: "files", MountPath: ManifestFilesDir, ReadOnly: true}}
	}
	return manifestContainer{
		Name:  "agent",
		Image: o.Image,
		Args:  o.Command,
		// The run, the agent's index and name (downward API), the
		// credentials from the Secret: see FromEnv, CredentialsFromEnv.
		Env: append([]manifestEnv{
			{Name: EnvRun, Value: run},
			{Name: EnvShard, ValueFrom: manifestFieldEnv("metadata.annotations['" + manifestIndexAnnotation + "']")},
			{Name: EnvName, ValueFrom: manifestFieldEnv("metadata.name")},
		}, o.secretEnv()...),
		// Requests equal to limits: Guaranteed QoS.
		Resources:    manifestResources{Requests: resources, Limits: resources},
		VolumeMounts: mounts,
		SecurityContext: manifestContainerSecurity{
			AllowPrivilegeEscalation: false,
			ReadOnlyRootFilesystem:   true,
			Capabilities:             manifestCapabilities{Drop: []string{"ALL"}},
		},
	}
}

// manifestFieldEnv is a value from the downward API: a field of the pod.
func manifestFieldEnv(path string) *manifestEnvSource {
	return &manifestEnvSource{FieldRef: &manifestFieldRef{FieldPath: path}}
}

// filesConfigMap holds the shipped files (NAME-files).
func (o ManifestOptions) filesConfigMap(labels map[string]string) manifestObject {
	cm := manifestObject{APIVersion: "v1", Kind: "ConfigMap", Metadata: o.meta(labels), Data: map[string]string{}}
	cm.Metadata.Name = o.Name + "-files"
	for k, v := range o.Files {
		cm.Data[k] = string(v)
	}
	return cm
}

// encode writes the objects as one YAML stream under a header comment.
func (o ManifestOptions) encode(objects []manifestObject) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# tlsbench agents: a headless Service and an Indexed Job of %d pods, one per node,\n", o.Agents)
	fmt.Fprintf(&b, "# their token in a Secret, their traffic confined by a NetworkPolicy,\n")
	fmt.Fprintf(&b, "# starting the load at %s.\n", o.StartAt.UTC().Format(time.RFC3339Nano))
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, obj := range objects {
		if err := enc.Encode(obj); err != nil {
			return nil, fmt.Errorf("encoding the %s: %w", obj.Kind, err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ManifestAgentSpec returns the run agent index (0 to N-1) of Manifest(o)
// makes, its pod named NAME-INDEX: what the CLI checks before printing.
func ManifestAgentSpec(o ManifestOptions, index int) (runner.Spec, error) {
	o, err := o.checked()
	if err != nil {
		return runner.Spec{}, err
	}
	if index < 0 || index >= o.Agents {
		return runner.Spec{}, fmt.Errorf("agent index %d: want 0 to %d", index, o.Agents-1)
	}
	run := o.run()
	a := *run.Agent
	a.Shard, a.Name = index, o.Name+"-"+strconv.Itoa(index)
	return run.ForShard(a)
}

// run is o.Run with every agent's share of it.
func (o ManifestOptions) run() runner.Spec {
	r := o.Run
	r.Agent = &runner.Agent{
		Shards:         o.Agents,
		StartAt:        o.StartAt.UTC(),
		StartTolerance: o.StartTolerance,
		ReportTo:       o.ReportTo,
	}
	return r
}

// manifestSeconds rounds d up to whole seconds.
func manifestSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

var (
	manifestDNSLabel  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	manifestSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// A label name, and the value of a label.
	manifestLabelName = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	// The simple forms of quantities: decimal CPUs or millicores; bytes
	// with an optional decimal or binary suffix.
	manifestCPU    = regexp.MustCompile(`^([0-9]+(\.[0-9]{1,3})?|[0-9]+m)$`)
	manifestMemory = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(k|M|G|T|Ki|Mi|Gi|Ti)?$`)
	// A ConfigMap key.
	manifestFileKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// checked returns o with its defaults applied, or why Kubernetes or the
// agents would refuse it.
func (o ManifestOptions) checked() (ManifestOptions, error) {
	d := DefaultManifestOptions()
	o.Name = cmp.Or(o.Name, d.Name)
	o.CPU = cmp.Or(o.CPU, d.CPU)
	o.Memory = cmp.Or(o.Memory, d.Memory)
	o.StartTolerance = cmp.Or(o.StartTolerance, d.StartTolerance)
	o.ActiveDeadline = cmp.Or(o.ActiveDeadline, d.ActiveDeadline)
	o.TTLAfterFinished = cmp.Or(o.TTLAfterFinished, d.TTLAfterFinished)
	if len(o.Command) == 0 {
		o.Command = d.Command
	}
	if o.Agents < 1 || o.Agents > manifestMaxAgents {
		return o, fmt.Errorf("agents must be 1 to %d, got %d", manifestMaxAgents, o.Agents)
	}
	// Each pod's host name is NAME-INDEX, a DNS label of 63 bytes at most.
	maxName := 63 - len("-") - len(strconv.Itoa(o.Agents-1))
	if !manifestDNSLabel.MatchString(o.Name) || len(o.Name) > maxName {
		return o, fmt.Errorf("bad name %q: want lower-case letters, digits and '-', "+
			"starting and ending with a letter or digit, %d characters at most with %d agents",
			o.Name, maxName, o.Agents)
	}
	if o.Namespace != "" && (!manifestDNSLabel.MatchString(o.Namespace) || len(o.Namespace) > 63) {
		return o, fmt.Errorf("bad namespace %q: not a DNS-1123 label", o.Namespace)
	}
	if o.Image == "" {
		return o, errors.New("no image: the agents' image is required")
	}
	if strings.ContainsFunc(o.Image, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return o, fmt.Errorf("bad image %q: spaces or control characters", o.Image)
	}
	if e := o.Run.Engine; e != vocab.EngineCPS && e != vocab.EngineThroughput {
		return o, fmt.Errorf("engine %q: agents run cps or throughput", e)
	}
	if o.StartAt.IsZero() {
		return o, errors.New("no start time: the agents need one to start together")
	}
	if o.StartTolerance < 0 {
		return o, fmt.Errorf("the start tolerance must not be negative, got %s", o.StartTolerance)
	}
	if o.ReportTo == "" {
		return o, ErrNoReportURL
	}
	if u, err := url.Parse(o.ReportTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, fmt.Errorf("bad report URL %q: want http://host:port/ or https://…, "+
			"as the agents reach the collector", o.ReportTo)
	}
	if !manifestCPU.MatchString(o.CPU) || isManifestZero(o.CPU) {
		return o, fmt.Errorf("bad CPU quantity %q: want e.g. 500m, 1, 2, 1.5", o.CPU)
	}
	if !manifestMemory.MatchString(o.Memory) || isManifestZero(o.Memory) {
		return o, fmt.Errorf("bad memory quantity %q: want e.g. 512Mi, 1Gi, 2G", o.Memory)
	}
	if o.ActiveDeadline < 0 || o.TTLAfterFinished < 0 {
		return o, errors.New("the active deadline and the time to live must not be negative")
	}
	for k, v := range o.NodeSelector {
		if !isManifestLabelKey(k) || (v != "" && (len(v) > 63 || !manifestLabelName.MatchString(v))) {
			return o, fmt.Errorf("bad node selector %s=%s: not a label key and value", k, v)
		}
	}
	return o, nil
}

// isManifestZero reports whether a quantity matched by the regexps above is
// zero.
func isManifestZero(q string) bool {
	num := strings.TrimRightFunc(q, unicode.IsLetter)
	v, err := strconv.ParseFloat(num, 64)
	return err != nil || v == 0
}

// isManifestLabelKey reports whether k is a label key: [prefix/]name.
func isManifestLabelKey(k string) bool {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		prefix, name = "", k
	} else if prefix == "" || len(prefix) > 253 || !manifestSubdomain.MatchString(prefix) {
		return false
	}
	return len(name) <= 63 && manifestLabelName.MatchString(name)
}

// The Kubernetes objects, as far as the manifest uses them; field names are
// the API's (the tests decode them strictly into k8s.io/api types).
type (
	manifestObject struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   manifestMeta      `yaml:"metadata"`
		Spec       any               `yaml:"spec,omitempty"`
		Type       string            `yaml:"type,omitempty"`
		Data       map[string]string `yaml:"data,omitempty"`
		StringData map[string]string `yaml:"stringData,omitempty"`
	}
	manifestMeta struct {
		Name      string            `yaml:"name,omitempty"`
		Namespace string            `yaml:"namespace,omitempty"`
		Labels    map[string]string `yaml:"labels,omitempty"`
	}
	manifestServiceSpec struct {
		ClusterIP string            `yaml:"clusterIP"`
		Selector  map[string]string `yaml:"selector"`
	}
	manifestJobSpec struct {
		CompletionMode          string              `yaml:"completionMode"`
		Completions             int                 `yaml:"completions"`
		Parallelism             int                 `yaml:"parallelism"`
		BackoffLimit            int                 `yaml:"backoffLimit"`
		ActiveDeadlineSeconds   int64               `yaml:"activeDeadlineSeconds"`
		TTLSecondsAfterFinished int64               `yaml:"ttlSecondsAfterFinished"`
		Template                manifestPodTemplate `yaml:"template"`
	}
	manifestPodTemplate struct {
		Metadata manifestMeta    `yaml:"metadata"`
		Spec     manifestPodSpec `yaml:"spec"`
	}
	manifestPodSpec struct {
		Subdomain                    string              `yaml:"subdomain"`
		RestartPolicy                string              `yaml:"restartPolicy"`
		AutomountServiceAccountToken bool                `yaml:"automountServiceAccountToken"`
		EnableServiceLinks           bool                `yaml:"enableServiceLinks"`
		NodeSelector                 map[string]string   `yaml:"nodeSelector,omitempty"`
		Volumes                      []manifestVolume    `yaml:"volumes,omitempty"`
		Affinity                     manifestAffinity    `yaml:"affinity"`
		SecurityContext              manifestPodSecurity `yaml:"securityContext"`
		Containers                   []manifestContainer `yaml:"containers"`
	}
	manifestAffinity struct {
		PodAntiAffinity manifestPodAntiAffinity `yaml:"podAntiAffinity"`
	}
	manifestPodAntiAffinity struct {
		Required []manifestAffinityTerm `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
	}
	manifestAffinityTerm struct {
		LabelSelector manifestLabelSelector `yaml:"labelSelector"`
		TopologyKey   string                `yaml:"topologyKey"`
	}
	manifestLabelSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	manifestPodSecurity struct {
		RunAsNonRoot   bool            `yaml:"runAsNonRoot"`
		RunAsUser      int             `yaml:"runAsUser"`
		RunAsGroup     int             `yaml:"runAsGroup"`
		SeccompProfile manifestSeccomp `yaml:"seccompProfile"`
	}
	manifestSeccomp struct {
		Type string `yaml:"type"`
	}
	manifestContainer struct {
		Name            string                    `yaml:"name"`
		Image           string                    `yaml:"image"`
		Args            []string                  `yaml:"args"`
		Env             []manifestEnv             `yaml:"env"`
		Resources       manifestResources         `yaml:"resources"`
		VolumeMounts    []manifestVolumeMount     `yaml:"volumeMounts,omitempty"`
		SecurityContext manifestContainerSecurity `yaml:"securityContext"`
	}
	manifestEnv struct {
		Name      string             `yaml:"name"`
		Value     string             `yaml:"value,omitempty"`
		ValueFrom *manifestEnvSource `yaml:"valueFrom,omitempty"`
	}
	manifestEnvSource struct {
		FieldRef     *manifestFieldRef     `yaml:"fieldRef,omitempty"`
		SecretKeyRef *manifestSecretKeyRef `yaml:"secretKeyRef,omitempty"`
	}
	manifestFieldRef struct {
		FieldPath string `yaml:"fieldPath"`
	}
	manifestResources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	manifestContainerSecurity struct {
		AllowPrivilegeEscalation bool                 `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool                 `yaml:"readOnlyRootFilesystem"`
		Capabilities             manifestCapabilities `yaml:"capabilities"`
	}
	manifestCapabilities struct {
		Drop []string `yaml:"drop"`
	}
	manifestVolume struct {
		Name      string                  `yaml:"name"`
		ConfigMap manifestConfigMapVolume `yaml:"configMap"`
	}
	manifestConfigMapVolume struct {
		Name string `yaml:"name"`
	}
	manifestVolumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	}
)
