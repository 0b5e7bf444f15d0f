package promexp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/promexp"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// gather returns the metrics of name whose labels include want.
func gather(t *testing.T, e *promexp.Exporter, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.Metric {
			for k, v := range want {
				found := false
				for _, l := range m.Label {
					if l.GetName() == k && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			out = append(out, m)
		}
	}
	return out
}

func value(t *testing.T, e *promexp.Exporter, name string, want map[string]string) float64 {
	t.Helper()
	ms := gather(t, e, name, want)
	if len(ms) != 1 {
		t.Fatalf("%s %v: %d series, want 1", name, want, len(ms))
	}
	m := ms[0]
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	t.Fatalf("%s: no value", name)
	return 0
}

func sample(class vocab.Class) *metrics.Sample {
	s := &metrics.Sample{Steady: true, Handshake: class == "", Opened: true, Class: class, Payload: 1024, WireIn: 3000, WireOut: 500}
	if class != "" {
		s.Err = errors.New(string(class))
	}
	for p := range s.Dur {
		s.Dur[p] = time.Duration(p+1) * time.Millisecond
	}
	return s
}

// TestRunLifecycle: nothing before the load, the recorder's counts while
// it goes, frozen values (running 0) once finished, and only the last
// KeepFinished finished runs kept.
func TestRunLifecycle(t *testing.T) {
	e := promexp.New()
	r := e.Begin(promexp.RunLabels{Engine: "cps", Profile: "p", DUT: "d", Shard: -1, Protocol: "http/2"})
	sel := map[string]string{"dut": "d", "profile": "p", "engine": "cps", "protocol": "http/2"}
	if ms := gather(t, e, "tlsbench_transactions_total", sel); len(ms) != 0 {
		t.Errorf("before the load: %d series", len(ms))
	}
	start := time.Now()
	rec := metrics.NewRecorder(2, start)
	r.Live(engine.Live{Recorder: rec, Started: start, SteadyStart: start, End: start.Add(time.Hour),
		OpenConns: func() (int64, int64) { return 3, 5 }})
	for i := range 100 {
		rec.Record(i, sample(""))
	}
	for i := range 7 {
		rec.Record(i, sample(vocab.ClassReset))
	}
	if got := value(t, e, "tlsbench_transactions_total", sel); got != 100 {
		t.Errorf("transactions %v, want 100", got)
	}
	if got := value(t, e, "tlsbench_errors_total", map[string]string{"dut": "d", "class": "reset"}); got != 7 {
		t.Errorf("reset errors %v, want 7", got)
	}
	if got := value(t, e, "tlsbench_errors_total", map[string]string{"dut": "d", "class": "refused"}); got != 0 {
		t.Errorf("refused errors %v, want 0", got)
	}
	if got := value(t, e, "tlsbench_latency_seconds", map[string]string{"dut": "d", "phase": "handshake"}); got != 100 {
		t.Errorf("handshake latency count %v, want 100", got)
	}
	if got := value(t, e, "tlsbench_payload_bytes_total", sel); got != 100*1024 {
		t.Errorf("payload %v", got)
	}
	if got := value(t, e, "tlsbench_wire_out_bytes_total", sel); got != 107*500 {
		t.Errorf("wire out %v", got)
	}
	if got := value(t, e, "tlsbench_connections_held", sel); got != 3 {
		t.Errorf("held %v, want 3", got)
	}
	if got := value(t, e, "tlsbench_run_running", sel); got != 1 {
		t.Errorf("running %v, want 1", got)
	}
	if ms := gather(t, e, "tlsbench_tcp_retransmits_total", sel); len(ms) != 0 {
		t.Errorf("TCP retransmits exposed before the run's end: %v", ms)
	}
	r.Finish(&metrics.Run{TCP: &metrics.TCP{Connections: 50, Retransmits: 9, SynRetransmits: 4, ResetsReceived: 2}})
	rec.Record(0, sample("")) // after the end: not counted
	for name, want := range map[string]float64{"tlsbench_tcp_retransmits_total": 9, "tlsbench_tcp_syn_retransmits_total": 4, "tlsbench_tcp_resets_received_total": 2} {
		if got := value(t, e, name, sel); got != want {
			t.Errorf("%s = %v at the end, want the record's %v", name, got, want)
		}
	}
	if got := value(t, e, "tlsbench_transactions_total", sel); got != 100 {
		t.Errorf("frozen transactions %v, want 100", got)
	}
	if got := value(t, e, "tlsbench_run_running", sel); got != 0 {
		t.Errorf("running %v after Finish", got)
	}
	if got := value(t, e, "tlsbench_connections_held", sel); got != 0 {
		t.Errorf("held %v after Finish", got)
	}
	for i := range promexp.KeepFinished + 3 {
		r := e.Begin(promexp.RunLabels{Engine: "cps", Profile: "p", DUT: "d", Shard: -1, Phase: "final", Run: i + 1})
		r.Live(engine.Live{Recorder: metrics.NewRecorder(1, start), Started: start})
		r.Finish(&metrics.Run{TCP: &metrics.TCP{Unavailable: "not Linux"}})
	}
	// The first run (which measured them) is no longer kept; the others
	// could not measure them and expose none.
	if ms := gather(t, e, "tlsbench_tcp_retransmits_total", map[string]string{"dut": "d"}); len(ms) != 0 {
		t.Errorf("TCP retransmits of %d runs exposed, want none", len(ms))
	}
	if ms := gather(t, e, "tlsbench_transactions_total", map[string]string{"dut": "d"}); len(ms) != promexp.KeepFinished {
		t.Errorf("%d finished runs exposed, want %d", len(ms), promexp.KeepFinished)
	}
}

// TestLiveFromEngine: engine.Run hands the recorder to Config.Live, and
// the exporter's count after the run is the outcome's.
func TestLiveFromEngine(t *testing.T) {
	e := promexp.New()
	r := e.Begin(promexp.RunLabels{Engine: "cps", Profile: "p", Shard: -1})
	out, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2, Duration: 200 * time.Millisecond}, Live: r.Live}, nopOp{})
	if err != nil {
		t.Fatal(err)
	}
	r.Finish(nil)
	if got := value(t, e, "tlsbench_transactions_total", map[string]string{"profile": "p"}); got != float64(out.Snapshot.OK) || got == 0 {
		t.Errorf("transactions %v, the outcome's %d", got, out.Snapshot.OK)
	}
}

