package textsafe

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// payloadHead is how many bytes of a long payload Payload shows.
const payloadHead = 64

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

// Payload formats payload bytes for a failure's got and expected values:
// valid UTF-8 made of printable characters (and \n, \r, \t) as a Go-quoted
// string, anything else as hex prefixed with 0x. Payloads longer than
// payloadHead bytes show their first payloadHead bytes (text cut on a
// character boundary) followed by "… (N bytes)", N being the full length.
// An empty or nil payload is "".
func Payload(b []byte) string {
	if isText(b) {
		head := b
		if len(b) > payloadHead {
			cut := payloadHead
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
	if len(b) > payloadHead {
		return "0x" + hex.EncodeToString(b[:payloadHead]) + fmt.Sprintf("… (%d bytes)", len(b))
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
