package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ntext\tok": "plain\ntext\tok",
		"\x1b[31mred":     `\x1b[31mred`,
		"nul\x00 del\x7f": `nul\x00 del\x7f`,
		"c1\u0085":        `c1\u0085`,
		"bad\xff\xfe":     `bad\xff\xfe`,
		"cr\r":            `cr\r`,
		"rtl\u202eevil":   `rtl\u202eevil`,
		"é 日本 ok":         "é 日本 ok",
		"nonchar\uffff":   `nonchar\uffff`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLineEscapesNewlinesAndTabs(t *testing.T) {
	in := "dir\n\tCONFORMANT\t0 rows"
	got := Line(in)
	if want := `dir\n\tCONFORMANT\t0 rows`; got != want {
		t.Errorf("Line(%q) = %q, want %q", in, got, want)
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[2J", "\xff", "\u202e", "tab\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Line(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("Line(%q) = %q keeps %U", s, got, r)
			}
		}
		if Text(s) == s && !strings.ContainsAny(s, "\n\t") && got != s {
			t.Fatalf("Line changed %q, which Text keeps and has no newline or tab", s)
		}
	})
}
