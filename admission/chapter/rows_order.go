//go:build linux

package chapter

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/admission"
)

// orderRows: "An operation that takes more than one fence takes them in one
// global order ... a set that breaks either rule is refused with
// ADMISSION_FENCE_UNAVAILABLE before anything is locked", and "an id that
// is ., .. or more than one path component is refused".
func orderRows(c *Config) {
	Describe("The order of a set", func() {
		It("takes a set in the global order: U, C by realm id, R from the root out", Label("admission:order-taken"), func(ctx SpecContext) {
			root, set := c.caseRoot("ordered")
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			a.expect(ctx, "set ordered "+root, held, "the ordered set")
			for _, f := range set {
				b.expect(ctx, "hold-try "+f.Dir(), inProgress, "a hold of "+f.String()+" under the set's guard")
			}
			a.expect(ctx, "release", released, "the set lets go")
			for _, f := range set {
				b.expect(ctx, "hold-try "+f.Dir(), held, "a hold of "+f.String()+" once the set let go")
			}
		}, SpecTimeout(c.RowTimeout))

		// Each fence exists beforehand and B holds each while A tries the
		// set: a set checked only after (or while) it locks would meet B's
		// guard and answer in progress, not order. Once B lets go, A, which
		// stays alive, must hold none of them.
		It("refuses a set that breaks the order before any lock is taken", Label("admission:order-refused"), func(ctx SpecContext) {
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			for _, name := range badOrderCases() {
				root, set := c.caseRoot(name)
				dirs := fenceDirs(set)
				for _, d := range dirs {
					b.expect(ctx, "guard-try "+d, held, "B holds the fence in "+d)
				}
				a.expect(ctx, "set "+name+" "+root, unavailable(admission.CauseOrder), "the set "+name+" while B holds its fences")
				b.expect(ctx, "release", released, "B lets go")
				a.expect(ctx, "set "+name+" "+root, unavailable(admission.CauseOrder), "the set "+name+" with its fences free")
				for _, d := range dirs {
					b.expect(ctx, "guard-try "+d, held, "another process takes the fence in "+d+" after A's refused set "+name)
				}
				b.expect(ctx, "release", released, "B lets go")
			}
		}, SpecTimeout(c.RowTimeout))

		It("refuses realm ids that are not one path component", Label("admission:realm-ids"), func(ctx SpecContext) {
			root := c.dir()
			a := c.start(ctx, "A", procOpts{})
			for _, id := range []string{".", "..", "a/b", "/a", "a/", "../a"} {
				a.expect(ctx, "realm-guard "+root+" "+id, unavailable(admission.CauseRealmID), "the realm id "+id)
				_, err := admission.Layout{StateRoot: root}.RealmChain("ok", id)
				cause, _ := admission.CauseOf(err)
				Expect(cause).To(Equal(admission.CauseRealmID), "RealmChain(ok, %q) = %v", id, err)
			}
			_, err := admission.Layout{CredentialRoot: root}.Credential("")
			cause, _ := admission.CauseOf(err)
			Expect(cause).To(Equal(admission.CauseRealmID), "Credential(\"\") = %v", err)
			entries, err := os.ReadDir(root)
			Expect(err).NotTo(HaveOccurred())
			Expect(entries).To(BeEmpty(), "a refused id touched the layout")
		}, SpecTimeout(c.RowTimeout))
	})
}

// caseRoot makes a layout root for an order case with every realm's and
// document's directory, creates each fence of the case, and answers the
// case's set as built in this process.
func (c *Config) caseRoot(name string) (string, []admission.Fence) {
	GinkgoHelper()
	root := c.dir()
	l := layoutAt(root)
	Expect(os.MkdirAll(l.UserRoot, 0o755)).To(Succeed())
	for _, r := range caseRealms {
		Expect(os.MkdirAll(filepath.Join(l.CredentialRoot, admission.RealmsDir, r), 0o755)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(l.StateRoot, admission.RealmsDir, r), 0o755)).To(Succeed())
	}
	for _, d := range caseDocs {
		Expect(os.MkdirAll(filepath.Join(root, d), 0o755)).To(Succeed())
	}
	set, err := orderCases[name].build(l)
	Expect(err).NotTo(HaveOccurred(), "build the case %s", name)
	for _, f := range set {
		g, err := admission.Install{}.TryAcquireGuard(f)
		Expect(err).NotTo(HaveOccurred(), "create %s", f)
		Expect(g.Release()).To(Succeed())
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
