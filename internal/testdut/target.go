package testdut

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// Ready is the reference target's ready line, one JSON object on its
// stdout once every listener accepts: what `tlsbench serve` prints after
// its table, and what harnesses that serve in a child of their own print
// with WriteReady.
type Ready struct {
	Ready     bool            `json:"ready"`
	Listeners []ReadyListener `json:"listeners"`
	CA        string          `json:"ca,omitempty"` // CA certificate file (PEM)
	Admin     string          `json:"admin,omitempty"`
}

// ReadyListener is one listener of a Ready line.
type ReadyListener struct {
	Profile string `json:"profile"`
	Addr    string `json:"addr"`
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

// WriteReady prints tg's ready line to w, with the CA file caFile.
func WriteReady(w io.Writer, tg *target.Target, caFile string) error {
	r := Ready{Ready: true, CA: caFile, Admin: tg.AdminAddr}
	for _, l := range tg.Listeners {
		r.Listeners = append(r.Listeners, ReadyListener{Profile: l.Name(), Addr: l.Addr})
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", line)
	return err
}

// Served is a reference target running in a child process.
type Served struct {
	*Process
	Ready
}

// StartServed runs cmd, a `tlsbench serve` (or a child that prints the same
// ready line), and reads its stdout until the ready line: it returns when
// the target is ready, has exited, ctx ends or StartTimeout passes. The
// rest of its stdout is discarded; cmd.Stderr, if nil, is kept for error
// messages.
func StartServed(ctx context.Context, name string, cmd *exec.Cmd) (*Served, error) {
	s := &Served{Process: &Process{Name: name, Cmd: cmd}}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		found := false
		for sc.Scan() {
			if line := sc.Text(); !found && strings.HasPrefix(line, `{"ready":`) {
				found = true
				ready <- json.Unmarshal([]byte(line), &s.Ready)
			}
		}
		if !found {
			ready <- errNotReady
		}
	}()
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("not ready after %s", StartTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil && !s.Ready.Ready {
		err = fmt.Errorf("ready line without ready: true")
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w: %s", name, err, s.Tail())
	}
	return s, nil
}

// StartTarget starts the reference target in this process with a listener
// per profile and closes it when the test ends.
func StartTarget(t testing.TB, ps ...*profiles.Profile) *target.Target {
	t.Helper()
	tg, err := target.Start(target.Config{Profiles: ps})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
