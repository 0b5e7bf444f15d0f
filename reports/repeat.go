package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method"
)

// repeatNote is a cell's note on its repeats (final.repeat): each
// repeat's published value and their spread beside the tolerance, flagged
// when larger. "" when the cell has neither.
func repeatNote(c *method.Cell) string {
	format := formatOf(c.Engine)
	note := ""
	if r := c.Repeats; r != nil {
		vs := make([]string, len(r.Values))
		for i, v := range r.Values {
			vs[i] = format(v)
		}
		cmp, flag := "≤", ""
		if r.Exceeds {
			cmp, flag = ">", " NOT REPEATABLE"
		}
		note += fmt.Sprintf("%s repeats %s: spread %.1f%% %s tolerance %.3g%%%s",
			unitOf(c.Engine), strings.Join(vs, "/"), r.Spread*100, cmp, r.Tolerance*100, flag)
	}
	return note
}

// distinct formats a and b with format, or, where that shows one figure
// for two different values (1,155 and 1,221 CPS both "1.2k"), in unit with
// the fewest decimals that tell them apart.
func distinct(a, b float64, format func(float64) string, unit string) (string, string) {
	fa, fb := format(a), format(b)
	for d := 0; fa == fb && a != b && d <= 6; d++ {
		fa, fb = strconv.FormatFloat(a, 'f', d, 64)+" "+unit, strconv.FormatFloat(b, 'f', d, 64)+" "+unit
	}
	return fa, fb
}
