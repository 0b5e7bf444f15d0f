package agent

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// maxRecord bounds the size of a pushed record (an hour's record is well
// under 1 MiB).
const maxRecord = 32 << 20

// pushTimeout bounds one push attempt; Push tries pushAttempts times.
const (
	pushTimeout  = 15 * time.Second
	pushAttempts = 5
)

// Push POSTs the record r to a collector at url, signed with cred's token
// for cred.Session (see AuthScheme; without a session, Push asks for it
// first), verifying an https collector with cred's CA. Connection failures
// and 5xx answers are retried, backing off; a 4xx answer is final.
func Push(ctx context.Context, url string, cred Credentials, r *metrics.Run) error {
	if err := CheckToken(cred.Token); err != nil {
		return err
	}
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if cred.Session == "" {
		if cred, err = Hello(ctx, url, cred); err != nil {
			return err
		}
	}
	client, err := cred.client()
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	var last error
	for attempt := range pushAttempts {
		if attempt > 0 {
			wait := time.Duration(1<<attempt) * 250 * time.Millisecond
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), last)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		cred.sign(req, body)
		resp, err := client.Do(req)
		var cv *tls.CertificateVerificationError
		if errors.As(err, &cv) {
			return err // no retry makes the collector's certificate valid
		}
		if err != nil {
			last = err
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 2:
			return nil
		case resp.StatusCode/100 == 4:
			return fmt.Errorf("the collector refused the record: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
		}
		last = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return fmt.Errorf("after %d attempts: %v", pushAttempts, last)
}

// Collector receives the records agents push and hands each batch over
// once all its agents have reported. A batch named ID is pushed to
// /runs/ID; the batch "" also takes pushes to any other path. It takes only
// records signed with the batch's token (see AuthScheme): an unsigned push
// is refused (401) before its body is read, and takes no shard.
type Collector struct {
	// Limits bound each push; set them before Serve.
	Limits  Limits
	token   string
	mu      sync.Mutex
	batches map[string]*batch
}

// NewCollector returns a Collector with no batch that takes the records
// signed with token (a collector with an empty token takes none).
func NewCollector(token string) *Collector {
	return &Collector{token: token, batches: map[string]*batch{}}
}

// batch is the records of one distributed run, by shard.
type batch struct {
	ID     string
	Expect int
	// Session is the batch's random session every push must be signed
	// for (see AuthScheme); a record whose steady window began before
	// Began (less maxClockSkew) is refused.
	Session string
	Began   time.Time
	token   string
	mu      sync.Mutex
	runs    []*metrics.Run // by shard
	got     int
	done    chan struct{}
}

// Serve serves the collector on ln within c.Limits, over TLS if tlsConfig
// is not nil, until the returned stop is called.
func (c *Collector) Serve(ln net.Listener, tlsConfig *tls.Config) (stop func()) {
	l := c.Limits.withDefaults()
	c.Limits = l
	srv := &http.Server{
		Handler:           c,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	ln = netutil.LimitListener(ln, l.MaxConns)
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	go srv.Serve(ln)
	return func() { srv.Close() }
}

// Expect opens a batch for n agents (shards 0..n-1), taking the records
// signed with the collector's token.
func (c *Collector) Expect(id string, n int) *batch {
	return c.ExpectToken(id, n, c.token)
}

// ExpectToken opens a batch for n agents that takes the records signed with
// token (a run's own), not the collector's.
func (c *Collector) ExpectToken(id string, n int, token string) *batch {
	b := &batch{ID: id, Expect: n, Session: rand.Text(), Began: time.Now(), token: token,
		runs: make([]*metrics.Run, n), done: make(chan struct{})}
	c.mu.Lock()
	c.batches[id] = b
	c.mu.Unlock()
	return b
}

// forget closes a batch: later pushes to it are refused.
func (c *Collector) forget(id string) {
	c.mu.Lock()
	delete(c.batches, id)
	c.mu.Unlock()
}

// ServeHTTP takes one pushed record: signed with the batch's token (401
// otherwise, before the body is read), announcing its length (411) of at
// most Limits.MaxRecord (413), its body matching the signed digest (401), a
// valid record (400) of a shard not yet reported (409).
func (c *Collector) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost && req.Method != http.MethodGet {
		http.Error(w, "POST a run record (or GET, signed, the session)", http.StatusMethodNotAllowed)
		return
	}
	id, ok := strings.CutPrefix(req.URL.Path, "/runs/")
	c.mu.Lock()
	b := c.batches[id]
	if b == nil && !ok {
		b = c.batches[""]
	}
	c.mu.Unlock()
	if b == nil {
		http.Error(w, fmt.Sprintf("no run %q is being collected", id), http.StatusNotFound)
		return
	}
	if req.Method == http.MethodGet {
		b.hello(w, req)
		return
	}
	sum, err := verifyHeaders(b.token, b.Session, req)
	if errors.Is(err, errStaleSession) {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	if err != nil {
		w.Header().Set("WWW-Authenticate", AuthScheme)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	max := c.Limits.MaxRecord
	orDefault(&max, maxRecord)
	switch {
	case req.ContentLength < 0:
		http.Error(w, "a record's length must be announced (Content-Length)", http.StatusLengthRequired)
		return
	case req.ContentLength > max:
		msg := fmt.Sprintf("a record of %d bytes exceeds the bound of %d", req.ContentLength, max)
		http.Error(w, msg, http.StatusRequestEntityTooLarge)
		return
	}
	// The announced (and signed) length, read into a buffer of that size:
	// never more, never grown.
	data := make([]byte, req.ContentLength)
	if _, err := io.ReadFull(http.MaxBytesReader(w, req.Body, max), data); err != nil {
		http.Error(w, "reading the record: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !bodyMatches(data, sum) {
		w.Header().Set("WWW-Authenticate", AuthScheme)
		http.Error(w, "the record does not match its signature: altered in transit", http.StatusUnauthorized)
		return
	}
	r, err := metrics.DecodeRun(data)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := b.add(r); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxClockSkew is how far an agent's clock may be behind the collector's:
// a record whose steady window began more than this before its batch was
// opened is refused (see Batch.Began).
const maxClockSkew = 5 * time.Second

// helloAnswer is a hello's answer: the batch's session and when it began,
// with the collector's HMAC of both (helloMAC).
type helloAnswer struct {
	Session string    `json:"session"`
	Began   time.Time `json:"began"`
	MAC     string    `json:"mac"`
}

// hello answers a signed GET (with no session, no body) with the batch's
// session: what the agent signs its push for.
func (b *batch) hello(w http.ResponseWriter, req *http.Request) {
	if req.ContentLength > 0 {
		http.Error(w, "a hello has no body", http.StatusBadRequest)
		return
	}
	if _, err := verifyHeaders(b.token, "", req); err != nil {
		w.Header().Set("WWW-Authenticate", AuthScheme)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(helloAnswer{b.Session, b.Began, helloMAC(b.token, b.Session, b.Began)})
}

// helloTimeout bounds a hello.
const helloTimeout = 10 * time.Second

// Hello asks the collector at url (a push URL) for its session, in a GET
// signed with cred's token, and returns cred with that session; or why the
// collector will not take this agent's record. One attempt, within
// helloTimeout: an agent says hello before its load.
func Hello(ctx context.Context, url string, cred Credentials) (Credentials, error) {
	if err := CheckToken(cred.Token); err != nil {
		return cred, err
	}
	client, err := cred.client()
	if err != nil {
		return cred, err
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return cred, err
	}
	cred.Session = ""
	cred.sign(req, nil)
	resp, err := client.Do(req)
	if err != nil {
		return cred, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return cred, fmt.Errorf("the collector refused the hello: %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	var a helloAnswer
	if err := json.Unmarshal(data, &a); err != nil || a.Session == "" {
		return cred, fmt.Errorf("the collector's answer to the hello is not a session: %.80q", data)
	}
	if !hmac.Equal([]byte(a.MAC), []byte(helloMAC(cred.Token, a.Session, a.Began))) {
		return cred, errors.New("the collector's answer to the hello is not signed with the run's token")
	}
	cred.Session = a.Session
	return cred, nil
}

func (b *batch) add(r *metrics.Run) error {
	a := r.Agent
	if a == nil {
		return errors.New("the record names no agent (it has no shard i/N)")
	}
	began := r.Started.Add(time.Duration(r.SteadyStartS * float64(time.Second)))
	if began.Before(b.Began.Add(-maxClockSkew)) {
		return fmt.Errorf("agent %s's steady window began at %s, before this collection did (%s): "+
			"a record of an earlier run is not taken",
			a.Name, began.UTC().Format(time.RFC3339Nano), b.Began.UTC().Format(time.RFC3339Nano))
	}
	if a.Shards != b.Expect || a.Shard < 0 || a.Shard >= a.Shards {
		return fmt.Errorf("agent %s is shard %d/%d; this run expects %d agents", a.Name, a.Shard, a.Shards, b.Expect)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if prev := b.runs[a.Shard]; prev != nil {
		return fmt.Errorf("shard %d/%d already reported by agent %s", a.Shard, a.Shards, prev.Agent.Name)
	}
	b.runs[a.Shard] = r
	b.got++
	if b.got == b.Expect {
		close(b.done)
	}
	return nil
}

// missingError says which agents had not reported at the deadline.
type missingError struct {
	ID       string
	Expect   int
	Missing  []int    // shard indexes
	Reported []string // the agents that did report
}

func (e *missingError) Error() string {
	m := make([]string, len(e.Missing))
	for i, s := range e.Missing {
		m[i] = fmt.Sprintf("%d/%d", s, e.Expect)
	}
	run := ""
	if e.ID != "" {
		run = " of run " + e.ID
	}
	if len(e.Reported) == 0 {
		return fmt.Sprintf("none of the %d agents%s reported; missing shards %s", e.Expect, run, strings.Join(m, ", "))
	}
	return fmt.Sprintf("%d of %d agents%s reported (%s); missing shards %s",
		len(e.Reported), e.Expect, run, strings.Join(e.Reported, ", "), strings.Join(m, ", "))
}

// Wait returns the batch's records, by shard, once all have arrived, or a
// *missingError when ctx ends first.
func (b *batch) Wait(ctx context.Context) ([]*metrics.Run, error) {
	select {
	case <-b.done:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := &missingError{ID: b.ID, Expect: b.Expect}
	for i, r := range b.runs {
		if r == nil {
			e.Missing = append(e.Missing, i)
		} else {
			e.Reported = append(e.Reported, r.Agent.Name)
		}
	}
	if len(e.Missing) == 0 { // all arrived (perhaps as ctx ended)
		return append([]*metrics.Run(nil), b.runs...), nil
	}
	sort.Strings(e.Reported)
	return nil, e
}
