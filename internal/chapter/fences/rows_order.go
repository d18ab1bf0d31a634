//go:build linux

package fences

import (
	"os"
	"path/filepath"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/admission"
)

// The order rows: a set is taken in the global order, a set that breaks
// the order or grouping rules is refused before anything is locked, and a
// realm id must be one path component.

func rowOrderTaken(r *rowRun) {
	root, set := r.caseRoot("ordered")
	a, b := r.start("A", procOpts{}), r.start("B", procOpts{})
	a.expect(ObOrder, "set ordered "+root, held, "the ordered set")
	for _, f := range set {
		b.expect(ObExclusion, "hold-try "+f.Dir(), inProgress, "a hold of "+f.String()+" under the set's guard")
	}
	a.expect(ObExclusion, "release", released, "the set lets go")
	for _, f := range set {
		b.expect(ObExclusion, "hold-try "+f.Dir(), held, "a hold of "+f.String()+" once the set let go")
	}
}

// rowOrderRefused: each fence exists beforehand and B holds each while A
// tries the set: a set checked only after (or while) it locks would meet
// B's guard and answer in progress, not order. Once B lets go, A, which
// stays alive, must hold none of them.
func rowOrderRefused(r *rowRun) {
	a, b := r.start("A", procOpts{}), r.start("B", procOpts{})
	for _, name := range badOrderCases() {
		root, set := r.caseRoot(name)
		dirs := fenceDirs(set)
		for _, d := range dirs {
			b.expect(ObExclusion, "guard-try "+d, held, "B holds the fence in "+d)
		}
		a.expect(ObOrder, "set "+name+" "+root, unavailable(admission.CauseOrder), "the set "+name+" while B holds its fences")
		b.expect(ObExclusion, "release", released, "B lets go")
		a.expect(ObOrder, "set "+name+" "+root, unavailable(admission.CauseOrder), "the set "+name+" with its fences free")
		for _, d := range dirs {
			b.expect(ObRefusals, "guard-try "+d, held, "another process takes the fence in "+d+" after A's refused set "+name)
		}
		b.expect(ObExclusion, "release", released, "B lets go")
	}
}

// rowRealmIDs asks the helper for each bad id, and also checks the
// reference layout of package admission, which the chapter itself uses.
func rowRealmIDs(r *rowRun) {
	root := r.dir()
	a := r.start("A", procOpts{})
	for _, id := range []string{".", "..", "a/b", "/a", "a/", "../a"} {
		a.expect(ObRealmIDs, "realm-guard "+root+" "+id, unavailable(admission.CauseRealmID), "the realm id "+id)
		_, err := admission.Layout{StateRoot: root}.RealmChain("ok", id)
		cause, _ := admission.CauseOf(err)
		r.equal(ObRealmIDs, cause, admission.CauseRealmID, "the reference layout: RealmChain(ok, "+id+")")
	}
	_, err := admission.Layout{CredentialRoot: root}.Credential("")
	cause, _ := admission.CauseOf(err)
	r.equal(ObRealmIDs, cause, admission.CauseRealmID, "the reference layout: Credential(\"\")")
	entries, err := os.ReadDir(root)
	r.setup(err, "list the layout root")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	r.check(ObRealmIDs, len(names) == 0, "a refused id touched the layout", "an empty layout root", names)
}

// caseRoot makes a layout root for an order case with every realm's and
// document's directory, creates each fence of the case, and returns the
// case's set as built in this process.
func (r *rowRun) caseRoot(name string) (string, []admission.Fence) {
	spec.Helper()
	root := r.dir()
	l := layoutAt(root)
	r.setup(os.MkdirAll(l.UserRoot, 0o755), "make the user root")
	for _, realm := range caseRealms {
		r.setup(os.MkdirAll(filepath.Join(l.CredentialRoot, admission.RealmsDir, realm), 0o755), "make a realm directory")
		r.setup(os.MkdirAll(filepath.Join(l.StateRoot, admission.RealmsDir, realm), 0o755), "make a realm directory")
	}
	for _, d := range caseDocs {
		r.setup(os.MkdirAll(filepath.Join(root, d), 0o755), "make a document directory")
	}
	set, err := orderCases[name].build(l)
	r.setup(err, "build the case %s", name)
	for _, f := range set {
		g, err := admission.Install{}.TryAcquireGuard(f)
		r.setup(err, "create %s", f)
		r.setup(g.Release(), "release %s", f)
	}
	return root, set
}

// fenceDirs lists the directories of a set's fences, each once.
func fenceDirs(set []admission.Fence) []string {
	var dirs []string
	seen := map[string]bool{}
	for _, f := range set {
		if !seen[f.Dir()] {
			seen[f.Dir()] = true
			dirs = append(dirs, f.Dir())
		}
	}
	return dirs
}
