package reports

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/conform-spi/conform/internal/textsafe"
)

// Limits on how much store text one report shows. The JSON report keeps
// everything; the other formats cut.
const (
	// fieldMax is the most bytes of one text field (a message, an expected
	// or got value, a diff, a trail line) that the JUnit, Markdown and HTML
	// reports keep before they cut it with textsafe.Clip.
	fieldMax = 4 << 10
	// outputMax is the most bytes of a row's captured log that those reports
	// keep; they keep its end, where the failure is.
	outputMax = 16 << 10
	// trailMax is the most trail lines those reports keep; they keep the
	// last ones, which lead to the failure.
	trailMax = 200
)

// clipTail is Clip keeping the end of s instead of its start, for logs.
func clipTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	start := len(s) - max
	if max <= 0 {
		start = len(s)
	}
	for back := 0; start < len(s) && back < utf8.UTFMax && !utf8.RuneStart(s[start]); back++ {
		start++
	}
	return fmt.Sprintf("(%d bytes cut) …", start) + s[start:]
}

// visible makes every control character of s visible (textsafe.Text):
// the result holds no byte below 0x20 except \n and \t.
func visible(s string) string { return textsafe.Text(s) }

// field is what every human-facing report does to one text field from the
// store: cut to fieldMax, then control characters made visible.
func field(s string) string { return visible(textsafe.Clip(s, fieldMax)) }

// output is field for a row's captured log: its end, cut to outputMax.
func output(s string) string { return visible(clipTail(s, outputMax)) }

// trail returns the last trailMax lines of a failure's trail, each a field,
// and how many earlier lines it dropped.
func trail(lines []string) (kept []string, dropped int) {
	if len(lines) > trailMax {
		dropped = len(lines) - trailMax
		lines = lines[dropped:]
	}
	kept = make([]string, len(lines))
	for i, l := range lines {
		kept[i] = field(l)
	}
	return kept, dropped
}

// duration formats d for people: 350µs, 12.34ms, 1.23s, 2m5s.
func duration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// plural returns "1 row" or "3 rows".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
