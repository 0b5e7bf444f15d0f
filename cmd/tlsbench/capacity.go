package main

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// kbPerConnection is the generator's memory per connection, measured at
// 20,000 connections (docs/PERFORMANCE.md, "Memory per connection"): peak
// RSS over connections held, KB = 1000 bytes.
var kbPerConnection = map[vocab.Engine]float64{vocab.EngineCPS: 34, vocab.EngineThroughput: 17.3}

// availableMemory is MemAvailable of /proc/meminfo in bytes (0: unknown).
var availableMemory = func() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// checkCapacity refuses, before anything is allocated, a number of
// connections this machine cannot hold: the measured memory per connection
// times conns against the memory available, and one descriptor per
// connection against RLIMIT_NOFILE.
func checkCapacity(engine vocab.Engine, conns int) error {
	kb := kbPerConnection[engine]
	if kb == 0 {
		kb = kbPerConnection[vocab.EngineCPS]
	}
	need := float64(conns) * kb * 1000
	if avail := availableMemory(); avail > 0 && need > float64(avail) {
		return usagef("-c %d: %s connections take about %.0f KB each (measured, docs/PERFORMANCE.md), %.1f GB in all, "+
			"and this machine has %.1f GB available: lower -c, or split the load over agents (--shard i/N, one per machine)",
			conns, engine, kb, need/1e9, float64(avail)/1e9)
	}
	var de *tlsconn.DescriptorLimitError
	if err := tlsconn.CheckDescriptors(conns); errors.As(err, &de) {
		return usagef("-c %d: %s", conns, descriptorText(de))
	} else if err != nil {
		return usagef("-c %d: %v", conns, err)
	}
	return nil
}
