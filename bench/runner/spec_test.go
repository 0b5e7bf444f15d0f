package runner_test

import (
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestDefaults: each engine's defaults are valid, and the engine's own
// object path and concurrency.
func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		engine vocab.Engine
		path   string
		conc   int
	}{{vocab.EngineCPS, "/1k", 32}, {vocab.EngineThroughput, "/1m", 8}, {"", "/1k", 32}} {
		s := runner.Defaults(tc.engine)
		if err := s.Validate(); err != nil {
			t.Errorf("Defaults(%q): %v", tc.engine, err)
		}
		if s.Path != tc.path || s.Concurrency != tc.conc || s.Drain != 0 || s.DrainBound() != 30*time.Second || s.ExpectSize != -1 || s.Profile != runner.DefaultProfile {
			t.Errorf("Defaults(%q) = %+v", tc.engine, s)
		}
	}
}

// TestDrainBound: the default drain bound covers the phase deadlines (at
// least 30 s): 3 s + 5 s + 80 s of deadlines drain for 88 s; a drain set
// is kept.
func TestDrainBound(t *testing.T) {
	s := runner.Defaults(vocab.EngineCPS)
	s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = 3*time.Second, 5*time.Second, 80*time.Second
	if got := s.EngineConfig().Drain; got != 88*time.Second {
		t.Errorf("drain bound %s with deadlines 3s+5s+80s, want 88s", got)
	}
	s.Drain = 100 * time.Second
	if got := s.EngineConfig().Drain; got != 100*time.Second {
		t.Errorf("drain bound %s with drain 100s set, want 100s", got)
	}
}

// TestValidate: each field out of its domain is a FieldError naming it.
func TestValidate(t *testing.T) {
	for field, edit := range map[string]func(*runner.Spec){
		"engine":            func(s *runner.Spec) { s.Engine = "serve" },
		"protocol":          func(s *runner.Spec) { s.Protocol = "h2" },
		"requests_per_conn": func(s *runner.Spec) { s.RequestsPerConn = -1 },
		"concurrency":       func(s *runner.Spec) { s.Concurrency = 0 },
		"rate":              func(s *runner.Spec) { s.Rate = -1 },
		"duration":          func(s *runner.Spec) { s.Duration = 0 },
		"warmup":            func(s *runner.Spec) { s.Warmup = -time.Second },
		"expect_size":       func(s *runner.Spec) { s.ExpectSize = -2 },
		"handshake_timeout": func(s *runner.Spec) { s.HandshakeTimeout = 0 },
		"pipeline":          func(s *runner.Spec) { s.Engine, s.Pipeline = vocab.EngineThroughput, 0 },
		"verify_body":       func(s *runner.Spec) { s.VerifyBody = "sha256:00" },
		"shard":             func(s *runner.Spec) { s.Agent = &runner.Agent{Shard: 2, Shards: 2} },
	} {
		s := runner.Defaults(vocab.EngineCPS)
		edit(&s)
		var fe *vocab.FieldError
		if err := s.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: Validate = %v", field, err)
		}
	}
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile = "no-such-profile"
	if err := s.Validate(); err == nil {
		t.Error("an unknown profile is valid")
	}
}

// TestForShard: concurrency and rate divided, the first c mod N shards
// taking one more, sources in contiguous blocks; loads that cannot be
// divided are ShardErrors.
func TestForShard(t *testing.T) {
	s := runner.Defaults(vocab.EngineCPS)
	s.Concurrency, s.Rate = 10, 100
	for i := 0; i < 10; i++ {
		s.Sources = append(s.Sources, net.IPv4(127, 0, 0, byte(i+1)))
	}
	total, seen := 0, 0
	for i := range 4 {
		sh, err := s.ForShard(runner.Agent{Shard: i, Shards: 4})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{3, 3, 2, 2}[i]; sh.Concurrency != want || sh.Rate != 25 || sh.Agent.Shard != i {
			t.Errorf("shard %d: concurrency %d rate %g", i, sh.Concurrency, sh.Rate)
		}
		if !sh.Sources[0].Equal(s.Sources[seen]) {
			t.Errorf("shard %d starts at source %v, want %v", i, sh.Sources[0], s.Sources[seen])
		}
		total += sh.Concurrency
		seen += len(sh.Sources)
	}
	if total != 10 || seen != 10 || s.Concurrency != 10 {
		t.Errorf("shares sum to %d connections, %d sources", total, seen)
	}
	var se *runner.ShardError
	if _, err := s.ForShard(runner.Agent{Shard: 0, Shards: 11}); !errors.As(err, &se) || se.What != "concurrency" {
		t.Errorf("11 shards of 10 connections: %v", err)
	}
	s.Concurrency = 40
	if _, err := s.ForShard(runner.Agent{Shard: 0, Shards: 20}); !errors.As(err, &se) || se.What != "sources" {
		t.Errorf("20 shards of 10 sources: %v", err)
	}
}

// TestSpecJSON: a spec is data; what an agent decodes is what was sent,
// but for this process's own fields.
func TestSpecJSON(t *testing.T) {
	s := runner.Defaults(vocab.EngineThroughput)
	s.Target.URL, s.Target.Address, s.Headers = "https://dut/1m", "10.0.0.1:443", [][2]string{{"X-A", "b"}}
	s.Sources = []net.IP{net.ParseIP("10.0.0.2")}
	s.Agent = &runner.Agent{Shards: 3, StartAt: time.Date(2026, 12, 1, 10, 0, 0, 250, time.UTC), StartTolerance: time.Second, ReportTo: "http://c:7070/"}
	s.Config = runner.Echo(map[string]int{"a": 1})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got runner.Spec
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, s)
	}
}
