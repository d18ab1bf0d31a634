package harness

import (
	"reflect"
	"testing"
)

// FuzzParseRepro feeds repro strings to the parser: it never panics, and
// what it accepts renders back to a string that parses to the same repro.
func FuzzParseRepro(f *testing.F) {
	for _, s := range []string{
		"v1;seed=42;row=kill",
		"v1;seed=18446744073709551615;row=retry;fp=commit-locked%3D1%2Areturn%28%22crash%22%29;store=reference%3A",
		"v1;seed=1;fp=commit-locked%3Dreturn%28%22%FF%22%29",
		"v1;seed=1;store=%00",
		"v2;seed=1",
		"v1;;;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRepro(s)
		if err != nil {
			return
		}
		back, err := ParseRepro(r.String())
		if err != nil {
			t.Fatalf("ParseRepro(%q) = %+v, whose String %q does not parse: %v", s, r, r.String(), err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip of %q: %+v, then %+v", s, r, back)
		}
	})
}

// FuzzValidateLabelFilter feeds label filters to the validator, which
// must never panic.
func FuzzValidateLabelFilter(f *testing.F) {
	for _, s := range []string{"row:kill || ob:5", "!(chapter:host-store)", "((", "row:kil", "/re[/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = ValidateLabelFilter(s)
	})
}

func TestParseReproRefusesInvalidText(t *testing.T) {
	for _, s := range []string{
		"v1;seed=1;fp=commit-locked%3Dreturn%28%22%FF%22%29",
		"v1;seed=1;store=a%00b",
		"v1;seed=1;row=%1b%5b2J",
	} {
		if _, err := ParseRepro(s); err == nil {
			t.Errorf("ParseRepro(%q) accepted it", s)
		}
	}
}
