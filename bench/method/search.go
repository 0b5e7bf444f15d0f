package method

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// Search is how a cell's exploration went: every probe in the order made,
// the probes made again, and why the geometric steps stopped.
type Search struct {
	// Order is the levels in the order probed.
	Order []int `json:"order"`
	// Replaced are the first probes of the levels probed again because
	// their neighbours disagreed with them.
	Replaced []Probe `json:"replaced,omitempty"`
	// Stop says why the geometric steps stopped.
	Stop   string `json:"stop"`
	Longer []int  `json:"longer,omitempty"` // the levels probed again for longer (settle)
}

// searchPatience is how many levels in a row that do not gain min_gain
// over the best end the geometric steps (one noisy probe never does).
const searchPatience = 2

// maxRepeats and maxLonger are the most probes a search makes again (disagreeing) and again for longer
// (settle), longerTimes × explore.probe_duration long (at most the final runs'); saturatedAt is the share
// of the CPUs they may run on from which a DUT's processes are saturated (the generator: of its cores).
const maxRepeats, maxLonger, longerTimes, saturatedAt = 2, 3, 3, 0.9

// dutShare is a run's noise.dut_cores ÷ the cores the DUT could have used: its dut_cpus, at most what the
// generator and other processes left of the machine's CPUs (a share of at most 1); nil when unknown.
func dutShare(r *metrics.Run) *float64 {
	if n := r.Noise; n != nil && n.DUTCores != nil && n.DUTCPUs > 0 {
		free := min(float64(n.DUTCPUs), float64(n.CPUs)-n.GeneratorCores-n.OtherCores)
		return new(*n.DUTCores / max(free, *n.DUTCores, 0.01))
	}
	return nil
}

// unsaturated: a run's DUT share was measured below saturatedAt and its generator was not saturated either.
func unsaturated(r *metrics.Run) bool {
	d := dutShare(r)
	return d != nil && *d < saturatedAt && !r.Client.GeneratorBound
}

// search is the exploratory search of one cell.
type search struct {
	steps []int                                        // the geometric levels, from min to max
	gain  float64                                      // min_gain
	probe func(level int, kind string) (*Entry, error) // makes (or finds) a probe; kind "", "again", "longer"
	got   map[int]*Entry                               // the latest probe of each level
	info  Search
}

func newSearch(min, max int, gain float64, probe func(level int, kind string) (*Entry, error)) *search {
	s := &search{gain: gain, probe: probe, got: map[int]*Entry{}}
	for level := min; level >= 1 && level <= max; level *= 2 {
		s.steps = append(s.steps, level)
	}
	return s
}

// at returns the latest probe at level, probing it once if none.
func (s *search) at(level int) (*Entry, error) {
	if e, ok := s.got[level]; ok {
		return e, nil
	}
	e, err := s.probe(level, "")
	if err != nil {
		return nil, err
	}
	s.got[level] = e
	s.info.Order = append(s.info.Order, level)
	return e, nil
}

// again probes level once more (kind "again" or "longer"), replacing its latest probe.
func (s *search) again(level int, kind string) error {
	e, err := s.probe(level, kind)
	if err != nil {
		return err
	}
	s.info.Replaced = append(s.info.Replaced, probeOf(level, s.got[level]))
	s.got[level] = e
	s.info.Order = append(s.info.Order, level)
	if kind == "longer" {
		s.info.Longer = append(s.info.Longer, level)
	}
	return nil
}

// probesOf are the latest probe of each level, by level.
func probesOf(got map[int]*Entry) []Probe {
	var ps []Probe
	for _, l := range slices.Sorted(maps.Keys(got)) {
		ps = append(ps, probeOf(l, got[l]))
	}
	return ps
}

// run makes the search and returns the best accepted level (0 when none).
func (s *search) run() (int, error) {
	best := 0
	// The lowest level rejected generator-bound: the levels below it, halving down to 1, are tried first.
	for len(s.steps) > 0 && s.steps[0] > 1 {
		e, err := s.at(s.steps[0])
		if err != nil {
			return 0, err
		}
		bound := func(r string) bool { return strings.HasPrefix(r, "generator-bound") }
		if e.Accepted || !slices.ContainsFunc(e.Reasons, bound) {
			break
		}
		s.steps = append([]int{s.steps[0] / 2}, s.steps...)
	}
	for range maxRepeats + 1 {
		var err error
		if best, err = s.ascend(); err != nil {
			return 0, err
		}
		level := s.disagreeing()
		if level == 0 || len(s.info.Replaced) >= maxRepeats {
			break
		}
		if err := s.again(level, "again"); err != nil {
			return 0, err
		}
	}
	best, err := s.settle(best)
	if err != nil || best == 0 {
		return 0, err
	}
	if best, err = s.refine(best); err != nil {
		return 0, err
	}
	return prefer(probesOf(s.got), best, s.gain), nil
}

