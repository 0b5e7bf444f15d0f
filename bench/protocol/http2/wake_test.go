package http2

import (
	"testing"
	"time"
)

// TestLevelWhileWaiting: a stream waiting for its first frame promises
// nothing, and does not hold the level at a byte while the others' bodies
// are still to come (with 4 streams nginx queues a new stream's HEADERS
// behind them, and the client was woken at each record).
func TestLevelWhileWaiting(t *testing.T) {
	waiting := &stream{}
	for _, tc := range []struct {
		name string
		ss   []*stream
		want int
	}{
		{"one stream, waiting", []*stream{waiting}, 0},
		{"one stream, 1 MiB to come", []*stream{{status: 200, clen: 1 << 20}}, 256 << 10},
		{"1 MiB to come, one waiting", []*stream{{status: 200, clen: 1 << 20}, waiting}, 256 << 10},
		{"150 KiB to come, one waiting", []*stream{{status: 200, clen: 1 << 20, body: 874 << 10}, waiting}, 64 << 10},
		{"its end, one waiting", []*stream{{status: 200, clen: 1 << 20, body: 1000 << 10}, waiting}, 0},
		{"no content-length, one waiting", []*stream{{status: 200, clen: -1}, waiting}, 0},
	} {
		if got := (&conn{ss: tc.ss}).level(); got != tc.want {
			t.Errorf("%s: level %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestStampRaised: a first frame that crypto/tls read along with earlier
// ones, while the level was raised, is stamped with that read's arrival,
// not when the client got to it; never before its request.
func TestStampRaised(t *testing.T) {
	sent := time.Now()
	c := &conn{arrived: sent.Add(time.Millisecond)}
	st := &stream{sent: sent}
	c.stamp(st)
	if !st.first.Equal(c.arrived) {
		t.Errorf("stamped %v after the request, want the read's arrival %v", st.first.Sub(sent), c.arrived.Sub(sent))
	}
	c.arrived = sent.Add(-time.Millisecond)
	st = &stream{sent: sent}
	c.stamp(st)
	if !st.first.Equal(sent) {
		t.Errorf("stamped %v after the request, want 0", st.first.Sub(sent))
	}
}
