//go:build linux

package fences

import (
	"path/filepath"
	"sort"

	"github.com/conform-spi/conform/admission"
)

// orderCase is a set built from a layout, run by a helper's "set" command.
type orderCase struct {
	// valid: the set follows the order rules and is taken.
	valid bool
	build func(l admission.Layout) ([]admission.Fence, error)
}

// caseRealms are the realms whose directories a case's layout holds.
var caseRealms = []string{"a", "b", "B", "x", "y"}

// caseDocs are the document directories under a case's root.
var caseDocs = []string{"docs", "docs2"}

// fences builds a set step by step, keeping the first error.
type fences struct {
	l   admission.Layout
	set []admission.Fence
	err error
}

func (b *fences) c(realm string) *fences {
	f, err := b.l.Credential(realm)
	b.add(err, f)
	return b
}

func (b *fences) r(positions []int, chain ...string) *fences {
	fs, err := b.l.RealmChain(chain...)
	for _, p := range positions {
		if err == nil {
			b.set = append(b.set, fs[p])
		}
	}
	b.add(err)
	return b
}

func (b *fences) u() *fences { b.add(nil, b.l.User()); return b }

func (b *fences) doc(dir string) *fences {
	root := filepath.Dir(b.l.UserRoot)
	b.add(nil, admission.DocumentFence(filepath.Join(root, dir, "document")))
	return b
}

func (b *fences) add(err error, fs ...admission.Fence) {
	if b.err == nil {
		b.err = err
	}
	b.set = append(b.set, fs...)
}

func (b *fences) done() ([]admission.Fence, error) { return b.set, b.err }

func build(steps func(*fences) *fences) func(admission.Layout) ([]admission.Fence, error) {
	return func(l admission.Layout) ([]admission.Fence, error) { return steps(&fences{l: l}).done() }
}

// orderCases are the sets the order rows take: one valid set in the global
// order, and one set for each way to break the rules.
var orderCases = map[string]orderCase{
	"ordered": {valid: true, build: build(func(b *fences) *fences {
		return b.u().c("B").c("a").c("b").r([]int{0, 1}, "x", "y")
	})},
	"c-out-of-byte-order": {build: build(func(b *fences) *fences { return b.c("a").c("B") })},
	"c-twice":             {build: build(func(b *fences) *fences { return b.c("a").c("a") })},
	"u-after-c":           {build: build(func(b *fences) *fences { return b.c("a").u() })},
	"r-head-before-root":  {build: build(func(b *fences) *fences { return b.r([]int{1, 0}, "x", "y") })},
	"r-before-c":          {build: build(func(b *fences) *fences { return b.r([]int{0}, "x").c("a") })},
	"r-of-two-chains":     {build: build(func(b *fences) *fences { return b.r([]int{0}, "x").r([]int{0}, "y") })},
	"document-beside-r":   {build: build(func(b *fences) *fences { return b.r([]int{0}, "x").doc("docs") })},
	"two-documents":       {build: build(func(b *fences) *fences { return b.doc("docs").doc("docs2") })},
}

// badOrderCases lists the names of the invalid cases, sorted.
func badOrderCases() []string {
	var names []string
	for name, c := range orderCases {
		if !c.valid {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
