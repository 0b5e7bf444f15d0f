package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// deviceCountersExample is shown with a bad --device-counters.
const deviceCountersExample = "kind=haproxy url=http://127.0.0.1:8404/stats;csv frontend=NAME"

// deviceCountersFlag is --device-counters: the source is parsed (and
// checked) as the flag is set, into the spec.
type deviceCountersFlag struct {
	spec *runner.Spec
	text string
}

// A second --device-counters is refused rather than combined: a run's
// record holds one device block, counted by one source (metrics.Device),
// and its counts are compared with the engine's as one device's; two
// sources would be two devices, or the same counts twice.
func (f *deviceCountersFlag) Set(v string) error {
	if f.text != "" {
		return usagef("--device-counters given twice (%q, then %q): a run reads one device's counters, give one SPEC",
			f.text, v)
	}
	src, err := devcount.Parse(v)
	if err != nil {
		why := err.Error()
		var se *devcount.SpecError
		if errors.As(err, &se) {
			why = se.Why
		}
		if !strings.Contains(why, "e.g.") && !strings.Contains(why, "(") {
			why += " (e.g. " + deviceCountersExample + ")"
		}
		return usagef("bad --device-counters %q: %s", v, why)
	}
	f.spec.Device, f.text = &src, v
	return nil
}

func (f *deviceCountersFlag) String() string { return f.text }
func (f *deviceCountersFlag) Type() string   { return "spec" }

// addDeviceCountersFlag adds --device-counters to an engine command.
func (lf *loadFlags) addDeviceCountersFlag(fs *pflag.FlagSet) {
	fs.Var(&deviceCountersFlag{spec: &lf.spec}, "device-counters",
		"read the device's own counters before and after the window and the run, into the record beside tlsbench's: "+
			"`SPEC` is kind=haproxy|nginx|prometheus|target|command "+
			"url=URL [frontend=NAME] [COUNTER=METRIC|COMMAND…] [counts_reads=BOOL] [timeout=D] (see docs/DEVICE-COUNTERS.md)")
}

// deviceErrors is the error of runs whose device counters could not be
// read (each run's summary says why): the counters asked for are missing.
func deviceErrors(runs []*metrics.Run) error {
	var bad []string
	for _, r := range runs {
		if d := r.Device; d != nil && d.Error != "" {
			bad = append(bad, fmt.Sprintf("%s: %s", r.Profile, d.Error))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("the device's counters could not be read (--device-counters): %s", strings.Join(bad, "; "))
}
