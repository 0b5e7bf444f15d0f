package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports"
)

// TestWording: the library's typed errors, whose text names no flag, are
// worded where the CLI calls the library with the flags that remedy them.
func TestWording(t *testing.T) {
	_, suiteErr := cipher.SuiteByName("NO-SUCH-SUITE")
	var ue *cipher.UnknownSuiteError
	if !errors.As(suiteErr, &ue) {
		t.Fatalf("SuiteByName: %T", suiteErr)
	}
	descriptors := &tlsconn.DescriptorLimitError{Conns: 1000, Need: 1064, Cur: 1024, Max: 4096}
	unsharded := &metrics.UnshardedError{With: "a", Without: "b"}
	differences := &method.DifferencesError{Table: []method.Difference{{Engine: vocab.EngineCPS, Profile: "p",
		Field: "group", Values: map[string]string{"x": "X25519", "y": "P-256"}}}}
	mixed := &reports.MixedDUTError{DUT: "lb", FileA: "a.json", FileB: "b.json", Field: "address", ValueA: "1",
		ValueB: "2"}
	profileErr := &profiles.Error{File: "p.yaml", Line: 3, Msg: "cipher_suites: " + suiteErr.Error(), Err: suiteErr}
	for _, tc := range []struct {
		err       error
		got, want string
	}{
		{descriptors, descriptorText(descriptors),
			"1000 connections need about 1064 file descriptors and RLIMIT_NOFILE is 1024 (hard limit 4096): connections beyond it fail; " +
				"raise the hard limit (as root with CAP_SYS_RESOURCE: prlimit --nofile) or split the load over agents (--shard)"},
		{unsharded, mergeText(unsharded),
			"metrics: cannot merge: a has a shard identity, b none (it ran without --shard)"},
		{differences, differencesText(differences),
			"preliminary: the DUTs differ (cps p group: x=X25519 y=P-256); --allow-differences goes on"},
		{mixed, mixedDUTText(mixed),
			"DUT lb: a.json dialled 1, b.json 2: two devices under one name (--allow-mixed-dut reports them as one)"},
		{suiteErr, suiteText(ue), "unknown cipher suite \"NO-SUCH-SUITE\" (IANA or OpenSSL name, e.g. ECDHE-ECDSA-AES128-SHA256; `tlsbench profiles suites` lists them)"},
		{profileErr, profileText(profileErr),
			"profile p.yaml:3: cipher_suites: unknown cipher suite \"NO-SUCH-SUITE\" (IANA or OpenSSL name, e.g. ECDHE-ECDSA-AES128-SHA256; `tlsbench profiles suites` lists them)"},
		{errors.New("plain"), profileText(errors.New("plain")), "plain"},
	} {
		if tc.got != tc.want {
			t.Errorf("%T worded\n got %q\nwant %q", tc.err, tc.got, tc.want)
		}
		if strings.Contains(tc.err.Error(), "--") {
			t.Errorf("the library's %T names a flag: %s", tc.err, tc.err)
		}
	}
	w := cps.DeadlineAdvice(20000, 2, 5*time.Second, 10*time.Second)
	if got, want := deadlineWarning(w), "at -c 20000 each handshake queues behind thousands of others: at 500 handshakes per second on each of 2 cores that is about 20s, "+
		"against --handshake-timeout 5s and --read-timeout 10s; pass both of at least 40s, or expect handshake_timeout and read_timeout errors"; got != want {
		t.Errorf("deadline warning\n got %q\nwant %q", got, want)
	}
	cpsv := 700.0
	n := cps.TimeoutAdvice(&metrics.Run{Load: metrics.Load{Mode: "closed", Concurrency: 20000}, CPS: &cpsv,
		Errors: metrics.Errors{ByClass: map[vocab.Class]int64{vocab.ClassHandshakeTimeout: 12}}}, 40*time.Second, 40*time.Second)
	if got, want := timeoutNote(n), "12 transactions timed out; at -c 20000 and 700 CPS each transaction took about 28.6s (concurrency ÷ CPS), near the deadlines "+
		"(--handshake-timeout 40s, --read-timeout 40s): pass at least 1m0s, or lower -c"; got != want {
		t.Errorf("timeout note\n got %q\nwant %q", got, want)
	}
}

// TestWordingProfileFile: a profile file's unknown suite, through the
// command line, names the command that lists the suites.
func TestWordingProfileFile(t *testing.T) {
	_, _, stderr := invoke(t, context.Background(), "profiles", "--profile-file", filepath.Join("..", "..", "profiles", "testdata", "bad", "unknown-suite.yaml"))
	if !strings.Contains(stderr, `unknown cipher suite "ECDHE-ECDSA-AES128-SHA999"`) || !strings.Contains(stderr, "`tlsbench profiles suites` lists them") {
		t.Errorf("stderr %q", stderr)
	}
}
