// Package textsafe makes text from outside (a store's error, a directory
// name, a payload) safe to show in a terminal or a report: no control
// character, no bidirectional override and no invalid UTF-8 reaches the
// reader as itself.
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text returns s with every control character made visible as an escape:
// C0 controls other than \n and \t, DEL and C1 controls as \xNN or \u00NN,
// bidirectional controls as \uNNNN (so text cannot reorder what the reader
// sees), the noncharacters U+FFFE and U+FFFF (not allowed in XML) as
// \uNNNN, and each byte of invalid UTF-8 as \xNN. The result holds no byte
// below 0x20 except \n and \t.
func Text(s string) string { return escape(s, false) }

// Line is Text for one line of output: \n and \t are escaped too, so the
// result can never start a line of its own or forge a column.
func Line(s string) string { return escape(s, true) }

func escape(s string, line bool) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, n, line) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n' && line:
			b.WriteString(`\n`)
		case r == '\t' && line:
			b.WriteString(`\t`)
		case r < 0x80 && needsEscape(r, n, line):
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r, n, line):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsEscape reports whether the rune r, decoded with width n, must be
// escaped; line escapes \n and \t too.
func needsEscape(r rune, n int, line bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n' || r == '\t':
		return line
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f, r == 0xfffe, r == 0xffff:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
