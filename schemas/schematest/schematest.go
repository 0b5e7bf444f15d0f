// Package schematest validates JSON against the schemas of package schemas
// with a JSON Schema validator (github.com/santhosh-tekuri/jsonschema),
// formats asserted. It is for tests only: the tlsbench binary does not
// link it.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tlsbench/tlsbench/schemas"
)

const base = "https://github.com/tlsbench/tlsbench/schemas/"

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	errLoad  error
)

func load() {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, file := range schemas.Files {
		data, err := schemas.FS.ReadFile(file)
		if err != nil {
			errLoad = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			errLoad = fmt.Errorf("%s: %w", file, err)
			return
		}
		if err := c.AddResource(base+file, doc); err != nil {
			errLoad = fmt.Errorf("%s: %w", file, err)
			return
		}
	}
	compiled = map[string]*jsonschema.Schema{}
	for version, file := range schemas.Files {
		s, err := c.Compile(base + file)
		if err != nil {
			errLoad = fmt.Errorf("%s: %w", file, err)
			return
		}
		compiled[version] = s
	}
}

// Check validates data (one JSON document) against the schema of version
// (schemas.Run …). The error names the failing location (JSON pointer) and
// the keyword.
func Check(version string, data []byte) error {
	once.Do(load)
	if errLoad != nil {
		return errLoad
	}
	s, ok := compiled[version]
	if !ok {
		return fmt.Errorf("no schema %q", version)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(doc)
}

// Detect returns the schema version data names in its "schema" member.
func Detect(data []byte) string {
	var v struct {
		Schema string `json:"schema"`
	}
	_ = json.Unmarshal(data, &v)
	return v.Schema
}

// Valid fails t unless data is valid against the schema of version;
// what names the output in the message.
func Valid(t testing.TB, version, what string, data []byte) {
	t.Helper()
	if err := Check(version, data); err != nil {
		t.Errorf("%s is not valid against %s: %v", what, version, err)
	}
}

// ValidLines checks every line of a JSON Lines file (a ledger) against the
// schema of version.
func ValidLines(t testing.TB, version, what string, data []byte) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		Valid(t, version, fmt.Sprintf("%s line %d", what, i+1), []byte(line))
	}
}
