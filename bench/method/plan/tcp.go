package plan

// The default limits of the connections' TCP retransmissions and resets
// (Accept.MaxRetransmitRate, MaxResetRate). A clean run on a lab's network
// retransmits nothing (docs/ENGINES.md, "Retransmissions and resets"); a
// path losing 2% of its packets retransmits about 0.1 segment per CPS
// transaction: 1% accepts a busy lab's rare loss and rejects a lossy path
// by a factor of ten. A reset the client did not cause is the device's
// abort: 1% too.
const (
	DefaultMaxRetransmitRate Percent = 0.01
	DefaultMaxResetRate      Percent = 0.01
	// maxTCPRate bounds max_retransmit_rate: segments per transaction,
	// written as a percentage, may exceed 100% but not this.
	maxTCPRate Percent = 100
)

// RetransmitLimit is the retransmitted segments per transaction above which
// a run is rejected: MaxRetransmitRate, or its default.
func (a Accept) RetransmitLimit() Percent {
	if a.MaxRetransmitRate != nil {
		return *a.MaxRetransmitRate
	}
	return DefaultMaxRetransmitRate
}

// ResetLimit is the share of transactions whose connection a RST ended above
// which a run is rejected: MaxResetRate, or its default.
func (a Accept) ResetLimit() Percent {
	if a.MaxResetRate != nil {
		return *a.MaxResetRate
	}
	return DefaultMaxResetRate
}
