package admission_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/conform-spi/conform/admission"
)

func TestRealmDirRefusesIDsThatAreNotOneComponent(t *testing.T) {
	for _, id := range []string{"", ".", "..", "a/b", "/a", "a/", "../x", "./a", strings.Repeat("a", 256), strings.Repeat(" ", 86)} {
		name, err := admission.RealmDir(id)
		if c, ok := admission.CauseOf(err); !ok || c != admission.CauseRealmID {
			t.Errorf("RealmDir(%q) = %q, %v; want a realm-id refusal", id, name, err)
		}
	}
}

func TestRealmDirSanitizesIntoDistinctNames(t *testing.T) {
	cases := map[string]string{
		"ops":                    "ops",
		".hidden":                ".hidden",
		"...":                    "...",
		"a b":                    "a%20b",
		"a%20b":                  "a%2520b",
		"%":                      "%25",
		"é":                      "%C3%A9",
		"a\x00b":                 "a%00b",
		"Team_1-x":               "Team_1-x",
		strings.Repeat("a", 255): strings.Repeat("a", 255),
	}
	seen := map[string]string{}
	for id, want := range cases {
		got, err := admission.RealmDir(id)
		if err != nil || got != want {
			t.Errorf("RealmDir(%q) = %q, %v; want %q", id, got, err, want)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("RealmDir(%q) and RealmDir(%q) both give %q", id, other, got)
		}
		seen[got] = id
	}
}

func TestLayoutPlacesFences(t *testing.T) {
	l := admission.Layout{UserRoot: "/u", CredentialRoot: "/c", StateRoot: "/s"}
	if got := l.User().Path(); got != "/u/admission.lock" {
		t.Errorf("User().Path() = %q", got)
	}
	c, err := l.Credential("a b")
	if err != nil || c.Path() != "/c/realms/a%20b/admission.lock" || c.Kind() != admission.KindCredential || c.Realm() != "a b" {
		t.Errorf("Credential(%q) = %v, %v", "a b", c, err)
	}
	chain, err := l.RealmChain("root", "mid", "head")
	if err != nil {
		t.Fatalf("RealmChain: %v", err)
	}
	for i, want := range []string{"root", "mid", "head"} {
		f := chain[i]
		if f.Position() != i || f.Realm() != want || f.Path() != filepath.Join("/s/realms", want, "admission.lock") {
			t.Errorf("chain[%d] = %v, position %d; want %s at position %d", i, f, f.Position(), want, i)
		}
	}
	if d := admission.DocumentFence("/x/y/doc.json"); d.Path() != "/x/y/admission.lock" || d.Position() != -1 {
		t.Errorf("DocumentFence = %v", d)
	}
}

func TestLayoutRefusesBadIDsAndChains(t *testing.T) {
	l := admission.Layout{UserRoot: "/u", CredentialRoot: "/c", StateRoot: "/s"}
	if _, err := l.Credential(".."); !hasCause(err, admission.CauseRealmID) {
		t.Errorf("Credential(..) = %v; want realm-id", err)
	}
	if _, err := l.RealmChain("ok", "a/b"); !hasCause(err, admission.CauseRealmID) {
		t.Errorf("RealmChain(ok, a/b) = %v; want realm-id", err)
	}
	if _, err := l.RealmChain("x", "y", "x"); !hasCause(err, admission.CauseOrder) {
		t.Errorf("RealmChain(x, y, x) = %v; want order", err)
	}
	if _, err := l.RealmChain(); !hasCause(err, admission.CauseOrder) {
		t.Errorf("RealmChain() = %v; want order", err)
	}
}

func TestCauseNamesRoundTrip(t *testing.T) {
	for c := admission.CauseOrder; c <= admission.CauseIO; c++ {
		back, ok := admission.ParseCause(c.String())
		if !ok || back != c {
			t.Errorf("ParseCause(%q) = %v, %v; want %v", c.String(), back, ok, c)
		}
	}
	if _, ok := admission.ParseCause("nonsense"); ok {
		t.Error("ParseCause(nonsense) succeeded")
	}
}

func hasCause(err error, want admission.Cause) bool {
	c, ok := admission.CauseOf(err)
	return ok && c == want
}
