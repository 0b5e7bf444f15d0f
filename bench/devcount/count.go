package devcount

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// maxTimeout bounds a source's timeout. One read is a page fetch or a few
// commands (an SSH login and a CLI command take seconds); a read is taken
// up to four times a run, at the window's edges among them, and a campaign
// makes hundreds of runs: a read that has not answered in a minute is a
// hung device or command, and waiting longer would only stall the runs.
const maxTimeout = time.Minute

// parseTimeout reads a source's timeout=: a duration above 0, at most
// MaxTimeout.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil && durationSyntax(v):
		return 0, fmt.Errorf("timeout %q is out of range (at most %s)", v, maxTimeout)
	case err != nil:
		return 0, fmt.Errorf("timeout %q is not a duration, e.g. 2s", v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("timeout %q is not above 0, e.g. 2s", v)
	}
	if err := checkTimeout(d); err != nil {
		return 0, fmt.Errorf("timeout %q %v", v, err)
	}
	return d, nil
}

// checkTimeout says why d is not a usable timeout (0 is the default).
func checkTimeout(d time.Duration) error {
	switch {
	case d < 0:
		return errors.New("is negative")
	case d > maxTimeout:
		return fmt.Errorf("is out of range (at most %s)", maxTimeout)
	}
	return nil
}

// durationSyntax says whether v is written as a duration ([-+] then
// number-unit pairs), so that ParseDuration refused it for its size: with
// every run of digits made 1, it parses.
func durationSyntax(v string) bool {
	_, err := time.ParseDuration(digitRuns.ReplaceAllString(strings.TrimLeft(v, "+-"), "1"))
	return err == nil
}

var digitRuns = regexp.MustCompile(`[0-9]+`)

// parseCount reads a count as a device prints it: a whole number from 0 to
// math.MaxInt64, in decimal or in floating-point notation (1e3, 42.0). Every
// kind of source reads its counts with it (or CountOf), so that all refuse
// the same way what is not a count: negative, fractional, out of range, or
// not a number.
func parseCount(text string) (int64, error) {
	switch v, err := strconv.ParseInt(text, 10, 64); {
	case err == nil && v < 0:
		return v, errors.New("negative, not a count")
	case err == nil:
		return v, nil
	case errors.Is(err, strconv.ErrRange):
		return 0, outOfRange()
	}
	f, ferr := strconv.ParseFloat(text, 64)
	if ferr != nil && !errors.Is(ferr, strconv.ErrRange) {
		return 0, errors.New("not a number")
	}
	return countOf(f)
}

// countOf checks that f (a Prometheus sample's value) is a count.
func countOf(f float64) (int64, error) {
	switch {
	case math.IsNaN(f):
		return 0, errors.New("not a number (NaN), not a count")
	case f < 0:
		return 0, errors.New("negative, not a count")
	case f >= math.MaxInt64: // 2⁶³, +Inf
		return 0, outOfRange()
	case f != math.Trunc(f):
		return 0, errors.New("not a whole number, not a count")
	}
	return int64(f), nil
}

func outOfRange() error {
	return fmt.Errorf("out of range, a count is at most %d", int64(math.MaxInt64))
}
