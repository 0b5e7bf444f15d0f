package protocol_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/protocol"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http1"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestRegistry: HTTP/1.1 is registered, the default, with its ALPN ID and
// both engines; an unknown protocol or engine is a field error listing what
// is registered; a second registration of a name or ALPN ID panics; a
// profile that expects another ALPN protocol is refused.
func TestRegistry(t *testing.T) {
	p, err := protocol.Lookup("")
	if err != nil || p.Name != "http/1.1" || p.ALPN != "http/1.1" ||
		len(p.Engines()) != 2 || p.Engines()[0] != vocab.EngineCPS || p.Engines()[1] != vocab.EngineThroughput {
		t.Fatalf("Lookup(\"\"): %+v, %v: want http/1.1 with cps and throughput", p, err)
	}
	if _, err := protocol.Lookup("h2"); err == nil || err.Error() != "protocol must be http/1.1, got h2" {
		t.Errorf("Lookup(h2): %v", err)
	}
	if err := p.Carries("udp"); err == nil || err.Error() != "engine must be cps or throughput, got udp" {
		t.Errorf("Carries(udp): %v", err)
	}
	if err := p.Validate(vocab.EngineThroughput, &protocol.Args{}); err == nil ||
		err.Error() != "pipeline must be at least 1, got 0" {
		t.Errorf("Validate(throughput, pipeline 0): %v", err)
	}
	if err := p.Validate(vocab.EngineCPS, &protocol.Args{}); err != nil {
		t.Errorf("Validate(cps): %v", err)
	}
	if err := p.CheckALPN("x", "h2"); err == nil || !strings.Contains(err.Error(), "profile x expects alpn h2") {
		t.Errorf("CheckALPN(h2): %v", err)
	}
	if p.CheckALPN("x", "http/1.1") != nil || p.CheckALPN("x", "") != nil {
		t.Error("CheckALPN refuses http/1.1 or no ALPN")
	}
	for _, dup := range []protocol.Protocol{
		{Name: "http/1.1", ALPN: "other", New: p.New},
		{Name: "other", ALPN: "http/1.1", New: p.New},
		{Name: "other", ALPN: "other"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s, %s): no panic", dup.Name, dup.ALPN)
				}
			}()
			protocol.Register(dup)
		}()
	}
	if names := protocol.Names(); len(names) != 1 {
		t.Errorf("Names: %q, want http/1.1 alone", names)
	}
}

// TestVersions: --http's versions are the registered protocols' (HTTP/1.1
// alone here); an HTTP version is the protocol http/V, "" the default; any
// other is a field error listing the versions.
func TestVersions(t *testing.T) {
	if vs := protocol.Versions(); len(vs) != 1 || vs[0] != "1.1" {
		t.Errorf("Versions: %q, want 1.1", vs)
	}
	for _, v := range []string{"", "1.1"} {
		if p, err := protocol.ForVersion(v); err != nil || p.Name != "http/1.1" {
			t.Errorf("ForVersion(%q): %v, %v", v, p, err)
		}
	}
	for _, v := range []string{"2", "1.0", "h2"} {
		if _, err := protocol.ForVersion(v); err == nil || err.Error() != "http must be 1.1, got "+v {
			t.Errorf("ForVersion(%q): %v", v, err)
		}
	}
}
