package target

import (
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"time"
)

// Resumption says which listeners resume sessions. crypto/tls's server
// resumes only with tickets: TLS 1.2 session tickets (RFC 5077) and TLS
// 1.3 pre-shared keys from NewSessionTicket; it keeps no session-ID cache.
type Resumption struct {
	Tickets bool // the TLS 1.2 listeners issue and take session tickets
	PSK     bool // the TLS 1.3 listeners issue tickets and take PSKs
	// KeyRotation, if positive, makes the listeners take a new ticket key
	// every KeyRotation, keeping the previous one to decrypt (a ticket
	// then lives between one and two periods); 0 keeps crypto/tls's own
	// (a new key a day, each valid a week).
	KeyRotation time.Duration
}

// ParseResumption reads the resumption modes a target serves: "tickets",
// "psk", both, or none. A session-ID mode is refused: crypto/tls has none.
func ParseResumption(list []string) (Resumption, error) {
	var r Resumption
	for _, m := range list {
		switch m {
		case "tickets":
			r.Tickets = true
		case "psk":
			r.PSK = true
		case "id", "ids", "session-id", "session-ids":
			return r, fmt.Errorf("resumption %s: crypto/tls resumes sessions only with tickets (TLS 1.2) or "+
				"PSK (TLS 1.3), never by session ID", m)
		default:
			return r, fmt.Errorf("resumption %q: want tickets (TLS 1.2), psk (TLS 1.3) or both", m)
		}
	}
	return r, nil
}

// on reports whether a listener of TLS version v resumes.
func (r Resumption) on(v uint16) bool {
	if v == tls.VersionTLS13 {
		return r.PSK
	}
	return r.Tickets
}

// resume turns tickets on in cfg, the listener's of a profile negotiating
// version v, when that version resumes, and starts its key rotation; the
// rotation stops when the target closes.
func (t *Target) resume(cfg *tls.Config, v uint16) error {
	r := t.cfg.Resumption
	if !r.on(v) {
		return nil
	}
	cfg.SessionTicketsDisabled = false
	if r.KeyRotation <= 0 {
		return nil
	}
	var keys [2][32]byte
	if _, err := rand.Read(keys[0][:]); err != nil {
		return err
	}
	cfg.SetSessionTicketKeys(keys[:1])
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(r.KeyRotation)
		defer tick.Stop()
		for {
			select {
			case <-t.ctx.Done():
				return
			case <-tick.C:
			}
			keys[1] = keys[0]
			_, _ = rand.Read(keys[0][:]) // crypto/rand.Read does not fail
			cfg.SetSessionTicketKeys(keys[:])
		}
	}()
	return nil
}
