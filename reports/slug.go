package reports

import "strings"

// slug makes a chart name out of parts: lower case letters, digits and
// dashes.
func slug(parts ...string) string {
	var b strings.Builder
	for _, part := range parts {
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		dash := false
		for _, r := range strings.ToLower(part) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
				dash = false
			} else if !dash {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return strings.Trim(b.String(), "-")
}
