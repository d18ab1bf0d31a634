package hoststore_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// identCase is one row of the identifier tables: an input and the substring
// its refusal must contain, or "" when it must pass.
type identCase struct {
	name    string
	in      string
	wantErr string
}

// identCases builds the rows shared by scope names and commit ids
// (docs/host-store-contract.md#limits: 1 to max bytes of valid UTF-8 with
// no control character). what is how the error names the identifier.
func identCases(what string, max int) []identCase {
	over := "over the limit of " + strconv.Itoa(max)
	ctl := what + " has a control character "
	utf := what + " is not valid UTF-8"
	return []identCase{
		{"empty", "", what + " is empty"},
		{"one byte", "a", ""},
		{"exactly max ASCII", strings.Repeat("a", max), ""},
		{"max+1 ASCII", strings.Repeat("a", max+1), over},
		{"exactly max of 2-byte runes", strings.Repeat("é", max/2), ""},
		{"max+1 of 2-byte runes and one ASCII", strings.Repeat("é", max/2) + "a", over},
		{"3-byte rune straddling max", strings.Repeat("a", max-2) + "€", over},
		{"3-byte rune ending at max", strings.Repeat("a", max-3) + "€", ""},
		{"4-byte rune ending at max", strings.Repeat("a", max-4) + "😀", ""},
		{"C0 NUL", "a\x00b", ctl + "U+0000"},
		{"C0 unit separator", "a\x1fb", ctl + "U+001F"},
		{"C0 tab", "a\tb", ctl + "U+0009"},
		{"C0 newline", "a\nb", ctl + "U+000A"},
		{"C0 leading", "\x01ab", ctl + "U+0001 at byte 0"},
		{"DEL", "a\x7f", ctl + "U+007F at byte 1"},
		{"C1 NEL U+0085", "a\u0085b", ctl + "U+0085"},
		{"C1 APC U+009F", "ab\u009f", ctl + "U+009F at byte 2"},
		{"invalid byte 0xff", "a\xffb", utf + " at byte 1"},
		{"truncated 2-byte sequence", "ab\xc3", utf + " at byte 2"},
		{"truncated 3-byte sequence", "\xe2\x82", utf + " at byte 0"},
		{"encoded surrogate", "a\xed\xa0\x80", utf + " at byte 1"},
		{"overlong NUL", "\xc0\x80", utf + " at byte 0"},
		{"space and punctuation", "a b/c:d.e-f_g", ""},
		{"non-ASCII", "sessión/日本語/😀", ""},
		{"literal U+FFFD is valid UTF-8", "a\uFFFDb", ""},
		{"only U+FFFD", "\uFFFD", ""},
		{"non-character U+FFFF is not a control", "a\uFFFF", ""},
		{"format character U+200B is not a control", "a\u200bb", ""},
	}
}

func TestParseScopeName(t *testing.T) {
	for _, tc := range identCases("scope name", hoststore.MaxScopeNameBytes) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hoststore.ParseScopeName(tc.in)
			checkIdent(t, "ParseScopeName", tc, string(got), err)
			if verr := hoststore.ScopeName(tc.in).Validate(); (verr == nil) != (err == nil) {
				t.Errorf("ScopeName(%q).Validate() = %v, but ParseScopeName said %v", tc.in, verr, err)
			}
		})
	}
}

func TestParseCommitID(t *testing.T) {
	for _, tc := range identCases("commit id", hoststore.MaxCommitIDBytes) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hoststore.ParseCommitID(tc.in)
			checkIdent(t, "ParseCommitID", tc, string(got), err)
			if verr := hoststore.CommitID(tc.in).Validate(); (verr == nil) != (err == nil) {
				t.Errorf("CommitID(%q).Validate() = %v, but ParseCommitID said %v", tc.in, verr, err)
			}
		})
	}
}

