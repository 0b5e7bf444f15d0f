package method_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// cutExec is a fakeExec whose run number cut cancels the campaign in its
// middle and ends as a run against a target the signal killed would: every
// connection refused.
type cutExec struct {
	fakeExec
	cut    int
	cancel context.CancelFunc
}

func (e *cutExec) Run(ctx context.Context, req method.Request) (*metrics.Run, error) {
	r, err := e.fakeExec.Run(ctx, req)
	if e.calls == e.cut {
		e.cancel()
		r.Errors.ByClass = map[vocab.Class]int64{vocab.Class("refused"): 71}
		r.Errors.Total = 71
	}
	return r, err
}

// TestInterruptedRunNotRecorded: a run during which the campaign is
// interrupted (here its target dying with it: refused connections) is not
// in the ledger, whatever its phase; the error names it; the ledger is
// that of a campaign stopped between two runs, and the resumed campaign
// makes that run again and gives the summary of one straight through.
func TestInterruptedRunNotRecorded(t *testing.T) {
	straight := &fakeExec{}
	want, err := campaign(t, testPlan("a"), straight, t.TempDir()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 2, 12, straight.calls} { // preliminary, exploratory, …, the last final
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		first := &cutExec{cut: cut, cancel: cancel}
		_, err := campaign(t, testPlan("a"), first, dir).Run(ctx)
		cancel()
		if !errors.Is(err, method.ErrInterrupted) || !strings.Contains(err.Error(), "was cut short and is not recorded") {
			t.Fatalf("cut %d: %v", cut, err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, method.LedgerFile))
		if n := strings.Count(string(data), "\n"); n != cut-1 || strings.Contains(string(data), "refused") {
			t.Errorf("cut %d: the ledger holds %d runs (want %d), refused in it: %v", cut, n, cut-1,
				strings.Contains(string(data), "refused"))
		}
		second := &fakeExec{}
		got, err := campaign(t, testPlan("a"), second, dir).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if cut-1+second.calls != straight.calls || !reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)) {
			t.Errorf("cut %d: %d + %d runs (straight %d), summaries equal %v", cut, cut-1, second.calls, straight.calls,
				reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)))
		}
	}
}
