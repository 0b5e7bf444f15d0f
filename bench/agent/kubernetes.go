package agent

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Kubernetes launches a run's agents as an Indexed Job through the user's
// kubectl (see docs/KUBERNETES.md): the manifest goes to `kubectl apply -f
// -` on stdin (its token in no command line), and its objects are deleted
// once the records are in.
type Kubernetes struct {
	// Kubectl is the kubectl command and its global flags (--context,
	// --kubeconfig); default ["kubectl"].
	Kubectl      []string
	Namespace    string
	Image        string
	CPU, Memory  string
	NodeSelector map[string]string
	// Timeout bounds each kubectl call (default 60 s).
	Timeout time.Duration
	// Poll is how often the Job's failed count is read (default 5 s).
	Poll time.Duration
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// JobName is the Job's name for a run ID: a DNS-1123 label short enough
// for the pods' names and labels.
func JobName(id string) string {
	n := "tlsbench-" + nonLabel.ReplaceAllString(strings.ToLower(id), "-")
	return strings.TrimRight(n[:min(len(n), 52)], "-")
}

func (k *Kubernetes) kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	timeout := k.Timeout
	orDefault(&timeout, time.Minute)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	base := k.Kubectl
	if len(base) == 0 {
		base = []string{"kubectl"}
	}
	argv := append(append([]string(nil), base[1:]...), args...)
	if k.Namespace != "" {
		argv = append(argv, "--namespace", k.Namespace)
	}
	c := exec.CommandContext(ctx, base[0], argv...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %v: %s", base[0], strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Launch implements Launcher.
func (k *Kubernetes) Launch(ctx context.Context, spec RunSpec) (*launched, error) {
	name := JobName(spec.ID)
	// The CA and profile files go with the Job, in a ConfigMap.
	run := spec.Spec
	files, err := ShipFiles(&run)
	if err != nil {
		return nil, err
	}
	a := run.Agent
	m, err := Manifest(ManifestOptions{
		Name: name, Namespace: k.Namespace, Image: k.Image, Agents: a.Shards, Run: run, Files: files,
		StartAt: a.StartAt, StartTolerance: a.StartTolerance, ReportTo: a.ReportTo,
		CPU: k.CPU, Memory: k.Memory, NodeSelector: k.NodeSelector,
		Token: spec.Credentials.Token, CollectorCA: spec.Credentials.CA,
	})
	if err != nil {
		return nil, err
	}
	if _, err := k.kubectl(ctx, m, "apply", "-f", "-"); err != nil {
		return nil, err
	}
	failed := make(chan error, 1)
	pctx, stopPoll := context.WithCancel(ctx)
	go k.watch(pctx, name, failed)
	stop := func() {
		stopPoll()
		// A fresh context: the Job is removed even after an interrupt.
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = k.kubectl(dctx, nil, "delete", "job/"+name, "service/"+name, "configmap/"+name+"-files",
			"secret/"+manifestSecretName(name), "networkpolicy/"+name, "--ignore-not-found", "--wait=false")
	}
	return &launched{Failed: failed, Stop: stop}, nil
}

// watch reports the first failed pod of the Job.
func (k *Kubernetes) watch(ctx context.Context, name string, failed chan<- error) {
	poll := k.Poll
	orDefault(&poll, 5*time.Second)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		out, err := k.kubectl(ctx, nil, "get", "job/"+name, "-o", "jsonpath={.status.failed}")
		if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == "0" {
			continue
		}
		pods, _ := k.kubectl(ctx, nil, "get", "pods", "-l", "job-name="+name, "--no-headers")
		failed <- fmt.Errorf("job %s: %s agent(s) failed: %s",
			name, strings.TrimSpace(string(out)), strings.Join(strings.Fields(string(pods)), " "))
		return
	}
}
