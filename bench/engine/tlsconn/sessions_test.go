package tlsconn

import (
	"crypto/tls"
	"errors"
	"math"
	"testing"

	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// The turn offers a session on exactly the share of a worker's connections
// after its first, always on the second, spread evenly (never two gaps
// that differ by more than one connection).
func TestSessionsTurn(t *testing.T) {
	for _, ratio := range []float64{1e-12, 1e-9, 0.1, 0.25, 1.0 / 3, 0.5, 0.9, 1} {
		s := newSessions(ratio, false)
		const n = 1000
		var offers []int
		for i := 0; i < n; i++ {
			s.turn()
			if s.offer {
				offers = append(offers, i)
			}
		}
		want := int(math.Floor(float64(n-1)*ratio + 1 - ratio))
		if len(offers) != want || offers[0] != 1 {
			t.Errorf("ratio %g: %d offers of %d connections, first at %d; want %d, first at 1", ratio, len(offers), n,
				offers[0], want)
		}
		lo, hi := n, 0
		for i := 1; i < len(offers); i++ {
			gap := offers[i] - offers[i-1]
			lo, hi = min(lo, gap), max(hi, gap)
		}
		if hi-lo > 1 {
			t.Errorf("ratio %g: gaps between offers from %d to %d connections", ratio, lo, hi)
		}
	}
	var none *sessions // SR=0: no sessions at all
	none.turn()
	if none.offered() || none.missing() != nil {
		t.Error("a nil sessions offers")
	}
}

func TestSessionsCache(t *testing.T) {
	a, b := &tls.ClientSessionState{}, &tls.ClientSessionState{}
	for _, single := range []bool{false, true} {
		s := newSessions(1, single)
		s.turn() // the first connection: full
		if _, ok := s.Get("h"); ok || s.offered() {
			t.Fatal("the first connection offers a session")
		}
		s.turn()
		if err := s.missing(); !errors.Is(err, profiles.ErrNotResumed) || Class(err) != vocab.ClassNotResumed {
			t.Errorf("meant to resume with no session ever given: %v (%s), want not_resumed", err, Class(err))
		}
		s.Put("h", a)
		s.Put("h", b)
		s.turn()
		if got, ok := s.Get("h"); !ok || got != b || !s.offered() {
			t.Fatalf("single %v: Get gave %p, want the newest %p", single, got, b)
		}
		s.turn()
		got, _ := s.Get("h")
		if want := map[bool]*tls.ClientSessionState{false: b, true: a}[single]; got != want {
			t.Errorf("single %v: the second Get gave %p, want %p (TLS 1.3 tickets are used once)", single, got, want)
		}
		if _, ok := s.Get("other"); ok {
			t.Error("a session of another server name is offered")
		}
		s.Put("h", nil)
		s.turn()
		if _, ok := s.Get("h"); ok || s.missing() != nil {
			t.Errorf("single %v: a dropped key still offers, or counts as never given", single)
		}
	}
}

func TestResumptionMode(t *testing.T) {
	set := profiles.Builtin()
	p12, _ := set.Get("ecdhe-ecdsa-aes128-sha256-p256")
	p13, _ := set.Get("tls13-aes128-gcm-x25519")
	for _, tc := range []struct {
		p          *profiles.Profile
		resume     float64
		mode, want string
		bad        bool
	}{
		{p12, 0, "", "", false},
		{p12, 0.5, "", ResumeTickets, false},
		{p13, 0.5, "", ResumePSK, false},
		{p12, 1, ResumePSK, "", true},
		{p13, 1, ResumeTickets, "", true},
	} {
		c := Config{Settings: Settings{Resume: tc.resume, Resumption: tc.mode}, Profile: tc.p}
		got, err := c.ResumptionMode()
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("%s resume %g mode %q: %q, %v", tc.p.Name, tc.resume, tc.mode, got, err)
		}
	}
	for _, bad := range []Settings{{Resume: -0.1}, {Resume: 1.01}, {Resume: math.NaN()}, {Resumption: "session-id"},
		{Resumption: "tls12"}} {
		bad.ConnectTimeout, bad.HandshakeTimeout = 1, 1
		var fe *vocab.FieldError
		if err := bad.Validate(); !errors.As(err, &fe) {
			t.Errorf("%+v: %v, want a field error", bad, err)
		}
	}
}
