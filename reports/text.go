package reports

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/conform-spi/conform/internal/textsafe"
)

// Limits on how much store text one report shows. The JSON report keeps
// everything; the other formats cut.
const (
	// FieldMax is the most bytes of one text field (a message, an expected
	// or got value, a diff, a trail line) that the JUnit, Markdown and HTML
	// reports keep before they cut it with Clip.
	FieldMax = 4 << 10
	// OutputMax is the most bytes of a row's captured log that those reports
	// keep; they keep its end, where the failure is.
	OutputMax = 16 << 10
	// TrailMax is the most trail lines those reports keep; they keep the
	// last ones, which lead to the failure.
	TrailMax = 200
	// PayloadHead is how many bytes of a long payload Payload shows.
	PayloadHead = 64
)

// Clip returns s if it has at most max bytes. Otherwise it keeps the longest
// prefix of at most max bytes that does not split a UTF-8 sequence, and
// appends "… (N bytes cut)", N being the number of bytes dropped. A max of
// zero or less keeps nothing but the marker.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	if cut < 0 {
		cut = 0
	}
	for back := 0; cut > 0 && back < utf8.UTFMax && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes cut)", len(s)-cut)
}

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

// Payload formats payload bytes for a failure's got and expected values:
// valid UTF-8 made of printable characters (and \n, \r, \t) as a Go-quoted
// string, anything else as hex prefixed with 0x. Payloads longer than
// PayloadHead bytes show their first PayloadHead bytes (text cut on a
// character boundary) followed by "… (N bytes)", N being the full length.
// An empty or nil payload is "".
func Payload(b []byte) string {
	if isText(b) {
		head := b
		if len(b) > PayloadHead {
			cut := PayloadHead
			for !utf8.RuneStart(b[cut]) {
				cut--
			}
			head = b[:cut]
		}
		s := strconv.Quote(string(head))
		if len(head) < len(b) {
			s += fmt.Sprintf("… (%d bytes)", len(b))
		}
		return s
	}
	if len(b) > PayloadHead {
		return "0x" + hex.EncodeToString(b[:PayloadHead]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return "0x" + hex.EncodeToString(b)
}

// isText reports whether b is valid UTF-8 of printable characters and common
// whitespace.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r == '\n' || r == '\r' || r == '\t' {
			continue
		}
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// visible makes every control character of s visible (textsafe.Text):
// the result holds no byte below 0x20 except \n and \t.
func visible(s string) string { return textsafe.Text(s) }

// field is what every human-facing report does to one text field from the
// store: cut to FieldMax, then control characters made visible.
func field(s string) string { return visible(Clip(s, FieldMax)) }

// output is field for a row's captured log: its end, cut to OutputMax.
func output(s string) string { return visible(clipTail(s, OutputMax)) }

// trail returns the last TrailMax lines of a failure's trail, each a field,
// and how many earlier lines it dropped.
func trail(lines []string) (kept []string, dropped int) {
	if len(lines) > TrailMax {
		dropped = len(lines) - TrailMax
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
