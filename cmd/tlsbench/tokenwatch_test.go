package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
)

// tokenWatch polls the machine's processes while a distributed run goes
// on: the agents it sees (a process whose environment holds
// TLSBENCH_TOKEN), their tokens, and every command line holding one.
type tokenWatch struct {
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	agents map[int]string // pid → token
	leaks  []string       // command lines with a token
}

func watchTokens(t *testing.T) *tokenWatch {
	t.Helper()
	w := &tokenWatch{stop: make(chan struct{}), done: make(chan struct{}), agents: map[int]string{}}
	self := os.Getpid()
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			procs, _ := filepath.Glob("/proc/[0-9]*")
			cmdlines := map[int][]byte{}
			for _, p := range procs {
				pid, err := strconv.Atoi(filepath.Base(p))
				if err != nil || pid == self {
					continue
				}
				if c, err := os.ReadFile(p + "/cmdline"); err == nil {
					cmdlines[pid] = c
				}
				env, err := os.ReadFile(p + "/environ")
				if err != nil {
					continue
				}
				for _, kv := range bytes.Split(env, []byte{0}) {
					if tok, ok := bytes.CutPrefix(kv, []byte(agent.EnvToken+"=")); ok && len(tok) > 0 {
						w.mu.Lock()
						w.agents[pid] = string(tok)
						w.mu.Unlock()
					}
				}
			}
			w.mu.Lock()
			for pid, c := range cmdlines {
				for _, tok := range w.agents {
					if bytes.Contains(c, []byte(tok)) {
						w.leaks = append(w.leaks, strconv.Itoa(pid)+": "+strings.ReplaceAll(string(c), "\x00", " "))
					}
				}
			}
			w.mu.Unlock()
		}
	}()
	t.Cleanup(w.end)
	return w
}

func (w *tokenWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// check ends the watch and checks that at least n agent processes were
// seen with a token of at least 128 bits, and that no command line held
// one; it returns the tokens.
func (w *tokenWatch) check(t *testing.T, n int) map[string]bool {
	t.Helper()
	w.end()
	tokens := map[string]bool{}
	for _, tok := range w.agents {
		tokens[tok] = true
		if err := agent.CheckToken(tok); err != nil {
			t.Errorf("an agent's token %q: %v", tok, err)
		}
	}
	if len(w.agents) < n {
		t.Errorf("saw %d agent processes with a token in their environment, want %d", len(w.agents), n)
	}
	if len(tokens) != 1 {
		t.Errorf("the run's agents had %d different tokens, want 1", len(tokens))
	}
	for _, l := range w.leaks {
		t.Errorf("a token in a command line: %s", l)
	}
	t.Logf("token watch: %d agent processes, token in their environment, in no command line", len(w.agents))
	return tokens
}

// testRunToken is the token of the runs whose agents are started by hand.
const testRunToken = "Zq8w1xN4cV7bT2yU5iO0pL3kJ6hG9fD1sA4eR7tY0uI"

// tokenFile writes testRunToken into a file of mode 0600.
func tokenFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(testRunToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
