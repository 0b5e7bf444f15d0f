package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// executorFlags choose how qualify makes its runs.
type executorFlags struct {
	kind, image, context, namespace string
	kubectl                         string
	listen, reportURL, cpu, memory  string
	agents                          int
	margin, tolerance               time.Duration
	nodeSelector                    []string
	selector                        map[string]string // nodeSelector, parsed by check
	collectTLS                      bool
}

func addExecutorFlags(fs *pflag.FlagSet) *executorFlags {
	ef := &executorFlags{}
	fs.StringVar(&ef.kind, "executor", "local", "how runs are made (`KIND`): local (in this process), processes "+
		"(--agents local agent processes), kubernetes (--agents pods of an Indexed Job)")
	fs.IntVar(&ef.agents, "agents", 0, "processes, kubernetes: `N` agents per run (default: processes one per core, "+
		"kubernetes required)")
	fs.DurationVar(&ef.margin, "start-margin", 0, "processes, kubernetes: agents start together this `DURATION` after "+
		"a run is launched (default 2s; kubernetes 90s, covering scheduling)")
	fs.DurationVar(&ef.tolerance, "start-tolerance", runner.DefaultStartTolerance, "processes, kubernetes: an agent "+
		"ready later than the start by more than `DURATION` refuses to run")
	fs.StringVar(&ef.image, "image", "", "kubernetes: the agent `IMAGE` (see Dockerfile)")
	fs.StringVar(&ef.context, "kube-context", "", "kubernetes: kubectl `CONTEXT` (default: kubectl's current context)")
	fs.StringVar(&ef.kubectl, "kubectl", "kubectl", "kubernetes: the kubectl `COMMAND` (it uses your kubeconfig and "+
		"context)")
	fs.StringVar(&ef.namespace, "namespace", "", "kubernetes: `NAMESPACE` of the Jobs")
	fs.StringVar(&ef.cpu, "agent-cpu", "1", "kubernetes: CPU of each agent pod (`QUANTITY`, requests = limits)")
	fs.StringVar(&ef.memory, "agent-memory", "1Gi", "kubernetes: memory of each agent pod (`QUANTITY`, requests = limits)")
	fs.StringArrayVar(&ef.nodeSelector, "node-selector", nil, "kubernetes: `KEY=VALUE` the agents' nodes must carry "+
		"(repeatable)")
	fs.StringVar(&ef.listen, "collect-listen", "", "processes, kubernetes: `ADDR` where the coordinator receives the "+
		"agents' records (default 127.0.0.1:0; kubernetes :7070)")
	fs.StringVar(&ef.reportURL, "collect-url", "", "kubernetes: the coordinator's `URL` as the pods reach it, e.g. "+
		"http://10.0.0.5:7070 (https:// with --collect-tls)")
	fs.BoolVar(&ef.collectTLS, "collect-tls", false, "processes, kubernetes: the coordinator receives the records over "+
		"https, with a certificate it makes for the campaign (its CA goes to the agents with their token)")
	return ef
}

