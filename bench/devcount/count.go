package devcount

import (
	"errors"
	"fmt"
	"math"
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
// number-unit pairs), so that ParseDuration refused it for its size.
func durationSyntax(v string) bool {
	v = strings.TrimLeft(v, "+-")
	if v == "" {
		return false
	}
	for v != "" {
		i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 || strings.Count(v[:i], ".") > 1 || v[:i] == "." {
			return false
		}
		v = v[i:]
		j := strings.IndexFunc(v, func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
		if j < 0 {
			j = len(v)
		}
		switch v[:j] {
		case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
		default:
			return false
		}
		v = v[j:]
	}
	return true
}

// parseCount reads a count as a device prints it: a whole number from 0 to
// math.MaxInt64, in decimal or in floating-point notation (1e3, 42.0). Every
// kind of source reads its counts with it (or CountOf), so that all refuse
// the same way what is not a count: negative, fractional, out of range, or
// not a number.
func parseCount(text string) (int64, error) {
	v, err := strconv.ParseInt(text, 10, 64)
	if err == nil {
		return v, checkCount(v)
	}
	if errors.Is(err, strconv.ErrRange) {
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

func checkCount(v int64) error {
	if v < 0 {
		return errors.New("negative, not a count")
	}
	return nil
}

func outOfRange() error {
	return fmt.Errorf("out of range, a count is at most %d", int64(math.MaxInt64))
}
