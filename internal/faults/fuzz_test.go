package faults

import (
	"strconv"
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
		`conform/commit-locked=return(true)`,
		`commit-locked@2=return("crash")`,
		`conform/commit-after-point@3=1*return("crash")`,
		`commit-locked@0=return("crash")`,
		`commit-locked@02=return("crash")`,
		`commit-locked@-1=return("crash")`,
		`commit-locked@=return("crash")`,
		`commit-locked@99999999999999999999=return("crash")`,
		`commit-locked@2@3=return("crash")`,
		`wrap/commit-before-send@2=return("kill")`,
		`commit-locked=return("a@2")`,
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
		// The name, by Name or Failpath, then "@pass" written the one way
		// it may be, then the terms.
		name, _, _ := strings.Cut(s, "=")
		base, passText, hasPass := strings.Cut(name, "@")
		if (base != e.Name && base != e.Failpath) || terms != s[len(name)+1:] {
			t.Fatalf("ParseFailpointFlag(%q) = %q, %q", s, e.Name, terms)
		}
		if hasPass != (e.Pass != AnyPass) || (hasPass && (e.Pass < 1 || passText != strconv.Itoa(e.Pass) || e.Layer != LayerInStore)) {
			t.Fatalf("ParseFailpointFlag(%q) = %s pass %d (layer %s)", s, e.Name, e.Pass, e.Layer)
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
