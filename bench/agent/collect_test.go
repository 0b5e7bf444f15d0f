package agent_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// testStart is when the tests' records started: the same for all (the
// agents of one run measured together), after every collection of these
// tests began (a collection takes no record of an earlier run).
var testStart = time.Now().Add(time.Hour)

// pushed is a valid record of shard i of 2.
func pushed(t *testing.T, i int) *metrics.Run {
	t.Helper()
	rec := metrics.NewRecorder(1, time.Now())
	var d [vocab.NumTimed]time.Duration
	d[vocab.PhaseTotal] = 3 * time.Millisecond
	rec.Record(0, &metrics.Sample{Steady: true, Dur: d})
	r := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Complete: true, Load: metrics.Load{Mode: "closed", Concurrency: 1},
		Agent:   &metrics.Agent{Name: "a" + string(rune('0'+i)), Shard: i, Shards: 2},
		Started: testStart}
	if err := r.Fill(rec.Snapshot(), time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCollectorRefusesInvalidRecords: a pushed record that is not valid (a
// negative count, −1e308 CPS) is refused with 400 and the field named; a
// valid one is taken.
func TestCollectorRefusesInvalidRecords(t *testing.T) {
	c := agent.NewCollector(testToken)
	b := c.Expect("r1", 2)
	srv := httptest.NewServer(c)
	defer srv.Close()
	ctx := context.Background()
	cred := agent.Credentials{Token: testToken}

	bad := pushed(t, 0)
	bad.Transactions = -3
	err := agent.Push(ctx, srv.URL+"/runs/r1", cred, bad)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "transactions: -3 is negative") {
		t.Errorf("pushing a negative count: %v, want a 400 naming transactions", err)
	}
	bad = pushed(t, 1)
	bad.CPS = new(-1e308)
	if err := agent.Push(ctx, srv.URL+"/runs/r1", cred, bad); err == nil || !strings.Contains(err.Error(), "cps: -1e+308 is negative") {
		t.Errorf("pushing -1e308 CPS: %v, want a 400 naming cps", err)
	}
	for i := range 2 {
		if err := agent.Push(ctx, srv.URL+"/runs/r1", cred, pushed(t, i)); err != nil {
			t.Fatalf("pushing a valid record: %v", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	runs, err := b.Wait(wctx)
	if err != nil || len(runs) != 2 {
		t.Fatalf("Wait: %d records, %v", len(runs), err)
	}
}
