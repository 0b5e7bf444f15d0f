package schemas_test

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// TestVersions: the versions the code writes are those the schemas name.
func TestVersions(t *testing.T) {
	for code, v := range map[string]string{
		metrics.Schema: schemas.Run, method.LedgerSchema: schemas.Ledger, method.SummarySchema: schemas.Summary,
		impact.Schema: schemas.Impact, impact.RunsSchema: schemas.ImpactRuns,
		reports.CompareSchema: schemas.Compare, reports.ReportSchema: schemas.Report,
	} {
		if code != v {
			t.Errorf("the code writes %q, the schema is %q", code, v)
		}
	}
}

// TestSchemasCompile: every schema file is listed, compiles (against the
// draft 2020-12 meta-schema), names its version in "schema" and refuses
// an empty object and an unknown member.
func TestSchemasCompile(t *testing.T) {
	files, err := fs.Glob(schemas.FS, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(schemas.Files) {
		t.Errorf("%d schema files, %d listed", len(files), len(schemas.Files))
	}
	for v, file := range schemas.Files {
		data, err := schemas.Get(v)
		if err != nil {
			t.Errorf("%s: %v", v, err)
			continue
		}
		var doc struct {
			Schema     string `json:"$schema"`
			ID         string `json:"$id"`
			Properties map[string]struct {
				Const string `json:"const"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if doc.Schema != "https://json-schema.org/draft/2020-12/schema" || !strings.HasSuffix(doc.ID, "/"+file) {
			t.Errorf("%s: $schema %q, $id %q", file, doc.Schema, doc.ID)
		}
		if got := doc.Properties["schema"].Const; got != v {
			t.Errorf("%s: schema const %q, want %q", file, got, v)
		}
		if err := schematest.Check(v, []byte(`{}`)); err == nil {
			t.Errorf("%s accepts {}", file)
		}
		if err := schematest.Check(v, []byte(`{"schema":"`+v+`","bogus":1}`)); err == nil || !strings.Contains(err.Error(), "bogus") {
			t.Errorf("%s: an unknown member: %v", file, err)
		}
	}
	if _, err := schemas.Get("nope"); err == nil {
		t.Error(`Get("nope") succeeded`)
	}
}
