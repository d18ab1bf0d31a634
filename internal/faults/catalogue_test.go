package faults

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

func TestCatalogueEntries(t *testing.T) {
	cat := Catalogue()
	var want []string
	for _, s := range instore.Sites {
		want = append(want, string(s))
	}
	for _, s := range WrapSites {
		want = append(want, string(s))
	}
	if len(cat) != len(want) {
		t.Fatalf("catalogue has %d entries, want %d", len(cat), len(want))
	}
	for i, e := range cat {
		if e.Name != want[i] {
			t.Errorf("entry %d is %q, want %q (stable order: in-store sites in commit order, then wrapper sites)", i, e.Name, want[i])
		}
		if e.Failpath != FailpathPrefix+e.Name {
			t.Errorf("entry %q: failpath %q, want %q", e.Name, e.Failpath, FailpathPrefix+e.Name)
		}
		wantLayer := LayerInStore
		if i >= len(instore.Sites) {
			wantLayer = LayerWrapper
		}
		if e.Layer != wantLayer {
			t.Errorf("entry %q: layer %q, want %q", e.Name, e.Layer, wantLayer)
		}
		if e.Doc == "" || e.Effects == "" || strings.Contains(e.Doc, "\n") || strings.Contains(e.Effects, "\n") {
			t.Errorf("entry %q: want one doc line and one effects line, got %q / %q", e.Name, e.Doc, e.Effects)
		}
	}
	cat[0].Name = "changed"
	if Catalogue()[0].Name != string(instore.CommitLocked) {
		t.Fatal("changing Catalogue's answer changed the catalogue")
	}
}

func TestLookup(t *testing.T) {
	for _, e := range Catalogue() {
		for _, key := range []string{e.Name, e.Failpath} {
			got, ok := Lookup(key)
			if !ok || got != e {
				t.Errorf("Lookup(%q) = %+v, %v; want %q", key, got, ok, e.Name)
			}
		}
	}
	for _, key := range []string{"", "commit", "conform/", "conform/commit-nowhere", "wrap/commit"} {
		if _, ok := Lookup(key); ok {
			t.Errorf("Lookup(%q) found an entry", key)
		}
	}
}

func TestParseFailpointFlag(t *testing.T) {
	good := []struct{ flag, name, terms string }{
		{`commit-locked=1*return("crash")`, "commit-locked", `1*return("crash")`},
		{`conform/commit-after-point=sleep(5)`, "commit-after-point", `sleep(5)`},
		{`wrap/commit-before-send=return("unavailable")`, "wrap/commit-before-send", `return("unavailable")`},
		{`conform/wrap/commit-after-answer=2*off->return("kill")`, "wrap/commit-after-answer", `2*off->return("kill")`},
		{`commit-locked@2=1*return("crash")`, "commit-locked", `1*return("crash")`},
		{`conform/commit-after-point@17=sleep(5)`, "commit-after-point", `sleep(5)`},
	}
	for _, c := range good {
		e, terms, err := ParseFailpointFlag(c.flag)
		if err != nil || e.Name != c.name || terms != c.terms {
			t.Errorf("ParseFailpointFlag(%q) = %q, %q, %v; want %q, %q", c.flag, e.Name, terms, err, c.name, c.terms)
		}
		name, _, _ := strings.Cut(c.flag, "=")
		want := AnyPass
		if _, passText, ok := strings.Cut(name, "@"); ok {
			want, _ = strconv.Atoi(passText)
		}
		if e.Pass != want {
			t.Errorf("ParseFailpointFlag(%q): pass %d, want %d", c.flag, e.Pass, want)
		}
	}
	bad := []struct{ flag, want string }{
		{"commit-locked", "want name=terms"},
		{`commit-nowhere=return("crash")`, `unknown failpoint name "commit-nowhere"`},
		{`=return("crash")`, "unknown failpoint name"},
		{"commit-locked=", "terms: failpoint terms are empty"},
		{"commit-locked=50%return(true)", "terms:"},
		{"commit-locked=pause", "HoldAt"},
		{`commit-locked=return("kill")`, `"crash", true`},
		{`wrap/commit-before-send=return("crash")`, `"kill", "unavailable" or "indeterminate"`},
		{`wrap/commit-after-answer=return("unavailable")`, `"kill" or "indeterminate"`},
		{`commit-locked@=return("crash")`, `no pass after "@"`},
		{`commit-locked@0=return("crash")`, "from 1 up"},
		{`commit-locked@02=return("crash")`, "leading zeros"},
		{`commit-locked@-1=return("crash")`, "from 1 up"},
		{`commit-locked@two=return("crash")`, "from 1 up"},
		{`commit-locked@2@3=return("crash")`, "from 1 up"},
		{`commit-locked@99999999999999999999=return("crash")`, "out of range"},
		{`commit-nowhere@2=return("crash")`, `unknown failpoint name "commit-nowhere"`},
		{`wrap/commit-before-send@2=return("kill")`, "in-store sites only"},
		{`commit-locked@2=return("kill")`, `"crash", true`},
	}
	for _, c := range bad {
		_, _, err := ParseFailpointFlag(c.flag)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseFailpointFlag(%q) = %v, want an error containing %q", c.flag, err, c.want)
		}
	}
	if def.Armed() != 0 {
		t.Fatalf("parsing armed something: def.Armed() = %d", def.Armed())
	}
}

