package method

import (
	"errors"
	"fmt"

	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// judgeDeviceCounts applies accept.max_device_disagreement: the device's
// counters could not be read, or a count over the whole run differs from
// tlsbench's by more than the share allowed.
func judgeDeviceCounts(a plan.Accept, r *metrics.Run) []string {
	if a.MaxDeviceDisagreement == nil {
		return nil
	}
	limit := *a.MaxDeviceDisagreement
	bad, missing := r.DeviceDisagreement(float64(limit))
	if missing != "" {
		return []string{fmt.Sprintf("device counters: %s (max_device_disagreement %s)", missing, limit)}
	}
	var reasons []string
	for _, row := range bad {
		reasons = append(reasons, fmt.Sprintf("the device disagrees: %s, above max_device_disagreement %s",
			row.Explain(), limit))
	}
	return reasons
}

// countersUnreadable says whether a run could not be made because the
// DUT's counters could not be read: a DUT the campaign cannot measure,
// whatever the profile, not a refused profile.
func countersUnreadable(err error) bool {
	return errors.Is(err, runner.ErrCountersUnread)
}