func checkIdent(t *testing.T, fn string, tc identCase, got string, err error) {
	t.Helper()
	if tc.wantErr == "" {
		if err != nil {
			t.Fatalf("%s(%q) = %v, want it accepted", fn, tc.in, err)
		}
		if got != tc.in {
			t.Fatalf("%s(%q) = %q, want the input back", fn, tc.in, got)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s(%q) accepted it, want an error containing %q", fn, tc.in, tc.wantErr)
	}
	if !strings.Contains(err.Error(), tc.wantErr) {
		t.Fatalf("%s(%q) = %q, want it to contain %q", fn, tc.in, err, tc.wantErr)
	}
	if got != "" {
		t.Fatalf("%s(%q) refused it but answered %q, want the zero value", fn, tc.in, got)
	}
}

func TestScopeNameAndCommitIDLimitsDiffer(t *testing.T) {
	s := strings.Repeat("a", hoststore.MaxCommitIDBytes+1)
	if _, err := hoststore.ParseScopeName(s); err != nil {
		t.Errorf("ParseScopeName of %d bytes = %v, want it accepted", len(s), err)
	}
	if _, err := hoststore.ParseCommitID(s); err == nil {
		t.Errorf("ParseCommitID of %d bytes accepted it, want the 128-byte limit", len(s))
	}
}

func TestScopeKindStringRoundTrip(t *testing.T) {
	want := map[hoststore.ScopeKind]string{
		hoststore.KindSession:  "Session",
		hoststore.KindIdentity: "Identity",
		hoststore.KindMob:      "Mob",
		hoststore.KindRecord:   "Record",
	}
	if len(hoststore.AllKinds) != 4 {
		t.Fatalf("AllKinds has %d kinds, want 4", len(hoststore.AllKinds))
	}
	for i, k := range hoststore.AllKinds {
		if int(k) != i+1 {
			t.Errorf("AllKinds[%d] = %d, want %d (numeric order from 1)", i, k, i+1)
		}
		if !k.Valid() {
			t.Errorf("%v.Valid() = false, want true", k)
		}
		if got := k.String(); got != want[k] {
			t.Errorf("ScopeKind(%d).String() = %q, want %q", k, got, want[k])
		}
		back, err := hoststore.ParseScopeKind(k.String())
		if err != nil || back != k {
			t.Errorf("ParseScopeKind(%q) = %v, %v, want %v, nil", k.String(), back, err, k)
		}
	}
	for _, k := range []hoststore.ScopeKind{0, 5, 255} {
		if k.Valid() {
			t.Errorf("ScopeKind(%d).Valid() = true, want false", k)
		}
		wantS := "ScopeKind(" + strconv.Itoa(int(k)) + ")"
		if got := k.String(); got != wantS {
			t.Errorf("ScopeKind(%d).String() = %q, want %q", k, got, wantS)
		}
	}
	for _, s := range []string{"", "session", "SESSION", "Session ", "ScopeKind(0)", "ScopeKind(5)"} {
		k, err := hoststore.ParseScopeKind(s)
		if err == nil {
			t.Errorf("ParseScopeKind(%q) = %v, want an error", s, k)
		} else if !strings.Contains(err.Error(), "unknown scope kind") {
			t.Errorf("ParseScopeKind(%q) = %q, want it to name an unknown scope kind", s, err)
		}
	}
}

func TestAcquireModeString(t *testing.T) {
	for m, want := range map[hoststore.AcquireMode]string{
		hoststore.Exclusive: "Exclusive",
		hoststore.Takeover:  "Takeover",
		2:                   "AcquireMode(2)",
	} {
		if got := m.String(); got != want {
			t.Errorf("AcquireMode(%d).String() = %q, want %q", m, got, want)
		}
	}
	if hoststore.Exclusive != 0 {
		t.Errorf("Exclusive = %d, want the zero value", hoststore.Exclusive)
	}
}

func TestScopeRef(t *testing.T) {
	r := hoststore.ScopeRef{Kind: hoststore.KindMob, Name: "a\"b"}
	if got, want := r.String(), `Mob/"a\"b"`; got != want {
		t.Errorf("ScopeRef.String() = %q, want %q", got, want)
	}
	tests := []struct {
		ref     hoststore.ScopeRef
		wantErr string
	}{
		{hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"}, ""},
		{hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "s"}, ""},
		{hoststore.ScopeRef{Kind: 0, Name: "s"}, "scope kind 0 is not a kind"},
		{hoststore.ScopeRef{Kind: 5, Name: "s"}, "scope kind 5 is not a kind"},
		{hoststore.ScopeRef{Kind: hoststore.KindMob, Name: ""}, "scope name is empty"},
	}
	for _, tc := range tests {
		checkErr(t, "ScopeRef("+tc.ref.String()+").Validate()", tc.ref.Validate(), tc.wantErr)
	}
}

// checkErr fails t unless err is nil when wantErr is "", or contains wantErr.
func checkErr(t *testing.T, call string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s = %q, want nil", call, err)
	case wantErr != "" && err == nil:
		t.Errorf("%s = nil, want an error containing %q", call, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%s = %q, want it to contain %q", call, err, wantErr)
	}
}

func TestVersionedHeadCloneSharesNothing(t *testing.T) {
	h := hoststore.VersionedHead{Version: 2, CommitID: "c", Head: []byte("head")}
	c := h.Clone()
	if c.Version != 2 || c.CommitID != "c" || string(c.Head) != "head" {
		t.Fatalf("Clone() = %+v, want %+v", c, h)
	}
	c.Head[0] = 'X'
	if string(h.Head) != "head" {
		t.Fatalf("mutating the clone changed the original head to %q", h.Head)
	}
	if n := (hoststore.VersionedHead{}).Clone(); n.Head != nil {
		t.Fatalf("Clone() of a nil head = %v, want nil", n.Head)
	}
}
