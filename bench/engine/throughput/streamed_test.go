package throughput_test

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestStreamed: the body check HTTP/2 and HTTP/3 share, a body fed in
// pieces: the pattern from each piece's offset, the SHA-256 of the whole;
// a body that breaks either is body_mismatch, a sample already failed
// keeps its class; a check that is none is refused.
func TestStreamed(t *testing.T) {
	body := make([]byte, 1000)
	for i := range body {
		body[i] = target.Pattern[i%target.PatternPeriod]
	}
	bad := append([]byte(nil), body...)
	bad[700]++
	sum := sha256.Sum256(body)
	for _, tc := range []struct {
		verify string
		body   []byte
		class  vocab.Class
	}{
		{"pattern", body, ""},
		{"pattern", bad, vocab.ClassBodyMismatch},
		{"sha256:" + hex.EncodeToString(sum[:]), body, ""},
		{"sha256:" + hex.EncodeToString(sum[:]), bad, vocab.ClassBodyMismatch},
		{"", bad, ""},
	} {
		st, err := throughput.NewStreamed(3, tc.verify, target.Pattern)
		if err != nil || st.Streams != 3 || (st.Pattern != nil || st.SHA256 != nil) != (tc.verify != "") {
			t.Fatalf("%q: %v, %d streams, checks %q", tc.verify, err, st.Streams, tc.verify)
		}
		var h hash.Hash
		for range 2 { // the sum is reused, reset
			mismatch := false
			h = st.Sum(h)
			for off := 0; off < len(tc.body); off += 300 {
				mismatch = st.Feed(h, tc.body[off:min(off+300, len(tc.body))], int64(off), mismatch)
			}
			s := metrics.Sample{}
			if st.Ended(&s, mismatch, h, nil); s.Class != tc.class {
				t.Errorf("%q: class %q, want %q", tc.verify, s.Class, tc.class)
			}
			s = metrics.Sample{Class: vocab.ClassStatus}
			if st.Ended(&s, true, h, nil); s.Class != vocab.ClassStatus {
				t.Errorf("%q: a failed sample became %q", tc.verify, s.Class)
			}
		}
	}
	if err := throughput.CheckVerify("md5:00"); err == nil || !strings.Contains(err.Error(), "verify_body") {
		t.Errorf("CheckVerify(md5:00): %v", err)
	}
	if _, err := throughput.NewStreamed(1, "sha256:00", nil); err == nil {
		t.Error("NewStreamed took sha256:00")
	}
}
