package faults

import (
	"fmt"
	"strings"

	"github.com/conform-spi/conform/instore"
)

// The layers of the catalogue ("Fault layers" in the architecture).
const (
	// LayerInStore: a site the store calls from its own commit path
	// (instore.At).
	LayerInStore = "in-store"
	// LayerWrapper: a site of the wrapper Store around the store.
	LayerWrapper = "wrapper"
)

// Entry is one named failpoint of the catalogue.
type Entry struct {
	// Name is the short name the CLI takes, e.g. "commit-locked".
	Name string
	// Failpath is its name in pingcap/failpoint's registry, Name under
	// FailpathPrefix.
	Failpath string
	// Layer is LayerInStore or LayerWrapper.
	Layer string
	// Doc says where it acts, in one line.
	Doc string
	// Effects says what its terms can do, in one line.
	Effects string
	// Pass, for an in-store entry, is the pass of each commit at which its
	// terms apply (ArmTermsAtPass): ParseFailpointFlag sets it from
	// "name@pass=terms". It is AnyPass, every pass, in the catalogue and
	// for a wrapper entry.
	Pass int
}

// inStoreEffects is the effects line of every in-store entry.
const inStoreEffects = `return("crash") or return(true): the commit crashes there (instore.At returns instore.ErrCrashed); return(false): passes; sleep(ms): delays the commit; N*: counts; -> chains; name@P=terms: only at each commit's P-th pass of the site`

var catalogue = []Entry{
	{
		Name: string(instore.CommitLocked), Failpath: failpath(instore.CommitLocked), Layer: LayerInStore,
		Doc:     "inside a commit, after it has taken its locks or begun its transaction, before it checks anything",
		Effects: inStoreEffects,
	},
	{
		Name: string(instore.CommitBeforePoint), Failpath: failpath(instore.CommitBeforePoint), Layer: LayerInStore,
		Doc:     "inside a commit, just before its commit point (the moment after which the batch is visible)",
		Effects: inStoreEffects,
	},
	{
		Name: string(instore.CommitAfterPoint), Failpath: failpath(instore.CommitAfterPoint), Layer: LayerInStore,
		Doc:     "inside a commit, just after its commit point, before the store answers",
		Effects: inStoreEffects,
	},
	{
		Name: string(WrapCommitBeforeSend), Failpath: WrapCommitBeforeSend.Failpath(), Layer: LayerWrapper,
		Doc:     "around the store, before a commit is sent to it (the store never sees the batch)",
		Effects: `return("kill"): the process dies; return("unavailable"): answers Unavailable; return("indeterminate"): answers Indeterminate; sleep(ms): delays the send; N*: counts; -> chains`,
	},
	{
		Name: string(WrapCommitAfterAnswer), Failpath: WrapCommitAfterAnswer.Failpath(), Layer: LayerWrapper,
		Doc:     "around the store, after it answered a commit (the batch ran in the store)",
		Effects: `return("kill"): the process dies, the answer with it; return("indeterminate"): the answer is lost, the handle lives; sleep(ms): delays the answer; N*: counts; -> chains`,
	},
}

// Catalogue returns every named failpoint, one doc line each, in a stable
// order: the in-store sites in commit order, then the wrapper sites. The
// slice is the caller's.
func Catalogue() []Entry { return append([]Entry(nil), catalogue...) }

// Lookup finds an entry by Name (e.g. "commit-locked",
// "wrap/commit-before-send") or by Failpath.
func Lookup(name string) (Entry, bool) {
	for _, e := range catalogue {
		if e.Name == name || e.Failpath == name {
			return e, true
		}
	}
	return Entry{}, false
}

// names lists the catalogue's names, for messages.
func names() string {
	ns := make([]string, len(catalogue))
	for i, e := range catalogue {
		ns[i] = e.Name
	}
	return strings.Join(ns, ", ")
}

// ParseFailpointFlag parses "name=terms" or "name@pass=terms" as the
// CLI's --failpoint takes it: the name must be in the catalogue (by Name
// or Failpath) and the terms valid for it (ValidateTerms, and the return
// values its layer takes). A pass, a whole number from 1 up without
// leading zeros, is taken for an in-store entry only: the terms then apply
// only at each commit's pass-th pass of the site (ArmTermsAtPass), e.g.
// `commit-locked@2=1*return("crash")`. It returns the entry, with Pass
// set, and the terms; errors say which part is wrong.
func ParseFailpointFlag(s string) (Entry, string, error) {
	if err := checkText("--failpoint", s); err != nil {
		return Entry{}, "", err
	}
	name, terms, ok := strings.Cut(s, "=")
	if !ok {
		return Entry{}, "", fmt.Errorf("--failpoint %q: want name=terms, e.g. %s", s, `commit-locked=1*return("crash")`)
	}
	name, passText, hasPass := strings.Cut(name, "@")
	e, ok := Lookup(name)
	if !ok {
		return Entry{}, "", fmt.Errorf("--failpoint %q: unknown failpoint name %q; the catalogue has %s", s, name, names())
	}
	if hasPass {
		if e.Layer != LayerInStore {
			return Entry{}, "", fmt.Errorf("--failpoint %q: %s is a %s site; a pass (name@pass) is taken at in-store sites only", s, e.Name, e.Layer)
		}
		pass, err := parsePass(passText)
		if err != nil {
			return Entry{}, "", fmt.Errorf("--failpoint %q: %v", s, err)
		}
		e.Pass = pass
	}
	if err := validateFor(e, terms); err != nil {
		return Entry{}, "", fmt.Errorf("--failpoint %q: terms: %w", s, err)
	}
	return e, terms, nil
}

// validateFor checks terms for an entry without arming anything.
func validateFor(e Entry, terms string) error {
	switch e.Layer {
	case LayerInStore:
		_, _, err := parseInStoreTerms(terms)
		return err
	case LayerWrapper:
		_, _, err := parseWrapTerms(WrapSite(e.Name), terms)
		return err
	}
	return fmt.Errorf("failpoint %q: unknown layer %q", e.Name, e.Layer)
}

// Arm arms an entry of the catalogue with terms (ArmTermsAtPass at
// e.Pass for an in-store entry, ArmWrapTerms for a wrapper entry),
// replacing terms armed there, at that pass, before. It refuses an entry
// not in the catalogue, and a pass for a wrapper entry.
func (i *Injector) Arm(e Entry, terms string) error {
	known, ok := Lookup(e.Name)
	if !ok || known.Layer != e.Layer {
		return fmt.Errorf("failpoint %q: not in the catalogue", e.Name)
	}
	if e.Layer == LayerInStore {
		return i.ArmTermsAtPass(instore.Site(e.Name), e.Pass, terms)
	}
	if e.Pass != AnyPass {
		return fmt.Errorf("failpoint %q: a pass is taken at in-store sites only", e.Name)
	}
	return i.ArmWrapTerms(WrapSite(e.Name), terms)
}

// Disarm removes the terms Arm armed at e (at e.Pass); it does nothing
// when none are.
func (i *Injector) Disarm(e Entry) {
	switch e.Layer {
	case LayerInStore:
		i.DisarmTermsAtPass(instore.Site(e.Name), e.Pass)
	case LayerWrapper:
		i.DisarmWrapTerms(WrapSite(e.Name))
	}
}
