package agent

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// The keys of the agents' Secret (NAME-auth).
const (
	manifestSecretToken = "token"
	manifestSecretCA    = "collector-ca.pem"
)

// manifestSecretName is the name of the Secret holding the run's token.
func manifestSecretName(name string) string { return name + "-auth" }

// secretEnv is the agents' credentials, referenced from the Secret.
func (o ManifestOptions) secretEnv() []manifestEnv {
	ref := func(key string) *manifestEnvSource {
		return &manifestEnvSource{SecretKeyRef: &manifestSecretKeyRef{Name: manifestSecretName(o.Name), Key: key}}
	}
	env := []manifestEnv{{Name: EnvToken, ValueFrom: ref(manifestSecretToken)}}
	if len(o.CollectorCA) > 0 {
		env = append(env, manifestEnv{Name: EnvCollectorCA, ValueFrom: ref(manifestSecretCA)})
	}
	return env
}

// secret is the Secret of the run's credentials.
func (o ManifestOptions) secret(labels map[string]string) manifestObject {
	data := map[string]string{manifestSecretToken: o.Token}
	if len(o.CollectorCA) > 0 {
		data[manifestSecretCA] = string(o.CollectorCA)
	}
	return manifestObject{
		APIVersion: "v1", Kind: "Secret", Type: "Opaque",
		Metadata:   manifestMeta{Name: manifestSecretName(o.Name), Namespace: o.Namespace, Labels: labels},
		StringData: data,
	}
}

// networkPolicy confines the agents: no ingress; egress to the DUT's and
// the collector's ports only (and addresses, when the URLs give IPs; and
// DNS, when they give names).
func (o ManifestOptions) networkPolicy(labels map[string]string) (manifestObject, error) {
	dut := cmp.Or(o.Run.Target.Address, o.Run.Target.URL)
	var rules []manifestEgressRule
	names := false
	for _, to := range []struct{ what, addr string }{{"DUT", dut}, {"collector", o.ReportTo}} {
		host, port, err := manifestHostPort(to.addr)
		if err != nil {
			return manifestObject{}, fmt.Errorf("the %s's address %q: %w", to.what, to.addr, err)
		}
		r := manifestEgressRule{Ports: []manifestPolicyPort{{Protocol: "TCP", Port: port}}}
		if ip := net.ParseIP(host); ip != nil {
			bits := 32
			if ip.To4() == nil {
				bits = 128
			}
			r.To = []manifestPolicyPeer{{IPBlock: &manifestIPBlock{CIDR: fmt.Sprintf("%s/%d", ip, bits)}}}
		} else {
			names = true
		}
		rules = append(rules, r)
	}
	if names { // the names are resolved in the pods
		dns := []manifestPolicyPort{{Protocol: "UDP", Port: 53}, {Protocol: "TCP", Port: 53}}
		rules = append(rules, manifestEgressRule{Ports: dns})
	}
	return manifestObject{
		APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy",
		Metadata: o.meta(labels),
		Spec: manifestPolicySpec{
			PodSelector: manifestLabelSelector{MatchLabels: labels},
			// Ingress listed with no rule: nothing may connect to an agent.
			PolicyTypes: []string{"Ingress", "Egress"},
			Egress:      rules,
		},
	}, nil
}

// manifestHostPort returns the host and port of a URL or host:port.
func manifestHostPort(s string) (string, int, error) {
	host, port := "", ""
	if u, err := url.Parse(s); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		host, port = u.Hostname(), u.Port()
		port = cmp.Or(port, map[string]string{"http": "80", "https": "443"}[u.Scheme])
	} else if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else {
		return "", 0, fmt.Errorf("want a URL or HOST:PORT")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || host == "" {
		return "", 0, fmt.Errorf("want a host and a port 1-65535")
	}
	return host, n, nil
}

type (
	manifestSecretKeyRef struct {
		Name string `yaml:"name"`
		Key  string `yaml:"key"`
	}
	manifestPolicySpec struct {
		PodSelector manifestLabelSelector `yaml:"podSelector"`
		PolicyTypes []string              `yaml:"policyTypes"`
		Egress      []manifestEgressRule  `yaml:"egress"`
	}
	manifestEgressRule struct {
		To    []manifestPolicyPeer `yaml:"to,omitempty"`
		Ports []manifestPolicyPort `yaml:"ports"`
	}
	manifestPolicyPeer struct {
		IPBlock *manifestIPBlock `yaml:"ipBlock,omitempty"`
	}
	manifestIPBlock struct {
		CIDR string `yaml:"cidr"`
	}
	manifestPolicyPort struct {
		Protocol string `yaml:"protocol"`
		Port     int    `yaml:"port"`
	}
)
