package devcount

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// series is one sample line of a Prometheus text exposition.
type series struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseExposition parses the Prometheus text exposition format (version
// 0.0.4): # comments (HELP, TYPE), then one sample a line:
// name{label="value",…} value [timestamp], label values with the escapes
// \\, \" and \n. Any line that is not one of those is an error naming it.
func parseExposition(body []byte) ([]series, error) {
	var out []series
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, rest, err := parseSeries(line)
		if err != nil {
			return nil, fmt.Errorf("exposition line %d: %v: %q", n, err, clip(line))
		}
		f := strings.Fields(rest)
		if len(f) < 1 || len(f) > 2 {
			return nil, fmt.Errorf("exposition line %d: want a value and an optional timestamp after the series: %q",
				n, clip(line))
		}
		if s.Value, err = strconv.ParseFloat(f[0], 64); err != nil {
			return nil, fmt.Errorf("exposition line %d: value %q is not a number", n, f[0])
		}
		if len(f) == 2 {
			if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
				return nil, fmt.Errorf("exposition line %d: timestamp %q is not an integer", n, f[1])
			}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("exposition: %v", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("not a Prometheus exposition: no sample")
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// parseSeries reads name{labels} at the start of line and returns the rest.
func parseSeries(line string) (series, string, error) {
	s := series{Labels: map[string]string{}}
	i := 0
	for i < len(line) && isNameChar(line[i], i == 0, true) {
		i++
	}
	if i == 0 {
		return s, "", fmt.Errorf("no metric name")
	}
	s.Name = line[:i]
	rest := line[i:]
	if strings.HasPrefix(rest, "{") {
		var err error
		if rest, err = parseLabels(rest[1:], s.Labels); err != nil {
			return s, "", err
		}
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return s, "", fmt.Errorf("unexpected %q after the series", rest[0])
	}
	return s, rest, nil
}

// parseLabels reads label="value",… up to and including '}'.
func parseLabels(s string, into map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		i := 0
		for i < len(s) && isNameChar(s[i], i == 0, false) {
			i++
		}
		if i == 0 {
			return "", fmt.Errorf("want a label name or '}'")
		}
		name := s[:i]
		s = strings.TrimLeft(s[i:], " \t")
		if !strings.HasPrefix(s, "=\"") {
			return "", fmt.Errorf("label %s: want =\"value\"", name)
		}
		s = s[2:]
		var v strings.Builder
		closed := false
		for j := 0; j < len(s); j++ {
			c := s[j]
			if c == '\\' && j+1 < len(s) {
				j++
				switch s[j] {
				case '\\':
					v.WriteByte('\\')
				case '"':
					v.WriteByte('"')
				case 'n':
					v.WriteByte('\n')
				default:
					return "", fmt.Errorf("label %s: bad escape \\%c", name, s[j])
				}
				continue
			}
			if c == '"' {
				s, closed = s[j+1:], true
				break
			}
			v.WriteByte(c)
		}
		if !closed {
			return "", fmt.Errorf("label %s: unclosed value", name)
		}
		if _, dup := into[name]; dup {
			return "", fmt.Errorf("label %s given twice", name)
		}
		into[name] = v.String()
		s = strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "}"):
		default:
			return "", fmt.Errorf("after label %s: want ',' or '}'", name)
		}
	}
}

// isNameChar: [a-zA-Z_:][a-zA-Z0-9_:]* for metric names, without ':' for
// label names.
func isNameChar(c byte, first, colon bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c == ':':
		return colon
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// selector picks series: a metric name and labels they must have.
type selector struct {
	Name   string
	Labels map[string]string
}

// parseSelector reads name or name{label="value",…}.
func parseSelector(text string) (selector, error) {
	s, rest, err := parseSeries(strings.TrimSpace(text))
	if err != nil {
		return selector{}, fmt.Errorf("selector %q: %v", text, err)
	}
	if strings.TrimSpace(rest) != "" {
		return selector{}, fmt.Errorf("selector %q: %q after the labels", text, rest)
	}
	return selector{s.Name, s.Labels}, nil
}

// Sum adds the values of the series the selector matches; n is how many.
func (sel selector) Sum(series []series) (v float64, n int) {
	for _, s := range series {
		if s.Name != sel.Name {
			continue
		}
		ok := true
		for k, want := range sel.Labels {
			if s.Labels[k] != want {
				ok = false
				break
			}
		}
		if ok {
			v += s.Value
			n++
		}
	}
	return v, n
}
