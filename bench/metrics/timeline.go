package metrics

// Timeline is a run's timeline (RFC 9411 §4.3.4), in seconds: the ramp up
// from nothing to the target, the warm-up at the target, the sustain phase
// (the steady window, whose statistics are the run's KPIs) and the ramp
// down. Target says what the ramps move: "concurrency" (closed loop: workers
// started and stopped in turn) or "rate" (open loop: the pacer's rate).
type Timeline struct {
	Target      string  `json:"target"`
	TargetValue float64 `json:"target_value"`
	RampUpS     float64 `json:"ramp_up_s"`
	WarmupS     float64 `json:"warmup_s"`
	SustainS    float64 `json:"sustain_s"`
	RampDownS   float64 `json:"ramp_down_s"`
}

// ObjectStats is one object of a run's mix over the steady window: its
// size and weight as asked, the transactions that drew it, and their
// latency (RFC 9411 §6.3's TTFB and TTLB, µs).
type ObjectStats struct {
	Size         int64       `json:"size"`
	Path         string      `json:"path"`
	Weight       float64     `json:"weight"`
	Transactions int64       `json:"transactions"`
	Errors       int64       `json:"errors"`
	Payload      int64       `json:"payload_bytes"`
	TTFB         Percentiles `json:"ttfb_us"`
	TTLB         Percentiles `json:"ttlb_us"`
	ObjectHists
}
