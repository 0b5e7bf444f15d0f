package main

import (
	"context"
	"os"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/promexp"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
)

// envMetricsListen is the agents' --metrics-listen when the flag is not
// given (a launcher or manifest may set it).
const envMetricsListen = "TLSBENCH_METRICS_LISTEN"

// agentDefault takes the environment's address when the flag is unset;
// an agent's stdout has its summary, so its stream is a file.
func (f *liveFlags) agentDefault() error {
	if f.listen == "" {
		f.listen = os.Getenv(envMetricsListen)
		f.fromEnv = f.listen != ""
	}
	if f.stream == stdoutName {
		return usagef("--stream: an agent streams to a FILE (its stdout has the summary)")
	}
	return nil
}

// serveTarget exposes the reference target's counters.
func (s *liveSession) serveTarget(t *target.Target) {
	if e := s.exporter(); e != nil {
		e.Target(t.Stats)
	}
}

// impactHooks makes every round of an impact study a run of its own in
// the metrics (method_phase: the side, run: the round), and wraps the
// study's Events to end them.
func (s *liveSession) impactHooks(specs []*runner.Spec, st *impact.Study) {
	e := s.exporter()
	if e == nil {
		return
	}
	cur := map[string]**promexp.Run{} // a side's run going on
	rounds := map[string]int{}
	for i, side := range []string{impact.BaselineSide, impact.CandidateSide} {
		spec := specs[i]
		slot := new(*promexp.Run)
		cur[side] = slot
		spec.Live = func(lv runner.Live) {
			rounds[side]++ // runs are made one at a time
			l := runLabels(spec)
			l.Phase, l.Run = side, rounds[side]
			r := e.Begin(l)
			r.Live(lv)
			s.keep(slot, r)
		}
	}
	prev := st.Events
	st.Events = func(side string, round int, rec *metrics.Run) {
		if prev != nil {
			prev(side, round, rec)
		}
		if slot := cur[side]; slot != nil {
			s.end(slot, rec)
		}
	}
}

// campaignHooks exposes a campaign: its state (promexp.Campaign) from the
// runs it asks for and their events, and each local run's metrics.
func (s *liveSession) campaignHooks(c *method.Campaign, local *method.Local) {
	e := s.exporter()
	if e == nil {
		return
	}
	camp := e.Campaign()
	w := &campaignExec{inner: c.Exec, s: s, camp: camp}
	c.Exec = w
	local.Live = w.live
	prevWatch := c.Watch
	c.Watch = func(p method.Progress) {
		if prevWatch != nil {
			prevWatch(p)
		}
		camp.Update(func(st *promexp.CampaignState) {
			st.RunsLeft, st.Cells, st.CellsDone = p.RunsLeft, p.Cells, p.CellsDone
		})
	}
	prev := c.Events
	c.Events = func(ev method.Event) {
		if prev != nil {
			prev(ev)
		}
		camp.Update(func(st *promexp.CampaignState) {
			p := string(ev.Phase)
			st.RunsDone[p]++
			if ev.Accepted {
				st.Accepted[p]++
			} else {
				st.Rejected[p]++
			}
			if ev.Of > 0 {
				st.Seq, st.Of = ev.Seq, ev.Of
			}
		})
	}
}

// campaignExec is a campaign's executor, wrapped to name each run in the
// metrics.
type campaignExec struct {
	inner method.Executor
	s     *liveSession
	camp  *promexp.Campaign
	n     int
	req   method.Request
	run   *promexp.Run
}

// live is the local runs' runner.Spec.Live: the run begins in the metrics
// with the campaign's labels.
func (w *campaignExec) live(lv runner.Live) {
	r := w.s.exp.Begin(promexp.RunLabels{Engine: string(w.req.Test.Engine), Profile: w.req.Profile.Name,
		DUT: w.req.DUT.Name, Shard: -1, Phase: string(w.req.Phase), Run: w.n, Protocol: w.req.Test.Protocol()})
	r.Live(lv)
	w.s.keep(&w.run, r)
}

// Run implements method.Executor.
func (w *campaignExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	w.n++
	w.req = req
	w.camp.Update(func(st *promexp.CampaignState) {
		st.Run, st.Running, st.Phase, st.DUT = w.n, true, string(req.Phase), req.DUT.Name
		st.Engine, st.Profile, st.Level = string(req.Test.Engine), req.Profile.Name, req.Concurrency
		st.Protocol = req.Test.Protocol()
	})
	rec, err := w.inner.Run(ctx, req)
	w.camp.Update(func(st *promexp.CampaignState) { st.Running = false })
	w.s.end(&w.run, rec)
	return rec, err
}

// Resumption implements method.Executor.
func (w *campaignExec) Resumption(ctx context.Context, req method.Request) (*metrics.Preflight, error) {
	return w.inner.Resumption(ctx, req)
}
