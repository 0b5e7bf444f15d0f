package metrics_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// TestRecordsMatchSchema: the records the recorder and Merge make (one
// process, each agent, merged, merged again) are valid against the run
// record's JSON Schema and pass Validate.
func TestRecordsMatchSchema(t *testing.T) {
	single, agents := play(t, [playAgents]int{0, 1, 0, 1})
	m := merge(t, agents...)
	for name, r := range map[string]*metrics.Run{"single": single, "agent 0": agents[0], "agent 3": agents[3], "merged": m,
		"merged twice": merge(t, merge(t, agents[0], agents[1]), merge(t, agents[2], agents[3]))} {
		data := marshalIndent(t, r)
		schematest.Valid(t, schemas.Run, name, data)
		if err := r.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", name, err)
		}
		if _, err := metrics.DecodeRun(data); err != nil {
			t.Errorf("%s: DecodeRun: %v", name, err)
		}
	}
}

// TestBrokenRecords: a hand-edited record is refused on read, the error
// naming the field, and — where a JSON Schema can say it — by the schema
// too. Percentile order, counts against histograms, rates against counts
// and the series order are beyond a schema: only Validate checks them.
func TestBrokenRecords(t *testing.T) {
	single, agents := play(t, [playAgents]int{})
	good := marshalIndent(t, single)
	merged := marshalIndent(t, merge(t, agents...))
	for _, tc := range []struct {
		name   string
		merged bool // edit the merged record
		edit   func(m map[string]any)
		want   string // the error, or its start
		schema bool   // the schema refuses it too
	}{
		{"unknown engine", false, func(m map[string]any) { m["engine"] = "warp" }, `engine: "warp" is not one of cps, throughput`, true},
		{"other schema", false, func(m map[string]any) { m["schema"] = "tlsbench/run/v2" }, `schema "tlsbench/run/v2", want "tlsbench/run/v1"`, true},
		{"negative count", false, func(m map[string]any) { m["transactions"] = -1 }, "transactions: -1 is negative", true},
		{"transactions not the latencies' count", false, func(m map[string]any) {
			m["transactions"] = m["transactions"].(float64) * 2
			m["cps"] = m["cps"].(float64) * 2
		}, "latency_us.total.count: ", false},
		{"negative bytes", false, func(m map[string]any) { obj(m, "bytes")["wire_in"] = -7 }, "bytes.wire_in: -7 is negative", true},
		{"negative class count", false, func(m map[string]any) { obj(m, "errors", "by_class")["timeout"] = -3 }, "errors.by_class.timeout: -3 is negative", true},
		{"bad error class", false, func(m map[string]any) { obj(m, "errors", "by_class")["Time Out"] = 0 }, `errors.by_class: "Time Out" is not an error class`, true},
		{"-1e308 cps", false, func(m map[string]any) { m["cps"] = -1e308 }, "cps: -1e+308 is negative", true},
		{"1e308 cps", false, func(m map[string]any) { m["cps"] = 1e308 }, "cps: 1e+308, but the counts over duration_s give", false},
		{"throughput rate in a cps record", false, func(m map[string]any) { m["gbps"] = 1.0 }, "requests_per_s: a throughput rate in a cps record", true},
		{"no cps", false, func(m map[string]any) { delete(m, "cps") }, "cps: missing in a cps record", true},
		{"misspelled field", false, func(m map[string]any) { m["transaction"] = m["transactions"] }, "transaction: unknown field", true},
		{"misspelled nested field", false, func(m map[string]any) { obj(m, "latency_us", "total")["p95"] = 1 }, "latency_us.total.p95: unknown field", true},
		{"misspelled in a series", false, func(m map[string]any) { m["series"].([]any)[2].(map[string]any)["tx"] = 1 }, "series[2].tx: unknown field", true},
		{"field in wrong case", false, func(m map[string]any) { m["Engine"] = m["engine"]; delete(m, "engine") }, "Engine: unknown field", true},
		{"unknown phase", false, func(m map[string]any) { obj(m, "latency_us")["tls"] = obj(m, "latency_us", "total") }, `latency_us: "tls" is not a phase`, true},
		{"percentiles out of order", false, func(m map[string]any) {
			p := obj(m, "latency_us", "total")
			p["p90"], p["p99"] = p["p99"], p["p90"]
		}, "latency_us.total.p99 (", false},
		{"max below p999", false, func(m map[string]any) { obj(m, "latency_us", "handshake")["max"] = 1 }, "latency_us.handshake.max (1) < p999", false},
		{"count not the histogram's", false, func(m map[string]any) {
			p := obj(m, "latency_us", "handshake")
			p["count"] = p["count"].(float64) + 1
		}, "histograms.handshake: counts", false},
		{"undecodable histogram", false, func(m map[string]any) { obj(m, "histograms")["total"] = "AAAA" }, "histograms.total: not an HdrHistogram", false},
		{"more merged first bytes than successes", false, func(m map[string]any) {
			w := obj(m, "whole_run")["transactions"].(float64)
			m["closes"] = map[string]any{"server_first": 1, "client_first": 0, "no_close_notify": 0, "first_byte_merged": w + 1}
		}, "closes.first_byte_merged: ", false},
		{"window not measured", false, func(m map[string]any) { m["duration_s"] = 0; m["cps"] = 0 }, "duration_s: 0 in a complete run", false},
		{"ended before started", false, func(m map[string]any) { m["ended"] = "2000-01-01T00:00:00Z" }, "ended: 2000-01-01T00:00:00Z is before started", false},
		{"negative steady start", false, func(m map[string]any) { m["steady_start_s"] = -2 }, "steady_start_s: -2 is negative", true},
		{"window after the run", false, func(m map[string]any) { m["steady_start_s"] = 1000 }, "duration_s: the window", false},
		{"seconds out of order", false, func(m map[string]any) {
			s := m["series"].([]any)
			s[3], s[4] = s[4], s[3]
		}, "series[4].t: ", false},
		{"bad time", false, func(m map[string]any) { m["started"] = "yesterday" }, "not a run record", true},
		{"errors do not add up", false, func(m map[string]any) { obj(m, "errors")["total"] = 0 }, "errors.total: 0, but the classes sum to", false},
		{"negative agent count", true, func(m map[string]any) { m["agents"].([]any)[1].(map[string]any)["transactions"] = -4 }, "agents[1].transactions: -4 is negative", true},
		{"agent shard beyond shards", true, func(m map[string]any) { m["agents"].([]any)[0].(map[string]any)["shard"] = 9 }, "agents[0].shard: 9 is not below shards", false},
		{"other share above 1", true, func(m map[string]any) { obj(m, "noise")["other_share"] = 1.5 }, "noise.other_share: 1.5 is above 1", true},
		{"negative steal", true, func(m map[string]any) {
			m["agents"].([]any)[2].(map[string]any)["noise"].(map[string]any)["steal_share"] = -0.1
		}, "agents[2].noise.steal_share: -0.1 is negative", true},
		{"misspelled noise field", true, func(m map[string]any) { obj(m, "noise")["other_cpu"] = 1 }, "noise.other_cpu: unknown field", true},
		{"DUT CPU of no process", true, func(m map[string]any) { delete(obj(m, "noise"), "dut_processes") }, "noise.dut_processes: 0, but dut_cores is set", false},
		{"misspelled agent field", true, func(m map[string]any) { m["agents"].([]any)[0].(map[string]any)["shardz"] = 1 }, "agents[0].shardz: unknown field", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := good
			if tc.merged {
				src = merged
			}
			var m map[string]any
			if err := json.Unmarshal(src, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			bad, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			serr := schematest.Check(schemas.Run, bad)
			if tc.schema && serr == nil {
				t.Errorf("the schema accepts the record")
			}
			file := filepath.Join(t.TempDir(), "run.json")
			if err := os.WriteFile(file, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = metrics.ReadRun(file)
			if err == nil {
				t.Fatalf("ReadRun accepts the record, want %q", tc.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, file+": "+tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("ReadRun error %q, want one line %q…", msg, file+": "+tc.want)
			}
		})
	}
}

// obj walks m down the keys to an object.
func obj(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

// TestCheckFields: a misspelled member is found at any depth, with its
// path; embedded structs' fields are known; free-form members are not
// looked into.
func TestCheckFields(t *testing.T) {
	for _, tc := range []struct {
		doc, want string
	}{
		{`{"schema":"x","cps":1,"requests_per_s":2}`, ""},
		{`{"config":{"anything":1},"profile_spec":{"x":[1]}}`, ""},
		{`{"agents":[{"name":"a","shard":0,"host":{"cpus":2}},{"nme":"b"}]}`, "agents[1].nme: unknown field"},
		{`{"latency_us":{"total":{"p50":1,"P99":2}}}`, "latency_us.total.P99: unknown field"},
		{`{"target":{"url":"u","adress":"a"}}`, "target.adress: unknown field"},
	} {
		err := metrics.CheckFields([]byte(tc.doc), &metrics.Run{})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckFields(%s) = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

// throughputOf is r as a throughput run: its transactions the requests,
// its rates those Fill gives over its window.
func throughputOf(r *metrics.Run) *metrics.Run {
	c := *r
	per := func(v float64) *float64 { return new(v / c.DurationS) }
	c.Engine, c.CPS = vocab.EngineThroughput, nil
	c.Requests, c.RPS = new(c.Transactions), per(float64(c.Transactions))
	c.Gbps, c.WireGbps = per(float64(c.Bytes.Payload)*8/1e9), per(float64(c.Bytes.WireIn)*8/1e9)
	return &c
}

// TestMergedRates: a merged record's rates are checked on read against its
// agents' counts over their windows (Σ transactions ÷ duration_s; the bytes
// between the longest and the shortest window). Merged records (agents with
// windows of different lengths, merged once and twice, cps and throughput)
// are accepted as Merge writes them; a rate multiplied by 10, or transactions
// that are not the agents' sum, are refused naming the field.
func TestMergedRates(t *testing.T) {
	_, played := play(t, [playAgents]int{})
	agents := slices.Clone(played)
	// Agent 1 measured a shorter window (9.5 s): its rate is over it.
	short := *agents[1]
	short.DurationS = 9.5
	short.CPS = new(float64(short.Transactions) / short.DurationS)
	agents[1] = &short
	var tput []*metrics.Run
	for _, a := range agents {
		tput = append(tput, throughputOf(a))
	}
	records := map[string]*metrics.Run{
		"cps":              merge(t, agents...),
		"cps merged twice": merge(t, merge(t, agents[0], agents[1]), merge(t, agents[2], agents[3])),
		"throughput":       merge(t, tput...),
		"throughput twice": merge(t, merge(t, tput[0], tput[3]), merge(t, tput[1], tput[2])),
	}
	for name, r := range records {
		data := marshalIndent(t, r)
		if _, err := metrics.DecodeRun(data); err != nil {
			t.Fatalf("%s: DecodeRun refuses the merged record as written: %v", name, err)
		}
		var edits []string
		if r.Engine == vocab.EngineCPS {
			edits = []string{"cps"}
		} else {
			edits = []string{"requests_per_s", "gbps", "wire_gbps"}
		}
		for _, field := range edits {
			for _, k := range []float64{10, 0.1} {
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					t.Fatal(err)
				}
				m[field] = m[field].(float64) * k
				_, err := metrics.DecodeRun(mustJSON(t, m))
				if err == nil || !strings.HasPrefix(err.Error(), field+": ") || !strings.Contains(err.Error(), "agents'") {
					t.Errorf("%s with %s ×%g: DecodeRun error %v, want %q naming the agents'", name, field, k, err, field+": …")
				}
			}
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		agent := m["agents"].([]any)[2].(map[string]any)
		agent["transactions"] = agent["transactions"].(float64) + 1
		if _, err := metrics.DecodeRun(mustJSON(t, m)); err == nil || !strings.HasPrefix(err.Error(), "transactions: ") {
			t.Errorf("%s with an agent's transactions +1: DecodeRun error %v, want transactions: …", name, err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