// settle probes the best level and the step above it again for longer when
// that one reads lower by more than min_gain while the best was unsaturated
// (more load should not give less), then takes the steps again.
func (s *search) settle(best int) (int, error) {
	for i := slices.Index(s.steps, best); i >= 0 && i+1 < len(s.steps); i = slices.Index(s.steps, best) {
		lo, hi, n := s.got[best], s.got[s.steps[i+1]], len(s.info.Longer)
		if hi == nil || !hi.Accepted || !unsaturated(lo.Run) || hi.Value >= lo.Value*(1-s.gain) {
			break
		}
		for _, l := range s.steps[i : i+2] {
			if !slices.Contains(s.info.Longer, l) && len(s.info.Longer) < maxLonger {
				if err := s.again(l, "longer"); err != nil {
					return 0, err
				}
			}
		}
		var err error
		if best, err = s.ascend(); err != nil || n == len(s.info.Longer) {
			return best, err // nothing new: both were probed longer already
		}
	}
	return best, nil
}

// prefer returns best, or, if best's DUT was measured unsaturated, the
// best accepted probe within min_gain of it whose DUT was saturated.
func prefer(ps []Probe, best int, gain float64) int {
	i := slices.IndexFunc(ps, func(p Probe) bool { return p.Level == best })
	if i < 0 || ps[i].DUTCPU == nil || *ps[i].DUTCPU >= saturatedAt {
		return best
	}
	out, v := best, 0.0
	for _, p := range ps {
		if p.Accepted && p.DUTCPU != nil && *p.DUTCPU >= saturatedAt && p.Value >= ps[i].Value*(1-gain) && p.Value > v {
			out, v = p.Level, p.Value
		}
	}
	return out
}

// ascend takes the geometric steps up from min until a probe is rejected,
// searchPatience levels in a row do not gain min_gain over the best, or
// max; it returns the best accepted level.
func (s *search) ascend() (int, error) {
	best, bestValue := 0, 0.0
	var flat []int // the levels in a row that did not gain
	for _, level := range s.steps {
		e, err := s.at(level)
		if err != nil {
			return 0, err
		}
		if !e.Accepted {
			s.info.Stop = fmt.Sprintf("the probe at %d was rejected", level)
			return best, nil
		}
		if e.Value > bestValue*(1+s.gain) {
			best, bestValue, flat = level, e.Value, nil
			continue
		}
		if e.Value > bestValue {
			best, bestValue = level, e.Value
		}
		if flat = append(flat, level); len(flat) >= searchPatience {
			s.info.Stop = fmt.Sprintf("no gain of min_gain %.3g%% over the best at %s in a row", s.gain*100, levelsText(flat))
			return best, nil
		}
	}
	s.info.Stop = fmt.Sprintf("reached explore.concurrency.max (%d)", s.steps[len(s.steps)-1])
	return best, nil
}

// disagreeing returns the geometric level, not yet probed again, whose
// accepted value disagrees most with both accepted neighbours: below both
// or above both by more than min_gain (a dip before a spike, the lower
// level first, when they disagree alike); 0 when none does.
func (s *search) disagreeing() int {
	level, most, dip := 0, 1+s.gain, false
	for i := 1; i+1 < len(s.steps); i++ {
		lo, mid, hi := s.got[s.steps[i-1]], s.got[s.steps[i]], s.got[s.steps[i+1]]
		if lo == nil || mid == nil || hi == nil || !lo.Accepted || !mid.Accepted || !hi.Accepted ||
			slices.ContainsFunc(s.info.Replaced, func(p Probe) bool { return p.Level == s.steps[i] }) {
			continue
		}
		below, above := min(lo.Value, hi.Value)/mid.Value, mid.Value/max(lo.Value, hi.Value)
		if mid.Value <= 0 {
			below = math.Inf(1)
		}
		switch {
		case below > most || below == most && level != 0 && !dip:
			level, most, dip = s.steps[i], below, true
		case above > most:
			level, most, dip = s.steps[i], above, false
		}
	}
	return level
}

// refine probes the geometric midpoints between the best and its probed
// neighbours and returns the best accepted level.
func (s *search) refine(best int) (int, error) {
	bestValue := s.got[best].Value
	steps, i := s.steps, slices.Index(s.steps, best)
	for _, nb := range []int{i - 1, i + 1} {
		if nb < 0 || nb >= len(steps) || s.got[steps[nb]] == nil {
			continue
		}
		mid := int(math.Round(math.Sqrt(float64(best) * float64(steps[nb]))))
		if mid == best || mid == steps[nb] {
			continue
		}
		e, err := s.at(mid)
		if err != nil {
			return 0, err
		}
		if e.Accepted && e.Value > bestValue {
			best, bestValue = mid, e.Value
		}
	}
	return best, nil
}

// probeOf is what the summary keeps of an exploratory probe.
func probeOf(level int, e *Entry) Probe {
	return Probe{Level: level, Value: e.Value, P99US: p99(e.Run), Errors: e.Run.Errors.Total,
		GeneratorCPU: e.Run.Client.Utilization, Accepted: e.Accepted, Reasons: e.Reasons, DUTCPU: dutShare(e.Run)}
}

// levelsText is "8 and 16", "4, 8 and 16".
func levelsText(levels []int) string {
	s := make([]string, len(levels))
	for i, l := range levels {
		s[i] = strconv.Itoa(l)
	}
	if n := len(s); n > 1 {
		return strings.Join(s[:n-1], ", ") + " and " + s[n-1]
	}
	return strings.Join(s, "")
}
