package main

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestProgressNamesProtocol: qualify's line per run and its live line name
// an HTTP/2 cell's protocol; HTTP/1.1's read as before protocols.
func TestProgressNamesProtocol(t *testing.T) {
	for proto, want := range map[string]string{"http/2": "a cps over HTTP/2 p", "http/1.1": "a cps p", "": "a cps p"} {
		line := eventLine(method.Event{Phase: vocab.Final, Engine: vocab.EngineCPS, DUT: "a", Profile: "p",
			Accepted: true, Protocol: proto})
		cell := method.Progress{DUT: "a", Engine: vocab.EngineCPS, Profile: "p", Protocol: proto}.Cell()
		if !strings.Contains(line, " "+want+" run ") || cell != want {
			t.Errorf("protocol %q: line %q, cell %q: want %q", proto, line, cell, want)
		}
	}
}
