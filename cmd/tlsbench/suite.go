package main

import (
	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/method/plan"
)

// suiteFlags are qualify's --suite and --tests: a suite's tests instead of
// the default plan's.
type suiteFlags struct {
	suite *string
	tests *[]string
	fs    *pflag.FlagSet
}

func addSuiteFlags(fs *pflag.FlagSet) *suiteFlags {
	return &suiteFlags{
		suite: fs.String("suite", "", "without --plan: run the tests of suite `NAME` (rfc9411: RFC 9411's "+
			"§7.6 CPS, §7.7 throughput, §7.8 latency and §7.9 concurrent connections, each with the RFC's four "+
			"TLS 1.2 keys; --quick: a short subset, one profile)"),
		tests: fs.StringSlice("tests", nil, "with --suite: run only these `TESTS` (comma-separated: "+
			"an RFC 9411 test, as 7.6, or a test's name, as \"7.6 1k\")"),
		fs: fs,
	}
}

// set reports whether --suite or --tests was given (even empty: refused).
func (f *suiteFlags) set() bool { return f.fs.Changed("suite") || f.fs.Changed("tests") }

// plan is the suite's plan against duts, for the profiles named (default:
// the seed profiles; with quick, the first of them), its tests narrowed by
// --tests.
func (f *suiteFlags) plan(quick bool, duts []plan.DUT, names, engines []string) (*plan.Plan, error) {
	switch {
	case f.fs.Changed("suite") && *f.suite == "":
		return nil, usagef(`bad --suite "": name a suite (rfc9411)`)
	case *f.suite == "":
		return nil, usagef("--tests needs --suite")
	case f.fs.Changed("tests") && len(*f.tests) == 0:
		return nil, usagef(`bad --tests "": name at least one test (as 7.6, or "7.6 1k"), or give no --tests`)
	}
	if len(engines) > 0 {
		return nil, usagef("--suite names its tests: no --test (narrow them with --tests)")
	}
	pl, err := plan.SuitePlan(*f.suite, quick, duts, names)
	if err != nil {
		return nil, usagef("bad --suite: %v", err)
	}
	if pl.Tests, err = plan.FilterTests(pl.Tests, *f.tests); err != nil {
		return nil, usagef("bad --tests: %v", err)
	}
	return pl, nil
}
