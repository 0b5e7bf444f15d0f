package method_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports"
)

// cpuExec is a fakeExec whose runs also record the DUT's CPU, as
// bench/sysnoise measures it on one machine: dut gives the cores its
// processes used (the run's value given) on the 1 CPU they may run on;
// without dut the DUT is not measured. It keeps every request.
type cpuExec struct {
	*fakeExec
	dut       func(v float64) float64
	generator bool    // the generator saturated (metrics.Client.GeneratorBound)
	other     float64 // the machine's other processes' cores
	reqs      []method.Request
}

func (c *cpuExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	r, err := c.fakeExec.Run(ctx, req)
	c.reqs = append(c.reqs, req)
	if err == nil && c.dut != nil {
		cores := c.dut(metrics.Value(r.CPS))
		r.Noise = &metrics.Noise{WindowS: r.DurationS, CPUs: 2, GeneratorCores: 0.5, DUTCores: &cores,
			DUTProcesses: 2, DUTCPUs: 1, OtherCores: c.other, OtherShare: c.other / 2}
	}
	if c.generator {
		r.Client.Utilization, r.Client.GeneratorBound = 0.95, true
	}
	return r, err
}

// dippedProbes: a device whose CPS grows 1,025 per connection up to its
// capacity, 2,600 from 4 connections on, its processes using value ÷ 2,680
// of their one CPU (0.76 at 2 connections, 0.97 at 4). Its short
// exploratory probes above 2 connections read 1,900 at 0.80 of the CPU (a
// noisy dip, as the second campaign saw at c=4 and c=8); its longer
// probes and final runs read the curve. capacity lowers the curve's top.
func dippedProbes(capacity float64) *cpuExec {
	fe := &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		v := min(1025*float64(req.Concurrency), capacity)
		if req.Phase == vocab.Exploratory && req.Duration == 5*time.Second && req.Concurrency > 2 {
			v = min(1900, v)
		}
		return v, nil
	}}
	return &cpuExec{fakeExec: fe, dut: func(v float64) float64 {
		if v == 1900 {
			return 0.80
		}
		return min(v/2680, 0.98)
	}}
}

// TestSearchSettlesNoisyDip: with the device's CPU unsaturated at c=2
// (0.76) and the short probes at 4 and 8 reading lower (a noisy dip), the
// search no longer freezes 2: it probes 2 and 4 again for three times the
// probe duration, finds 4 higher and saturated (0.97), and freezes it. The
// ledger and the summary record every probe.
func TestSearchSettlesNoisyDip(t *testing.T) {
	fe := dippedProbes(2600)
	dir := t.TempDir()
	s, err := campaign(t, searchPlan(), fe, dir).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validSummary(t, s)
	c := s.Cells[0]
	if frozenLevel(c) != 4 || c.Value != 2600 || c.DeviceNotSaturated {
		t.Errorf("level %d, value %g, not saturated %v, search %+v: want 4, 2600 and saturated",
			frozenLevel(c), c.Value, c.DeviceNotSaturated, c.Search)
	}
	t.Logf("search %+v", c.Search)
	if c.Search == nil || !slices.Equal(c.Search.Longer, []int{2, 4}) {
		t.Fatalf("search %+v: want 2 and 4 probed again for longer", c.Search)
	}
	var longer, explored []int
	for _, r := range fe.reqs {
		if r.Phase != vocab.Exploratory {
			continue
		}
		explored = append(explored, r.Concurrency)
		if r.Duration != 5*time.Second {
			longer = append(longer, r.Concurrency)
			if r.Duration != 15*time.Second {
				t.Errorf("longer probe at %d: %v, want 15s (3 × the probe's 5s)", r.Concurrency, r.Duration)
			}
		}
	}
	if !slices.Equal(longer, []int{2, 4}) || !slices.Equal(explored, c.Search.Order) {
		t.Errorf("probes made %v (longer %v), the search's order %v", explored, longer, c.Search.Order)
	}
	l, err := method.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	for _, e := range l.Entries() {
		if e.Phase == vocab.Exploratory {
			n++
		}
	}
	if n != len(c.Search.Order) {
		t.Errorf("the ledger has %d exploratory probes, the search made %d", n, len(c.Search.Order))
	}
}

