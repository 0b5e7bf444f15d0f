package main

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestParseEngine: an engine command line parses into the run spec, the
// defaults those of runner.Defaults, without running anything.
func TestParseEngine(t *testing.T) {
	c, err := parseEngineArgs([]string{"cps", "https://dut.example:8443/x?y=1", "-c", "6", "-d", "5s", "--resolve", "dut.example:8443:10.0.0.7",
		"--profile", "ecdhe-rsa-aes128-gcm-sha256-p256", "-H", "X-A: b", "--dut", "lb1"})
	if err != nil {
		t.Fatal(err)
	}
	s := c.runSpec(c.profiles[0], nil)
	d := runner.Defaults(vocab.EngineCPS)
	if s.Engine != vocab.EngineCPS || s.Concurrency != 6 || s.Duration != 5*time.Second || s.Warmup != d.Warmup || s.ReadTimeout != d.ReadTimeout ||
		s.Profile != "ecdhe-rsa-aes128-gcm-sha256-p256" || s.Path != "/x?y=1" || s.Target.Address != "10.0.0.7:8443" ||
		s.Target.ServerName != "dut.example" || s.Target.DUT != "lb1" || len(s.Headers) != 1 || s.Agent != nil {
		t.Errorf("spec %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}

	c, err = parseEngineArgs([]string{"throughput", "https://dut/", "--rate", "100", "--shard", "1/4", "--report-to", "http://c:7070/"})
	if err != nil {
		t.Fatal(err)
	}
	s = c.runSpec(c.profiles[0], nil)
	if s.Engine != vocab.EngineThroughput || s.Path != "/" || s.Concurrency != 256 || s.Rate != 25 || s.Pipeline != 1 ||
		s.Agent == nil || s.Agent.Shard != 1 || s.Agent.Shards != 4 || s.Agent.ReportTo != "http://c:7070/" {
		t.Errorf("shard 1/4 of an open loop: %+v %+v", s, s.Agent)
	}

	for _, args := range [][]string{{"cps", "-c", "0"}, {"cps", "http://dut/"}, {"throughput", "--pipeline", "0"}, {"serve"}, {}} {
		if _, err := parseEngineArgs(args); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}

// TestParseImpactAndManifest: impact and k8s manifest parse into their
// runs' specs.
func TestParseImpactAndManifest(t *testing.T) {
	c, err := parseImpact([]string{"--baseline", "https://127.0.0.1:1/", "--candidate", "https://127.0.0.2:1/", "--keepalive", "--rounds", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.specs) != 2 || c.rounds != 5 || c.specs[0].Engine != vocab.EngineThroughput || c.specs[0].Concurrency != 25 ||
		c.specs[0].Target.Address != "127.0.0.1:1" || c.specs[1].Target.Address != "127.0.0.2:1" {
		t.Errorf("impact %+v", c)
	}

	o, err := parseK8sManifest([]string{"--agents", "3", "--image", "i", "--report-to", "http://c:7070/", "--", "cps", "https://dut/1k", "-c", "6"}, io.Discard, new(string))
	if err != nil {
		t.Fatal(err)
	}
	if o.Agents != 3 || o.Image != "i" || o.Run.Engine != vocab.EngineCPS || o.Run.Concurrency != 6 || o.Run.Target.URL != "https://dut/1k" || !o.StartAt.After(time.Now()) {
		t.Errorf("manifest %+v", o)
	}
}

// TestParseServe: a serve command line parses into the target's
// configuration without listening; bad ones are usage errors.
func TestParseServe(t *testing.T) {
	c, err := parseServe([]string{"--port", "0", "--profile", "rsa2048-aes128-gcm-sha256", "--admin", "127.0.0.1:0", "--delay", "5ms",
		"--fault", "reset-handshake:0.5", "--hostname", "dut.example", "--ca-out", "-"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.cfg
	if cfg.Host != "127.0.0.1" || cfg.Port != 0 || len(cfg.Profiles) != 1 || cfg.Profiles[0].Name != "rsa2048-aes128-gcm-sha256" ||
		cfg.Admin != "127.0.0.1:0" || cfg.Delay != 5*time.Millisecond || len(cfg.Faults) != 1 || cfg.SlowDelay != 15*time.Second ||
		len(cfg.Hostnames) != 1 || cfg.Plain || cfg.Cert != nil || c.caOut != "-" || c.certFile != "" {
		t.Errorf("serve %+v", c)
	}
	c, err = parseServe(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Port != 8443 || len(c.cfg.Profiles) == 0 {
		t.Errorf("serve's defaults %+v", c.cfg)
	}
	for _, args := range [][]string{{"x"}, {"--port", "65536"}, {"--listen", "h"}, {"--cert", "c"}, {"--plain", "--profile", "rsa2048-aes128-gcm-sha256"},
		{"--port", "65535"}, {"--admin", "x"}, {"--delay", "-1s"}, {"--fault", "nope"}, {"--slow-delay", "0s"}, {"--profile", "nope"}} {
		var ue *usageError
		if _, err := parseServe(args, io.Discard); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
