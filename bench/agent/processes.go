package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Processes launches the agents as local processes: the whole distributed
// path on one machine. Each agent is Command with the run and the
// credentials in its environment (RunSpec.Env), never in its command line.
type Processes struct {
	// Command is the agent's command line (tlsbench agent).
	Command []string
	// Env is the agents' environment (nil: this process's).
	Env []string
	// Wrap, if set, rewrites agent i's command line before it starts
	// (e.g. to run it in a network namespace with `ip netns exec`).
	Wrap func(i int, argv []string) []string
}

// Launch implements Launcher.
func (p *Processes) Launch(ctx context.Context, spec RunSpec) (*launched, error) {
	if len(p.Command) == 0 {
		return nil, fmt.Errorf("no agent command")
	}
	if err := CheckToken(spec.Credentials.Token); err != nil {
		return nil, err
	}
	failed := make(chan error, spec.Agents())
	var cmds []*exec.Cmd
	var wg sync.WaitGroup
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			for _, c := range cmds {
				_ = c.Process.Kill()
			}
			<-done
		}
	}
	env := p.Env
	if env == nil {
		env = os.Environ()
	}
	// The run's credentials only: none inherited from this process.
	env = slices.DeleteFunc(slices.Clone(env), func(v string) bool {
		return strings.HasPrefix(v, EnvToken+"=") || strings.HasPrefix(v, EnvCollectorCA+"=")
	})
	for i := range spec.Agents() {
		name := fmt.Sprintf("%s-agent-%d", spec.ID, i)
		vars, err := spec.Env(i, name)
		if err != nil {
			stop()
			return nil, err
		}
		argv := append([]string(nil), p.Command...)
		if p.Wrap != nil {
			argv = p.Wrap(i, argv)
		}
		c := exec.Command(argv[0], argv[1:]...)
		c.Env = append(append([]string(nil), env...), vars...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // no terminal signal
		var out tailBuffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("agent %d: %w", i, err)
		}
		cmds = append(cmds, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Wait(); err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("agent %s failed (%v): %s", name, err, out.String())
			}
		}()
	}
	return &launched{Failed: failed, Stop: stop}, nil
}

// tailBuffer keeps the last 2 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.buf.Len() > 4096 {
		b := t.buf.Bytes()[t.buf.Len()-2048:]
		t.buf = *bytes.NewBuffer(append([]byte(nil), b...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(strings.Fields(t.buf.String()), " ")
}
