package method

import (
	"cmp"
	"encoding/json"
	"path/filepath"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Summary is a campaign's result: the published table as data, and the
// evidence behind every cell.
type Summary struct {
	// Schema is SummarySchema; WriteSummary sets it.
	Schema      string       `json:"schema"`
	Name        string       `json:"name"`
	Rows        []Row        `json:"rows"`
	Cells       []*Cell      `json:"cells"`
	Preliminary []Prelim     `json:"preliminary"`
	Differences []Difference `json:"differences,omitempty"`
}

// Row is one line of the published table: a DUT and a profile.
type Row struct {
	DUT     string `json:"dut"`
	Profile string `json:"profile"`
	Cipher  string `json:"cipher"` // OpenSSL name
	Group   string `json:"group"`  // ECDHE group, or the RSA key for RSA key exchange
	// Protocol carried its runs: http/1.1, http/2 ("" in summaries made
	// before it: HTTP/1.1).
	Protocol string `json:"protocol,omitempty"`
	// CPS and Gbps are the best accepted values; nil when the plan has no
	// such test for the profile or no run was accepted.
	CPS        *float64 `json:"cps"`
	Gbps       *float64 `json:"gbps"`
	CPSRuns    RunCount `json:"cps_runs"`
	GbpsRuns   RunCount `json:"gbps_runs"`
	Consistent bool     `json:"consistent"` // every cell's Consistent: false when not supported
	// Test, in a row of a named test (an RFC 9411 suite's), is its name;
	// Value its published value in Unit (CPS, Gbps, ms, connections), and
	// Runs its accepted and total final runs. CPS and Gbps are then nil.
	Test  string    `json:"test,omitempty"`
	Value *float64  `json:"value,omitempty"`
	Unit  string    `json:"unit,omitempty"`
	Runs  *RunCount `json:"runs,omitempty"`
	// Bound, if set, says that Value is a lower bound (Cell.Bound).
	Bound string `json:"bound,omitempty"`
	// SR, in a row of SSL TPS with session reuse, is its ratio (Cell.SR):
	// Value is its CPS, and the row's CPS nil.
	SR float64 `json:"sr,omitempty"`
	// Unsupported, if set, is why the DUT does not serve the profile (its
	// refusal in the preliminary phase): the row is "not supported".
	Unsupported string `json:"unsupported,omitempty"`
}

// RunCount counts a cell's final runs.
type RunCount struct {
	Accepted int `json:"accepted"`
	Total    int `json:"total"`
}

// SummaryFile is the summary's name in a campaign directory.
const SummaryFile = "summary.json"

// WriteSummary writes dir/summary.json atomically.
func WriteSummary(dir string, s *Summary) error {
	s.Schema = SummarySchema
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(filepath.Join(dir, SummaryFile), append(data, '\n'), 0o644)
}

// rows builds the published table: per DUT, one row per profile and
// protocol in plan order, with its CPS and Gbps cells.
func (c *Campaign) rows(s *Summary) []Row {
	neg := map[string]metrics.Negotiated{}
	for _, p := range s.Preliminary {
		if _, ok := neg[p.DUT+"|"+p.Profile]; !ok {
			neg[p.DUT+"|"+p.Profile] = p.Negotiated
		}
	}
	var out []Row
	for _, d := range c.Plan.DUTs {
		seen := map[string]bool{}
		for _, t := range c.Plan.Tests {
			if t.Name != "" || t.Resume > 0 {
				continue // suiteRows
			}
			for _, name := range t.Profiles {
				proto := t.Protocol()
				if seen[proto+"|"+name] {
					continue
				}
				seen[proto+"|"+name] = true
				n := neg[d.Name+"|"+name]
				row := Row{DUT: d.Name, Protocol: proto, Profile: name, Cipher: n.OpenSSL, Group: n.GroupOrKey(),
					Consistent: true}
				for _, cell := range s.Cells {
					if cell.DUT != d.Name || cell.Profile != name || cell.Test != "" || cell.SR > 0 ||
						cmp.Or(cell.Protocol, vocab.DefaultProtocol) != proto {
						continue
					}
					if cell.Unsupported != "" {
						if row.Unsupported == "" {
							row.Unsupported = cell.Unsupported
						}
						row.Consistent = false // nothing measured agrees (as the cell says)
						continue
					}
					count := RunCount{Accepted: cell.Accepted, Total: cell.Total}
					var v *float64
					if cell.Accepted > 0 {
						x := cell.Value
						v = &x
					}
					if cell.Engine == vocab.EngineCPS {
						row.CPS, row.CPSRuns = v, count
					} else {
						row.Gbps, row.GbpsRuns = v, count
					}
					row.Consistent = row.Consistent && cell.Consistent
				}
				out = append(out, row)
			}
		}
	}
	return append(out, suiteRows(s, func(dut, profile string) metrics.Negotiated { return neg[dut+"|"+profile] })...)
}
