// Package schemas holds the JSON Schemas (draft 2020-12) of every JSON file
// and output tlsbench writes, embedded so that the binary carries them
// (tlsbench schema NAME prints one). Each output names its schema version
// in its "schema" member; the file of a version is Files[version].
package schemas

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

// FS holds the schema files, *.json.
//
//go:embed *.json
var FS embed.FS

// The schema versions, as the outputs carry them in "schema".
const (
	Run        = "tlsbench/run/v1"         // a run record, merged or not (cps, throughput, merge, collect --json)
	Ledger     = "tlsbench/ledger/v1"      // one line of a campaign's ledger.jsonl
	Summary    = "tlsbench/summary/v1"     // a campaign's summary.json
	Impact     = "tlsbench/impact/v1"      // impact --format json
	ImpactRuns = "tlsbench/impact-runs/v1" // impact --json FILE: every round's records
	Compare    = "tlsbench/compare/v1"     // compare --format json
	Report     = "tlsbench/report/v1"      // report --format json
	Stream     = "tlsbench/stream/v1"      // one line of --stream (cps, throughput, agent)
	Backends   = "tlsbench/backends/v1"    // a campaign's backends.json (a plan's pool of backends)
)

// Files maps each schema version to its file in FS.
var Files = map[string]string{
	Run:        "run.json",
	Ledger:     "ledger.json",
	Summary:    "summary.json",
	Impact:     "impact.json",
	ImpactRuns: "impact-runs.json",
	Compare:    "compare.json",
	Report:     "report.json",
	Stream:     "stream.json",
	Backends:   "backends.json",
}

// Versions lists the schema versions, sorted.
func Versions() []string {
	vs := make([]string, 0, len(Files))
	for v := range Files {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return vs
}

// Get returns the schema of a version (tlsbench/run/v1) or a file name
// (run.json, or run).
func Get(name string) ([]byte, error) {
	file, ok := Files[name]
	if !ok {
		for _, f := range Files {
			if name == f || name+".json" == f {
				file, ok = f, true
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("no schema %q (schemas: %s)", name, strings.Join(Versions(), ", "))
	}
	return FS.ReadFile(file)
}
