package admission_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/conform-spi/conform/admission"
)

// layoutIn makes a layout under a fresh directory, with the directories of
// the given C and R realms and a documents directory.
func layoutIn(t *testing.T, realms ...string) (admission.Layout, string) {
	t.Helper()
	root := t.TempDir()
	l := admission.Layout{
		UserRoot:       filepath.Join(root, "user"),
		CredentialRoot: filepath.Join(root, "cred"),
		StateRoot:      filepath.Join(root, "state"),
	}
	dirs := []string{l.UserRoot, filepath.Join(root, "docs"), filepath.Join(root, "docs2")}
	for _, r := range realms {
		name, err := admission.RealmDir(r)
		if err != nil {
			t.Fatalf("RealmDir(%q): %v", r, err)
		}
		dirs = append(dirs, filepath.Join(l.CredentialRoot, "realms", name), filepath.Join(l.StateRoot, "realms", name))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return l, root
}

func mustC(t *testing.T, l admission.Layout, realm string) admission.Fence {
	t.Helper()
	f, err := l.Credential(realm)
	if err != nil {
		t.Fatalf("Credential(%q): %v", realm, err)
	}
	return f
}

func mustChain(t *testing.T, l admission.Layout, realms ...string) []admission.Fence {
	t.Helper()
	c, err := l.RealmChain(realms...)
	if err != nil {
		t.Fatalf("RealmChain(%q): %v", realms, err)
	}
	return c
}

func TestOrderAcceptsTheGlobalOrder(t *testing.T) {
	l, root := layoutIn(t, "a", "b", "B", "z", "é", "x", "y", "w")
	chain := mustChain(t, l, "x", "y", "w")
	sets := map[string][]admission.Fence{
		"U alone":                {l.User()},
		"U, C by id, R root out": {l.User(), mustC(t, l, "a"), mustC(t, l, "b"), chain[0], chain[1], chain[2]},
		"C by bytes: B before a": {mustC(t, l, "B"), mustC(t, l, "a")},
		"C by bytes: z before é": {mustC(t, l, "z"), mustC(t, l, "é")},
		"part of one chain":      {chain[0], chain[2]},
		"a document alone":       {admission.DocumentFence(filepath.Join(root, "docs", "d.json"))},
	}
	for name, set := range sets {
		g, err := admission.Install{}.TryAcquireGuard(set...)
		if err != nil {
			t.Errorf("%s: TryAcquireGuard = %v; want held", name, err)
			continue
		}
		if err := g.Release(); err != nil {
			t.Errorf("%s: Release: %v", name, err)
		}
	}
}

func TestOrderRefusesBeforeAnythingIsTouched(t *testing.T) {
	l, root := layoutIn(t, "a", "b", "B", "x", "y")
	chain := mustChain(t, l, "x", "y")
	other := mustChain(t, l, "b")
	doc := admission.DocumentFence(filepath.Join(root, "docs", "d.json"))
	doc2 := admission.DocumentFence(filepath.Join(root, "docs2", "d.json"))
	sets := map[string][]admission.Fence{
		"empty":                    {},
		"a zero fence":             {{}},
		"C out of byte order":      {mustC(t, l, "a"), mustC(t, l, "B")},
		"C twice":                  {mustC(t, l, "a"), mustC(t, l, "a")},
		"U after C":                {mustC(t, l, "a"), l.User()},
		"U twice":                  {l.User(), l.User()},
		"R head before root":       {chain[1], chain[0]},
		"R twice":                  {chain[0], chain[0]},
		"R before C":               {chain[0], mustC(t, l, "a")},
		"R of two chains":          {chain[0], other[0]},
		"a document beside U":      {l.User(), doc},
		"a document beside R":      {chain[1], doc},
		"a document before C":      {doc, mustC(t, l, "a")},
		"two documents":            {doc, doc2},
		"the same document twice":  {doc, doc},
		"a chain of the same path": {other[0], mustChain(t, l, "b")[0]},
	}
	for name, set := range sets {
		for _, take := range []struct {
			mode string
			try  func(...admission.Fence) error
		}{
			{"guard", func(s ...admission.Fence) error { _, err := admission.Install{}.TryAcquireGuard(s...); return err }},
			{"hold", func(s ...admission.Fence) error { _, err := admission.Install{}.AcquireHold(0, s...); return err }},
		} {
			if err := take.try(set...); !hasCause(err, admission.CauseOrder) {
				t.Errorf("%s %s = %v; want an order refusal", name, take.mode, err)
			}
		}
	}
	if n := countFences(t, root); n != 0 {
		t.Errorf("%d fence files exist after refusals; want none touched", n)
	}
}

func countFences(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == admission.FenceFile {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
