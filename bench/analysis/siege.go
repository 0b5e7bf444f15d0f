package analysis

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Pooled merges the named phase's histograms of runs.
func Pooled(phase vocab.Phase, runs ...*metrics.Run) (*hdr.Histogram, error) {
	h := metrics.NewHistogram()
	for _, r := range runs {
		x, err := r.Histogram(phase.String())
		if err != nil {
			return nil, fmt.Errorf("run of %s: %w", r.Started.Format("15:04:05"), err)
		}
		h.Merge(x)
	}
	return h, nil
}

// Siege is a set of runs summarised in Siege's terms, with Siege's own JSON
// keys and units, so that numbers can be held against Siege's.
//
// Siege's definitions: a transaction is a server hit (a response, whatever
// its status); successful ones have a status below 400; failed ones are
// those with a status of 400 or more plus the connections that failed;
// availability is transactions ÷ (transactions + failed connections);
// concurrency is the sum of response times ÷ elapsed time. MB are MiB.
type Siege struct {
	Transactions           int64   `json:"transactions"`
	Availability           float64 `json:"availability"`     // %
	ElapsedTime            float64 `json:"elapsed_time"`     // s
	DataTransferred        float64 `json:"data_transferred"` // MB of response bodies
	ResponseTime           float64 `json:"response_time"`    // s, mean
	TransactionRate        float64 `json:"transaction_rate"` // /s
	Throughput             float64 `json:"throughput"`       // MB/s
	Concurrency            float64 `json:"concurrency"`
	SuccessfulTransactions int64   `json:"successful_transactions"`
	FailedTransactions     int64   `json:"failed_transactions"`
	LongestTransaction     float64 `json:"longest_transaction"`  // s
	ShortestTransaction    float64 `json:"shortest_transaction"` // s
}

// SiegeOf pools runs (rounds of one side of a study, or a single run): the
// steady windows are added, the histograms merged.
func SiegeOf(runs ...*metrics.Run) (Siege, error) {
	var s Siege
	var ok, status, failed, payload int64
	total, err := Pooled(vocab.PhaseTotal, runs...)
	if err != nil {
		return s, err
	}
	for _, r := range runs {
		ok += r.Transactions
		status += r.Errors.ByClass[vocab.ClassStatus]
		failed += r.Errors.Total
		payload += r.Bytes.Payload + r.Bytes.PayloadPartial
		s.ElapsedTime += r.DurationS
	}
	s.Transactions = ok + status
	s.SuccessfulTransactions = ok
	s.FailedTransactions = failed
	if attempted := s.Transactions + failed - status; attempted > 0 {
		s.Availability = 100 * float64(s.Transactions) / float64(attempted)
	}
	s.DataTransferred = float64(payload) / (1 << 20)
	if total.TotalCount() > 0 {
		s.ResponseTime = metrics.Mean(total) / 1e6
		s.LongestTransaction = float64(total.Max()) / 1e6
		s.ShortestTransaction = float64(total.Min()) / 1e6
	}
	if s.ElapsedTime > 0 {
		s.TransactionRate = float64(s.Transactions) / s.ElapsedTime
		s.Throughput = s.DataTransferred / s.ElapsedTime
		s.Concurrency = s.TransactionRate * s.ResponseTime
	}
	return s, nil
}