type nopOp struct{}
type nopWorker struct{}

func (nopOp) NewWorker(int) (engine.Worker, error) { return nopWorker{}, nil }
func (nopWorker) Do(_ context.Context, s *metrics.Sample) {
	time.Sleep(time.Millisecond)
	s.Dur[vocab.PhaseTotal] = time.Since(s.Start)
}

func TestCampaign(t *testing.T) {
	e := promexp.New()
	c := e.Campaign()
	if ms := gather(t, e, "tlsbench_campaign_runs_left", nil); len(ms) != 0 {
		t.Error("runs left exposed while unknown")
	}
	c.Update(func(s *promexp.CampaignState) {
		s.Run, s.Running, s.Phase, s.DUT, s.Engine, s.Profile, s.Seq, s.Of, s.RunsLeft = 5, true, "final", "d", "cps", "p", 2, 6, 4
		s.RunsDone["final"], s.Accepted["final"], s.Rejected["final"] = 2, 1, 1
		s.Protocol = "http/2"
	})
	for name, want := range map[string]float64{"tlsbench_campaign_run": 5, "tlsbench_campaign_running": 1, "tlsbench_campaign_cell_run": 2,
		"tlsbench_campaign_cell_runs_max": 6, "tlsbench_campaign_runs_left": 4} {
		if got := value(t, e, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := value(t, e, "tlsbench_campaign_current_run_info", map[string]string{"phase": "final", "dut": "d", "engine": "cps", "profile": "p",
		"protocol": "http/2"}); got != 1 {
		t.Errorf("current run info %v", got)
	}
	if got := value(t, e, "tlsbench_campaign_runs_rejected_total", map[string]string{"phase": "final"}); got != 1 {
		t.Errorf("rejected %v", got)
	}
	if got := value(t, e, "tlsbench_campaign_runs_done_total", map[string]string{"phase": "exploratory"}); got != 0 {
		t.Errorf("exploratory done %v", got)
	}
}

// TestTarget: the reference target's per-listener counters, as /stats
// has them.
func TestTarget(t *testing.T) {
	e := promexp.New()
	stats := []target.Stats{{Profile: "a", Address: "127.0.0.1:1", Handshakes: 10, Resumed: 1, Requests: 12, HandshakeErrors: 2, Connections: 13,
		Injected: map[string]int64{"reset": 3}, ByProtocol: map[string]int64{"http/1.1": 5, "http/2": 7}},
		{Profile: "b", Address: "127.0.0.1:2", Handshakes: 4}}
	e.Target(func() []target.Stats { return stats })
	for name, want := range map[string]float64{"tlsbench_target_handshakes_total": 10, "tlsbench_target_resumed_total": 1,
		"tlsbench_target_requests_total": 12, "tlsbench_target_handshake_errors_total": 2, "tlsbench_target_connections_total": 13,
		"tlsbench_target_faults_injected_total": 3} {
		if got := value(t, e, name, map[string]string{"profile": "a"}); got != want {
			t.Errorf("%s{profile=a} = %v, want %v", name, got, want)
		}
	}
	if got := value(t, e, "tlsbench_target_requests_by_protocol_total", map[string]string{"profile": "a",
		"protocol": "http/2"}); got != 7 {
		t.Errorf("a's HTTP/2 requests %v", got)
	}
	if got := value(t, e, "tlsbench_target_handshakes_total", map[string]string{"profile": "b"}); got != 4 {
		t.Errorf("b's handshakes %v", got)
	}
}
