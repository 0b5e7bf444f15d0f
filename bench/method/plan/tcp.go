package plan

// The default limits of the connections' TCP retransmissions and resets
// (Accept.MaxRetransmitRate, MaxResetRate). A clean run retransmits
// nothing: over loopback and a lab's switched network no segment is lost,
// and none was in the clean runs measured (see docs/ENGINES.md, "Retransmissions and
// resets"). A path that loses 2% of its packets makes the client
// retransmit about 0.1 segment per CPS transaction (each connection sends
// about five segments that a loss in either direction makes it resend),
// and a full accept queue makes it resend SYNs: 1% (one retransmitted
// segment per hundred transactions) accepts the rare loss of a busy lab
// and rejects a lossy path by a factor of ten. A reset received by a
// connection that the client had not ended is the device's abort: 1% is
// the same tolerance.
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
