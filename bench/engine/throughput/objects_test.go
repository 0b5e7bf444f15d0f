package throughput_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestObjectMixPipelined: a 1k:3,16k:1 mix, four requests in flight per
// connection and ten per connection: each response is checked against the
// object its request drew (in order), the draws are 3:1 within 4 binomial
// standard deviations, and RFC 9411's TTFB and TTLB are ordered. An
// object served with another size is a body_size error.
func TestObjectMixPipelined(t *testing.T) {
	p := refProfile(t, "ecdhe-rsa-aes128-gcm-sha256-p256")
	objs, err := httpreq.ParseObjects("1k:3,16k:1")
	if err != nil {
		t.Fatal(err)
	}
	_, cfg := refTarget(t, p)
	cfg.Objects, cfg.Pipeline, cfg.RequestsPerConn = objs, 4, 10
	var mu sync.Mutex
	var byObj [2]int64
	bad := 0
	cfg.Trace = func(_ int, s *metrics.Sample, _ tlsconn.FirstByte) {
		mu.Lock()
		defer mu.Unlock()
		if s.Class != "" {
			return
		}
		i := int(s.Object) - 1
		ok := i >= 0 && i < 2 && s.Payload == objs[i].Size && s.RFCTTFB > 0 && s.RFCTTLB >= s.RFCTTFB &&
			s.RFCTTFB >= s.Dur[vocab.PhaseTTFB] &&
			(!s.Opened || s.RFCTTFB >= s.Dur[vocab.PhaseConnect]+s.Dur[vocab.PhaseHandshake])
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("object %d, body %d, RFC TTFB %v, TTLB %v, ttfb %v", s.Object, s.Payload, s.RFCTTFB,
					s.RFCTTLB, s.Dur[vocab.PhaseTTFB])
			}
			return
		}
		byObj[i]++
	}
	_, res := refRun(t, cfg, 2, time.Second)
	s := res.Snapshot
	if s.OK == 0 || s.AllErrors != 0 {
		t.Fatalf("ok %d, errors %v %v", s.OK, s.Errors, s.Examples)
	}
	n := float64(byObj[0] + byObj[1])
	if sd := math.Sqrt(n * 0.75 * 0.25); n < 100 || math.Abs(float64(byObj[0])-0.75*n) > 4*sd {
		t.Errorf("1k drawn %d times of %v, want %.0f ± %.0f", byObj[0], n, 0.75*n, 4*sd)
	}
	if c := s.ObjectCounts(); len(c) != 2 || c[0]+c[1] != s.OK {
		t.Errorf("window's object counts %v, %d transactions", c, s.OK)
	}
	t.Logf("1k %d, 16k %d on %d connections", byObj[0], byObj[1], s.AllOpened)

	cfg.Trace = nil
	cfg.Objects = []httpreq.Object{{Size: 1024, Weight: 1}, {Size: 1000, Weight: 1, Path: "/bytes/999"}}
	cfg.Pipeline, cfg.RequestsPerConn = 1, 0
	_, res = refRun(t, cfg, 2, 500*time.Millisecond)
	if e := res.Snapshot.Errors; e[vocab.ClassBodySize] == 0 || len(e) != 1 {
		t.Errorf("errors %v, want body_size only", e)
	}
}
