package tlsconn

import (
	"crypto/tls"
	"fmt"
	"math"

	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// The resumption modes (Settings.Resumption). crypto/tls resumes a TLS 1.2
// session only with a session ticket (RFC 5077), never by session ID: it
// keeps no server-side session cache and its client sends no session ID to
// resume, so a session-ID mode cannot be offered.
const (
	ResumeTickets = "tickets" // TLS 1.2 session tickets
	ResumePSK     = "psk"     // TLS 1.3 pre-shared keys from NewSessionTicket
)

// checkResumption checks a resumption mode's name.
func checkResumption(mode string) error {
	switch mode {
	case "", ResumeTickets, ResumePSK:
		return nil
	case "id", "ids", "session-id", "session-ids", "session_id", "sessionid":
		return &vocab.FieldError{Field: "resumption", Value: mode,
			Msg: "crypto/tls resumes TLS 1.2 sessions only with tickets, never by session ID: use tickets"}
	}
	return &vocab.FieldError{Field: "resumption", Value: mode, Want: "be tickets (TLS 1.2) or psk (TLS 1.3)"}
}

// ResumptionMode returns how the connections resume sessions: "" when
// Resume is 0, else Resumption or, when that is "", the mode of the
// version the profile negotiates. A mode the version cannot do is a
// *vocab.FieldError.
func (c *Config) ResumptionMode() (string, error) {
	if c.Resume == 0 {
		return "", nil
	}
	v := c.Profile.ExpectedVersion()
	want := ResumeTickets
	if v == tls.VersionTLS13 {
		want = ResumePSK
	}
	if c.Resumption != "" && c.Resumption != want {
		return "", &vocab.FieldError{Field: "resumption", Value: c.Resumption,
			Msg: fmt.Sprintf("profile %s negotiates %s, which resumes with %s", c.Profile.Name, v.Short(), want)}
	}
	return want, nil
}

// Resumes reports whether the run's connections resume sessions: its
// preflight then checks that the server takes one (engine.Preflight).
func (e *Endpoint) Resumes() bool { return e.mode != "" }

// ResumptionMode returns the run's resumption mode ("" with none) and
// ResumeRatio the share of connections meant to resume.
func (e *Endpoint) ResumptionMode() string { return e.mode }
func (e *Endpoint) ResumeRatio() float64   { return e.cfg.Resume }

// sessions is one worker's client session cache and the turn of its
// connections: of every worker's connections after its first, the share
// ratio offers a session, spread evenly (connection k ≥ 1 after the first
// offers one when ⌊k·ratio + 1 − ratio⌋ grows, and the second always does,
// however small the share: a preflight of two connections sees a resumption). A connection
// meant to resume when the worker has no session makes a full handshake.
//
// A session is kept from every handshake that gives one (crypto/tls calls
// Put; TLS 1.3 tickets come after the handshake, with the response). A
// TLS 1.3 ticket is offered once (RFC 8446, C.4: clients should not reuse
// a ticket); a TLS 1.2 ticket until the server gives another. Only the
// worker's goroutine uses it.
type sessions struct {
	ratio  float64
	single bool // TLS 1.3: a ticket is used once
	k      int  // connections made after the first; -1 before the first
	offer  bool // this connection is meant to resume
	took   bool // crypto/tls took a session to offer (Get)
	got    bool // the server has given the worker a session
	// byKey holds the newest sessions of each cache key (the server
	// name), newest last, at most maxSessions each.
	byKey map[string][]*tls.ClientSessionState
	// configs are the worker's configurations, by the run's they copy.
	configs map[*tls.Config]*tls.Config
}

const maxSessions = 4

func newSessions(ratio float64, single bool) *sessions {
	return &sessions{ratio: ratio, single: single, k: -1, byKey: map[string][]*tls.ClientSessionState{},
		configs: map[*tls.Config]*tls.Config{}}
}

// config returns the worker's copy of base, a configuration of the run
// (profiles.Profile.ClientConfig's, or a server name's), with tickets on
// and this cache, made once per base; without resumption (nil s), base.
// Its VerifyConnection lets a resumed session through: it was verified
// when it was made, and whether it was offered is Dial's to check
// (VerifyResumption).
func (s *sessions) config(base *tls.Config) *tls.Config {
	if s == nil {
		return base
	}
	if c, ok := s.configs[base]; ok {
		return c
	}
	c := base.Clone()
	s.configs[base] = c
	c.SessionTicketsDisabled = false
	c.ClientSessionCache = s
	verify := base.VerifyConnection
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if cs.DidResume {
			return nil
		}
		return verify(cs)
	}
	return c
}

// turn decides whether the next connection is meant to resume. Nil-safe.
func (s *sessions) turn() {
	if s == nil {
		return
	}
	s.k++
	s.took = false
	s.offer = s.k == 1 || s.k > 1 && s.due(s.k) > s.due(s.k-1)
}

// due is how many of the connections after the first up to the k-th are
// meant to resume: ⌊k·ratio + 1 − ratio⌋, nudged up by far less than a
// connection so that rounding (1/3 + 2/3 < 1) cannot drop one.
func (s *sessions) due(k int) float64 {
	return math.Floor(float64(k)*s.ratio + 1 - s.ratio + 1e-9)
}

// offered reports whether the last connection offered a session. Nil-safe.
func (s *sessions) offered() bool { return s != nil && s.took }

// errNoSession is a connection meant to resume that had no session to
// offer because the server never gave the worker one (tickets off): a
// profiles.ErrNotResumed.
var errNoSession error = noSessionError{}

type noSessionError struct{}

func (noSessionError) Error() string {
	return "session not resumed: the server gave no session (ticket) on the earlier connections to offer"
}
func (noSessionError) Unwrap() error { return profiles.ErrNotResumed }

// missing returns errNoSession when the last connection was meant to
// resume and the server has given no session yet. A connection meant to
// resume that has none for another reason (the worker's single-use
// tickets spent by failed connections) makes a full handshake, counted
// as one: the failures are counted already. Nil-safe.
func (s *sessions) missing() error {
	if s != nil && s.offer && !s.took && !s.got {
		return errNoSession
	}
	return nil
}

// Get gives crypto/tls the newest session of key when the connection is
// meant to resume.
func (s *sessions) Get(key string) (*tls.ClientSessionState, bool) {
	list := s.byKey[key]
	if !s.offer || len(list) == 0 {
		return nil, false
	}
	cs := list[len(list)-1]
	if s.single {
		s.byKey[key] = list[:len(list)-1]
	}
	s.took = true
	return cs, true
}

// Put keeps a session of key; nil (a session crypto/tls found unusable, or
// whose resumption failed) drops key's.
func (s *sessions) Put(key string, cs *tls.ClientSessionState) {
	if cs == nil {
		delete(s.byKey, key)
		s.took = false // not offered after all (expired), or failed anyway
		return
	}
	s.got = true
	list := append(s.byKey[key], cs)
	if len(list) > maxSessions {
		list = append(list[:0], list[len(list)-maxSessions:]...)
	}
	s.byKey[key] = list
}
