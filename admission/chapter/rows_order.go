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

		// Each fence exists beforehand, so a set that locked a fence before
		// its check would leave it locked in A, which stays alive.
		It("refuses a set that breaks the order before any lock is taken", Label("admission:order-refused"), func(ctx SpecContext) {
			a, b := c.start(ctx, "A", procOpts{}), c.start(ctx, "B", procOpts{})
			for _, name := range badOrderCases() {
				root, set := c.caseRoot(name)
				a.expect(ctx, "set "+name+" "+root, unavailable(admission.CauseOrder), "the set "+name)
				for _, f := range set {
					b.expect(ctx, "guard-try "+f.Dir(), held, "another process takes "+f.String()+" after A's refused set "+name)
					b.expect(ctx, "release", released, "B lets go")
				}
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
