package metrics

import (
	"testing"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestDeviceRowsPreflightRetries: a failed preflight attempt may or may
// not have reached the device, as any failed transaction: a connect
// timeout the device never accepted, a read timeout whose request it
// counted. The run's rows agree within the failed attempts, and only
// within them.
func TestDeviceRowsPreflightRetries(t *testing.T) {
	r := &Run{
		Handshakes: 500, Whole: Whole{Transactions: 500, ConnectionsOpened: 500},
		Preflight: &Preflight{OK: true, Transactions: 3, Handshakes: 2, FailedAttempts: []PreflightAttempt{
			{Class: vocab.ClassConnectTimeout}, {Class: vocab.ClassReadTimeout}}},
		Device: &Device{Source: "kind=nginx",
			Run: &DeviceCounts{Sessions: ptr(502), Handshakes: ptr(502), Requests: ptr(502)}},
	}
	for _, row := range r.DeviceRows() {
		if row.Slack != 2 || !row.Agrees {
			t.Errorf("%s %s: %s; want agreeing within the 2 failed attempts", row.Scope, row.Counter, row.Explain())
		}
	}
	r.Device.Run.Requests = ptr(504)
	if bad, _ := r.DeviceDisagreement(0); len(bad) != 1 || bad[0].Counter != "requests" {
		t.Errorf("3 requests beyond the preflight's success: %+v", bad)
	}
}
