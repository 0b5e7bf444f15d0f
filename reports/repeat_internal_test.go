package reports

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestReexploredNoteShowsTheGap: the re-exploration note's two figures
// differ whenever the values do (1,155 and 1,221 CPS were both "1.2k"),
// and keep the table's rounding when that already tells them apart.
func TestReexploredNoteShowsTheGap(t *testing.T) {
	for _, tc := range []struct {
		engine          vocab.Engine
		value, explored float64
		want            []string
	}{
		{vocab.EngineCPS, 1155, 1161, []string{"first finals 1155 CPS", "exploration's 1161 CPS"}},
		{vocab.EngineCPS, 1155.2, 1155.4, []string{"first finals 1155.2 CPS", "exploration's 1155.4 CPS"}},
		{vocab.EngineCPS, 900, 1500, []string{"first finals 900 CPS", "exploration's 1.50k CPS"}},
		{vocab.EngineThroughput, 9.61, 9.64, []string{"first finals 9.61 Gbps", "exploration's 9.64 Gbps"}},
		{vocab.EngineThroughput, 5, 7, []string{"first finals 5.00 Gbps", "exploration's 7.00 Gbps"}},
	} {
		c := &method.Cell{Engine: tc.engine, Level: 64, Accepted: 1, Consistent: true, Reexplored: &method.Reexploration{
			Level: 128, Value: tc.value, Explored: tc.explored, Finals: []method.FinalRun{{}},
		}}
		note := strings.Join(factsOf(c, nil, false).Notes, "; ")
		for _, w := range tc.want {
			if !strings.Contains(note, w) {
				t.Errorf("%s %v vs %v: note %q lacks %q", tc.engine, tc.value, tc.explored, note, w)
			}
		}
	}
}