// TestSearchSaturatedKeepsLevel: a device whose CPU is saturated at c=2
// already (0.95 of its CPU) with the same dip above is frozen at 2, as
// before: no probe is made again for longer, and the search is the one it
// makes when the DUT's CPU is not measured at all.
func TestSearchSaturatedKeepsLevel(t *testing.T) {
	var searches []*method.Search
	for _, measured := range []bool{true, false} {
		fe := dippedProbes(2050)
		fe.dut = map[bool]func(float64) float64{true: func(v float64) float64 { return 0.95 }}[measured]
		s, err := campaign(t, searchPlan(), fe, t.TempDir()).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c := s.Cells[0]
		if frozenLevel(c) != 2 || c.DeviceNotSaturated || len(c.Search.Longer) > 0 {
			t.Errorf("DUT measured %v: level %d, not saturated %v, search %+v: want 2, nothing probed longer",
				measured, frozenLevel(c), c.DeviceNotSaturated, c.Search)
		}
		searches = append(searches, c.Search)
	}
	if a, b := searches[0], searches[1]; !slices.Equal(a.Order, b.Order) || a.Stop != b.Stop {
		t.Errorf("saturated DUT: search %+v; not measured: %+v", a, b)
	}
}

// TestSearchPrefersSaturated: among levels equal within min_gain, the
// search freezes the one where the DUT's CPU was saturated, not a higher
// reading (+3%) where it was not.
func TestSearchPrefersSaturated(t *testing.T) {
	// 250 CPS per connection up to 8 (2,000 at 0.95 of the CPU), then
	// 2,060 at 0.70 of it.
	fe := &cpuExec{fakeExec: &fakeExec{value: func(req method.Request, _ int) (float64, map[string]int64) {
		return min(250*float64(req.Concurrency), map[bool]float64{true: 2000, false: 2060}[req.Concurrency <= 8]), nil
	}}, dut: func(v float64) float64 { return map[bool]float64{true: 0.95, false: 0.7}[v == 2000] }}
	s, err := campaign(t, searchPlan(), fe, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0]
	if frozenLevel(c) != 8 || c.DeviceNotSaturated {
		t.Errorf("level %d, search %+v, not saturated %v: want 8 (saturated) preferred", frozenLevel(c), c.Search,
			c.DeviceNotSaturated)
	}
}

// TestDeviceNotSaturated: a value published where the DUT's processes used
// half their CPU and the generator was not saturated says so in the
// summary and the table's note (0.5 of the 0.8 core the generator, 0.5,
// and other processes, 0.7, left of 2); not when the generator was
// saturated, nor when other processes left the DUT no more than it used
// (1.0 and 0.5 of 2), nor when the DUT's CPU was not measured (a remote
// device).
func TestDeviceNotSaturated(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dut       func(float64) float64
		generator bool
		other     float64
		want      bool
	}{
		{"unsaturated", func(float64) float64 { return 0.5 }, false, 0.7, true},
		{"generator saturated", func(float64) float64 { return 0.5 }, true, 0, false},
		{"machine saturated", func(float64) float64 { return 0.5 }, false, 1.0, false},
		{"not measured", nil, false, 0, false},
		{"saturated", func(float64) float64 { return 0.92 }, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := &cpuExec{fakeExec: &fakeExec{}, dut: tc.dut, generator: tc.generator, other: tc.other}
			p := searchPlan()
			p.Method.Accept.MaxGeneratorCPU = 1
			s, err := campaign(t, p, fe, t.TempDir()).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			validSummary(t, s)
			c := s.Cells[0]
			if c.Accepted == 0 || c.DeviceNotSaturated != tc.want {
				t.Fatalf("accepted %d, device_not_saturated %v, want %v", c.Accepted, c.DeviceNotSaturated, tc.want)
			}
			var table strings.Builder
			if err := reports.QualifyTable(&reports.Campaign{Summary: s}).Text(&table); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(table.String(), "CPS: [s] device not saturated"); got != tc.want {
				t.Errorf("the table says \"device not saturated\": %v, want %v\n%s", got, tc.want, table.String())
			}
		})
	}
}