// check validates the executor flags before anything starts.
func (ef *executorFlags) check(usesRef bool) error {
	switch ef.kind {
	case "local":
		if ef.agents != 0 || ef.image != "" || ef.collectTLS {
			return usagef("--agents, --image and --collect-tls need --executor processes or kubernetes")
		}
		return nil
	case "processes":
		if ef.agents == 0 {
			ef.agents = max(1, runtime.NumCPU())
		}
	case "kubernetes":
		switch {
		case ef.agents < 1:
			return usagef("--executor kubernetes needs --agents N")
		case ef.image == "":
			return usagef("--executor kubernetes needs --image IMAGE (the agent image, see Dockerfile)")
		case ef.reportURL == "":
			return usagef("--executor kubernetes needs --collect-url URL: where the pods reach this coordinator")
		case usesRef:
			return usagef("--executor kubernetes: the reference target runs on this machine, out of the pods' reach; name " +
				"the DUTs (--dut or a plan)")
		}
		want := "http"
		if ef.collectTLS {
			want = "https"
		}
		if u, err := url.Parse(ef.reportURL); err != nil || u.Scheme != want || u.Host == "" {
			return usagef("bad --collect-url %q: want %s://HOST:PORT (https with --collect-tls, http "+
				"without)", ef.reportURL, want)
		}
	default:
		return usagef("bad --executor %q: local, processes or kubernetes", ef.kind)
	}
	if ef.agents < 1 {
		return usagef("--agents must be at least 1, got %d", ef.agents)
	}
	if ef.margin < 0 || ef.tolerance < 0 {
		return usagef("--start-margin and --start-tolerance must not be negative")
	}
	ef.selector = map[string]string{}
	for _, kv := range ef.nodeSelector {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return usagef("bad --node-selector %q: want KEY=VALUE", kv)
		}
		ef.selector[k] = v
	}
	if ef.kind == "kubernetes" {
		// What every run's manifest will hold, checked now rather than at
		// the first run.
		checkRun := runner.Defaults(vocab.EngineCPS)
		checkRun.Target.URL = "https://dut.invalid/"
		_, err := agent.Manifest(agent.ManifestOptions{
			Name: agent.JobName("final-1-1"), Namespace: ef.namespace, Image: ef.image, Agents: ef.agents,
			Run: checkRun, StartAt: time.Now().Add(time.Hour),
			ReportTo: strings.TrimSuffix(ef.reportURL, "/") + "/runs/final-1-1",
			CPU:      ef.cpu, Memory: ef.memory, NodeSelector: ef.selector, Token: strings.Repeat("x", agent.MinTokenLen),
		})
		if err != nil {
			return usagef("--executor kubernetes: %v", err)
		}
	}
	return nil
}

// build returns the executor; stop releases what it started.
func (ef *executorFlags) build(local *method.Local, files []string, refCA string) (method.Executor, func(), error) {
	if ef.kind == "local" {
		return local, func() {}, nil
	}
	listen := ef.listen
	if listen == "" {
		listen = "127.0.0.1:0"
		if ef.kind == "kubernetes" {
			listen = ":7070"
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, usagef("--collect-listen %s: %v", listen, err)
	}
	// Each run's agents get a token of the run's own (agent.Executor), in
	// their environment or a Secret; the collector takes only their records.
	coll := agent.NewCollector("")
	var cred agent.Credentials
	var tlsConfig *tls.Config
	scheme := "http://"
	if ef.collectTLS {
		host := "127.0.0.1"
		if ef.kind == "kubernetes" {
			u, _ := url.Parse(ef.reportURL) // checked
			host = u.Hostname()
		}
		if tlsConfig, cred.CA, err = agent.CollectorTLS([]string{host}, 7*24*time.Hour); err != nil {
			ln.Close()
			return nil, nil, err
		}
		scheme = "https://"
	}
	stop := coll.Serve(ln, tlsConfig)

	e := &agent.Executor{
		Local: local, Agents: ef.agents, Margin: ef.margin, Tolerance: ef.tolerance,
		Collector: coll, ProfileFiles: absAll(files), ReferenceCA: refCA, Credentials: cred,
	}
	switch ef.kind {
	case "processes":
		self, err := os.Executable()
		if err != nil {
			stop()
			return nil, nil, err
		}
		e.Launcher = &agent.Processes{Command: []string{self, "agent"}, Env: append(os.Environ(), childEnv+"=1")}
		e.ReportURL = scheme + ln.Addr().String()
		if e.Margin == 0 {
			e.Margin = 2 * time.Second
		}
	case "kubernetes":
		k := &agent.Kubernetes{Namespace: ef.namespace, Image: ef.image, CPU: ef.cpu, Memory: ef.memory,
			NodeSelector: ef.selector}
		k.Kubectl = []string{ef.kubectl}
		if ef.context != "" {
			k.Kubectl = append(k.Kubectl, "--context", ef.context)
		}
		e.Launcher = k
		e.ReportURL = strings.TrimSuffix(ef.reportURL, "/")
		if e.Margin == 0 {
			e.Margin = 90 * time.Second
		}
	}
	return e, stop, nil
}

// absAll makes file names absolute, for agents started elsewhere.
func absAll(files []string) []string {
	var out []string
	for _, f := range files {
		if a, err := filepath.Abs(f); err == nil {
			f = a
		}
		out = append(out, f)
	}
	return out
}

func describeExecutor(ef *executorFlags) string {
	switch ef.kind {
	case "processes":
		return fmt.Sprintf("by %d agent processes each", ef.agents)
	case "kubernetes":
		return fmt.Sprintf("by %d agent pods each (an Indexed Job per run)", ef.agents)
	}
	return "in this process"
}