func TestArmDisarmInStore(t *testing.T) {
	e, terms, err := ParseFailpointFlag(`commit-before-point=1*return("crash")`)
	if err != nil {
		t.Fatal(err)
	}
	if err := def.Arm(e, terms); err != nil {
		t.Fatal(err)
	}
	if err := instore.At(ctx0, instore.CommitBeforePoint, "c1"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("At under an armed entry: %v, want instore.ErrCrashed", err)
	}
	def.Disarm(e)
	if n := def.Armed(); n != 0 {
		t.Fatalf("def.Armed() = %d after Disarm, want 0", n)
	}
}

// An entry parsed with a pass arms its terms at that pass only, beside the
// site's every-pass terms, and Disarm removes it alone.
func TestArmDisarmInStoreAtPass(t *testing.T) {
	e2, terms2, err := ParseFailpointFlag(`commit-locked@2=return("crash")`)
	if err != nil {
		t.Fatal(err)
	}
	e, terms, err := ParseFailpointFlag(`commit-locked=sleep(0)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		e     Entry
		terms string
	}{{e2, terms2}, {e, terms}} {
		if err := def.Arm(x.e, x.terms); err != nil {
			t.Fatal(err)
		}
	}
	if n := def.Armed(); n != 2 {
		t.Fatalf("def.Armed() = %d with commit-locked and commit-locked@2 armed, want 2", n)
	}
	if err := instore.At(ctx0, instore.CommitLocked, "c1"); err != nil {
		t.Fatalf("pass 1 under commit-locked@2: %v, want nil", err)
	}
	if err := instore.At(ctx0, instore.CommitLocked, "c1"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("pass 2 under commit-locked@2: %v, want instore.ErrCrashed", err)
	}
	def.Disarm(e2)
	if n := def.Armed(); n != 1 {
		t.Fatalf("def.Armed() = %d after disarming commit-locked@2, want 1", n)
	}
	def.Disarm(e)
	if n := def.Armed(); n != 0 {
		t.Fatalf("def.Armed() = %d after Disarm, want 0", n)
	}
	w, _ := Lookup(string(WrapCommitBeforeSend))
	w.Pass = 2
	if err := def.Arm(w, `return("kill")`); err == nil || !strings.Contains(err.Error(), "in-store sites only") {
		t.Fatalf("Arm of a wrapper entry with a pass = %v, want a refusal", err)
	}
	if n := def.Armed(); n != 0 {
		t.Fatalf("def.Armed() = %d after a refusal, want 0", n)
	}
}

func TestArmDisarmWrapper(t *testing.T) {
	e, terms, err := ParseFailpointFlag(`wrap/commit-before-send=return("unavailable")`)
	if err != nil {
		t.Fatal(err)
	}
	if err := def.Arm(e, terms); err != nil {
		t.Fatal(err)
	}
	s := def.Wrap(&fakeStore{})
	if err := s.Commit(ctx0, batch(t, "c1")); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Fatalf("commit under an armed wrapper entry: %v, want Unavailable", err)
	}
	def.Disarm(e)
	if err := s.Commit(ctx0, batch(t, "c2")); err != nil {
		t.Fatalf("commit after Disarm: %v, want nil", err)
	}
	if n := def.Armed(); n != 0 {
		t.Fatalf("def.Armed() = %d after Disarm, want 0", n)
	}
}

func TestArmRefuses(t *testing.T) {
	e, _ := Lookup(string(instore.CommitLocked))
	if err := def.Arm(e, `return("kill")`); err == nil {
		t.Error("Arm took a wrapper's return value at an in-store entry")
	}
	if err := def.Arm(Entry{Name: "commit-nowhere", Layer: LayerInStore}, "return(true)"); err == nil || !strings.Contains(err.Error(), "not in the catalogue") {
		t.Errorf("Arm of an unknown entry = %v, want a refusal", err)
	}
	if err := def.Arm(Entry{Name: string(instore.CommitLocked), Layer: LayerWrapper}, `return("kill")`); err == nil {
		t.Error("Arm took an entry whose layer is not the catalogue's")
	}
	def.Disarm(Entry{Name: "commit-nowhere", Layer: "elsewhere"})
	if n := def.Armed(); n != 0 {
		t.Fatalf("def.Armed() = %d after refusals, want 0", n)
	}
}
