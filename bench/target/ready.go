package target

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Ready is the reference target's ready line, one JSON object on its
// stdout once every listener accepts: what `tlsbench serve` prints after
// its table, what harnesses that serve in a child of their own print with
// WriteReady, and what the programs that start a target read with
// ParseReady.
type Ready struct {
	Ready     bool            `json:"ready"`
	Listeners []readyListener `json:"listeners"`
	CA        string          `json:"ca,omitempty"` // CA certificate file (PEM)
	Admin     string          `json:"admin,omitempty"`
}

// readyListener is one listener of a Ready line.
type readyListener struct {
	Profile string `json:"profile"`
	Addr    string `json:"addr"`
	QUIC    string `json:"quic,omitempty"` // UDP host:port of its HTTP/3 side
}

// Addr returns the address of the profile's listener ("" if none).
func (r *Ready) Addr(profile string) string {
	for _, l := range r.Listeners {
		if l.Profile == profile {
			return l.Addr
		}
	}
	return ""
}

// WriteReady prints t's ready line to w, with the CA file caFile ("" for
// none).
func WriteReady(w io.Writer, t *Target, caFile string) error {
	r := Ready{Ready: true, CA: caFile, Admin: t.AdminAddr}
	for _, l := range t.Listeners {
		r.Listeners = append(r.Listeners, readyListener{Profile: l.Name(), Addr: l.Addr, QUIC: l.QUICAddr})
	}
	return json.NewEncoder(w).Encode(r) // json.Marshal's bytes and a newline
}

// ParseReady reads one line of a target's output: ok is false for any
// other line; a ready line that does not parse or is not ready is an error.
func ParseReady(line string) (r Ready, ok bool, err error) {
	if !strings.HasPrefix(line, `{"ready":`) {
		return Ready{}, false, nil
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return Ready{}, true, fmt.Errorf("bad ready line: %w", err)
	}
	if !r.Ready {
		return Ready{}, true, fmt.Errorf("ready line without ready: true")
	}
	return r, true, nil
}
