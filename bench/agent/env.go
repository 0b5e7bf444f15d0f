package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/tlsbench/tlsbench/bench/runner"
)

// The environment an agent reads its run from: the run spec as JSON (the
// same for every agent), the agent's index and its name.
const (
	EnvRun   = "TLSBENCH_RUN"
	EnvShard = "TLSBENCH_SHARD"
	EnvName  = "TLSBENCH_AGENT"
)

// envError is an agent environment that holds no run it can make.
type envError struct {
	Var string // the variable
	Err error
}

func (e *envError) Error() string { return fmt.Sprintf("agent environment %s: %v", e.Var, e.Err) }

func (e *envError) Unwrap() error { return e.Err }

// Env returns the variables agent i of s, named name, is started with:
// the run, and the credentials (Credentials.Env).
func (s RunSpec) Env(i int, name string) ([]string, error) {
	b, err := json.Marshal(s.Spec)
	if err != nil {
		return nil, err
	}
	env := []string{EnvRun + "=" + string(b), EnvShard + "=" + strconv.Itoa(i), EnvName + "=" + name}
	return append(env, s.Credentials.Env()...), nil
}

// FromEnv returns the run an agent makes, read with getenv (os.Getenv):
// its share of the run spec (runner.Spec.ForShard), checked.
func FromEnv(getenv func(string) string) (runner.Spec, error) {
	var spec runner.Spec
	raw := getenv(EnvRun)
	if raw == "" {
		return spec, &envError{EnvRun, errors.New("not set")}
	}
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return spec, &envError{EnvRun, err}
	}
	if spec.Agent == nil {
		return spec, &envError{EnvRun, errors.New("the spec has no agent share")}
	}
	a := *spec.Agent
	if v := getenv(EnvShard); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil {
			return spec, &envError{EnvShard, err}
		}
		a.Shard = i
	}
	if v := getenv(EnvName); v != "" {
		a.Name = v
	}
	spec, err := spec.ForShard(a)
	if err != nil {
		return spec, err
	}
	return spec, spec.Validate()
}
