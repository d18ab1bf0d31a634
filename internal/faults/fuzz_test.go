package faults

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseFailpointFlag feeds --failpoint arguments to the parser: it
// must never panic (pingcap/failpoint's own parser panics on some input),
// and what it accepts is valid UTF-8 that parses again the same way.
func FuzzParseFailpointFlag(f *testing.F) {
	for _, s := range []string{
		`commit-locked=1*return("crash")`,
		`commit-locked=return("\xff")`,
		`commit-before-point=sleep(9223372036855)`,
		`commit-after-point=2*off->1*return("crash")`,
		`wrap/commit-before-send=1*return("kill")`,
		`commit-locked=sleep("10ms")`,
		`commit-locked=50%return("crash")`,
		`commit-locked=pause`,
		`x=`,
		`=`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, terms, err := ParseFailpointFlag(s)
		if err != nil {
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("accepted invalid UTF-8 %q", s)
		}
		if !strings.HasPrefix(s, e.Name+"=") || terms != s[len(e.Name)+1:] {
			t.Fatalf("ParseFailpointFlag(%q) = %q, %q", s, e.Name, terms)
		}
		if err := validateFor(e, terms); err != nil {
			t.Fatalf("accepted %q, which does not validate again: %v", s, err)
		}
	})
}

func TestParseRefusesWhatWouldPanicOrWrap(t *testing.T) {
	for _, s := range []string{
		"commit-locked=return(\"\xff\")",
		"commit-locked=sleep(9223372036855)",
		`commit-locked=sleep("1000000h")`,
		"commit-locked=return(\"a\x1bb\")",
		"commit-locked=1*return(\"" + strings.Repeat("a", MaxTermsBytes) + "\")",
	} {
		if _, _, err := ParseFailpointFlag(s); err == nil {
			t.Errorf("ParseFailpointFlag(%q) accepted it", s)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseFailpointFlag(%q): a multi-line error %q", s, err)
		}
	}
	if _, _, err := ParseFailpointFlag(`commit-locked=sleep(3600000)`); err != nil {
		t.Errorf("the longest sleep was refused: %v", err)
	}
}
