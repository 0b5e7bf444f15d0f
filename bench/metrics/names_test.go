package metrics_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// namesRun is a run of agent shard i of 2 whose connections took the names
// conns times each, failed the handshakes of failed.
func namesRun(t *testing.T, shard int, list []string, conns, failed []int64) *metrics.Run {
	t.Helper()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := tcpRun(t, start, 20, 2, 100)
	r.Agent = &metrics.Agent{Name: string(rune('a' + shard)), Shard: shard, Shards: 2}
	r.Names = metrics.NewNames(list, conns, failed)
	return r
}

// TestNamesSummary: the summary is the per-name counts': sum, min, max,
// mean, and the names that failed, in order.
func TestNamesSummary(t *testing.T) {
	n := metrics.NewNames([]string{"a.test", "b.test", "c.test"}, []int64{4, 2, 3}, []int64{0, 2, 1})
	want := &metrics.Names{Count: 3, First: "a.test", ListSHA256: metrics.NameListSHA256([]string{"a.test", "b.test",
		"c.test"}), Connections: 9, ConnectionsMin: 2, ConnectionsMax: 4, ConnectionsMean: 3, FailedNames: 2,
		Failed:  []metrics.NameFailure{{Index: 1, Name: "b.test", Failures: 2}, {Index: 2, Name: "c.test", Failures: 1}},
		PerName: []int64{4, 2, 3}}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("NewNames = %+v\nwant %+v", n, want)
	}
	if a, b := metrics.NameListSHA256([]string{"ab", "c"}), metrics.NameListSHA256([]string{"a", "bc"}); a == b {
		t.Error("two lists of the same letters have one SHA-256")
	}
}

// TestNamesMerge: two agents' spreads merge exactly: each name's count
// and failures summed, the summary made from the sums (min of sums, not sum
// of mins); the merged record validates and round-trips.
func TestNamesMerge(t *testing.T) {
	list := []string{"a.test", "b.test", "c.test"}
	a := namesRun(t, 0, list, []int64{5, 3, 4}, []int64{0, 3, 0})
	b := namesRun(t, 1, list, []int64{3, 5, 4}, []int64{1, 2, 0})
	m := merge(t, a, b)
	want := metrics.NewNames(list, []int64{8, 8, 8}, []int64{1, 5, 0})
	if !reflect.DeepEqual(m.Names, want) {
		t.Errorf("merged %+v\nwant %+v", m.Names, want)
	}
	if m.Names.ConnectionsMin != 8 {
		t.Errorf("merged min %d, want 8 (the sums' min, not 3+3)", m.Names.ConnectionsMin)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back metrics.Run
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back.Names, m.Names) {
		t.Errorf("round trip: %+v, %v", back.Names, err)
	}
}

// TestNamesMergeRefuses: records of other lists, or one with names and one
// without, are not one run.
func TestNamesMergeRefuses(t *testing.T) {
	list := []string{"a.test", "b.test"}
	a := namesRun(t, 0, list, []int64{1, 1}, []int64{0, 0})
	other := namesRun(t, 1, []string{"a.test", "c.test"}, []int64{1, 1}, []int64{0, 0})
	none := namesRun(t, 1, list, []int64{1, 1}, []int64{0, 0})
	none.Names = nil
	for _, b := range []*metrics.Run{other, none} {
		if _, err := metrics.Merge([]*metrics.Run{a, b}); err == nil || !strings.Contains(err.Error(), "server name") {
			t.Errorf("merged a with %+v: %v, want a refusal naming server names", b.Names, err)
		}
	}
}

// TestNamesValidate: a names block inconsistent with its own counts is
// refused, naming the field.
func TestNamesValidate(t *testing.T) {
	list := []string{"a.test", "b.test", "c.test"}
	for _, c := range []struct {
		path string
		edit func(*metrics.Names)
	}{
		{"names.count", func(n *metrics.Names) { n.Count, n.PerName = 0, nil }},
		{"names.per_name", func(n *metrics.Names) { n.PerName = n.PerName[:2] }},
		{"names.list_sha256", func(n *metrics.Names) { n.ListSHA256 = "abc" }},
		{"names.connections", func(n *metrics.Names) { n.Connections++ }},
		{"names.connections_min", func(n *metrics.Names) { n.ConnectionsMax++ }},
		{"names.connections_mean", func(n *metrics.Names) { n.ConnectionsMean++ }},
		{"names.failed_names", func(n *metrics.Names) { n.FailedNames = 0 }},
		{"names.failed[0].failures", func(n *metrics.Names) { n.Failed[0].Failures = 99 }},
		{"names.failed[1].index", func(n *metrics.Names) { n.Failed[1].Index = 0 }},
		{"names.failed[0].index", func(n *metrics.Names) { n.Failed[0].Index = 3 }},
	} {
		r := namesRun(t, 0, list, []int64{3, 4, 5}, []int64{1, 0, 2})
		if err := r.Validate(); err != nil {
			t.Fatalf("unedited: %v", err)
		}
		c.edit(r.Names)
		if err := r.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.path) {
			t.Errorf("%s: %v", c.path, err)
		}
	}
}
