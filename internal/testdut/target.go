package testdut

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// served is a reference target running in a child process.
type served struct {
	*Process
	target.Ready
}

// StartServed runs cmd, a `tlsbench serve` (or a child that prints the same
// ready line), and reads its stdout until the ready line: it returns when
// the target is ready, has exited, ctx ends or StartTimeout passes. The
// rest of its stdout is discarded; cmd.Stderr, if nil, is kept for error
// messages.
func StartServed(ctx context.Context, name string, cmd *exec.Cmd) (*served, error) {
	s := &served{Process: &Process{Name: name, Cmd: cmd}}
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
			if r, ok, err := target.ParseReady(sc.Text()); ok && !found {
				found = true
				s.Ready = r
				ready <- err
			}
		}
		if !found {
			ready <- errNotReady
		}
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("not ready after %s", startTimeout)
	case <-ctx.Done():
		err = ctx.Err()
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
	return StartTargetWith(t, target.Config{Profiles: ps})
}

// StartTargetWith is StartTarget with cfg, its profiles the built-in ones
// named.
func StartTargetWith(t testing.TB, cfg target.Config, names ...string) *target.Target {
	t.Helper()
	set := profiles.Builtin()
	for _, n := range names {
		p, err := set.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Profiles = append(cfg.Profiles, p)
	}
	tg, err := target.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
