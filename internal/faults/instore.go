package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pingcap/failpoint"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/hook"
)

// FailpathPrefix prefixes every failpath of conform's catalogue.
const FailpathPrefix = "conform/"

// The sites' failpaths, built once so that dispatching does not build a
// string.
var (
	pathLocked      = failpath(instore.CommitLocked)
	pathBeforePoint = failpath(instore.CommitBeforePoint)
	pathAfterPoint  = failpath(instore.CommitAfterPoint)
)

// failpath returns an in-store site's name in pingcap/failpoint's registry.
func failpath(s instore.Site) string { return FailpathPrefix + string(s) }

// sitePath returns the site's failpath, or false for a site not in
// instore.Sites.
func sitePath(s instore.Site) (string, bool) {
	switch s {
	case instore.CommitLocked:
		return pathLocked, true
	case instore.CommitBeforePoint:
		return pathBeforePoint, true
	case instore.CommitAfterPoint:
		return pathAfterPoint, true
	}
	return "", false
}

// armed counts the in-store holds, recorders and term sets. It changes
// only with reg held. While it is above zero, dispatchAt is in
// internal/hook's slot; at zero the slot is empty, which keeps instore.At
// to one atomic load, and the pass table is emptied.
var armed atomic.Int64

// Decision is what a hold's commit does when released.
type Decision int

const (
	// Proceed lets the commit go on.
	Proceed Decision = iota
	// Crash makes instore.At return an error wrapping instore.ErrCrashed.
	Crash
)

// Hold holds one matching commit at a site. Build it with HoldAt or
// HoldAtPass.
type Hold struct {
	site     instore.Site
	pass     int // the pass it takes, or AnyPass
	match    func(hoststore.CommitID) bool
	arrived  chan struct{}
	left     chan struct{} // closed once the held commit goes on from the site
	decided  chan struct{} // closed once decision is set
	decision Decision
	once     sync.Once
	taken    bool // a commit took the hold; guarded by reg
}

// Arrived is closed when the held commit reached the site and waits there.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Left is closed when the held commit went on from the site: released,
// crashed, or its context ended.
func (h *Hold) Left() <-chan struct{} { return h.left }

// Release lets the held commit go on (or, if it has not arrived yet, lets it
// pass without waiting when it does). Release and Crash are idempotent; the
// first decision wins.
func (h *Hold) Release() { h.decide(Proceed) }

// Crash makes the held commit crash at the site (or, if it has not arrived
// yet, crash when it does).
func (h *Hold) Crash() { h.decide(Crash) }

func (h *Hold) decide(d Decision) {
	h.once.Do(func() { h.decision = d; close(h.decided) })
}

// Site is where the hold waits.
func (h *Hold) Site() instore.Site { return h.site }

// Pass is the pass of a commit at Site that the hold takes: AnyPass for
// HoldAt, the pass given to HoldAtPass otherwise.
func (h *Hold) Pass() int { return h.pass }

// wait blocks the commit that took the hold until the harness decides or
// ctx ends.
func (h *Hold) wait(ctx context.Context, id hoststore.CommitID, pass int) error {
	defer beginHarnessWait()()
	defer close(h.left)
	close(h.arrived)
	select {
	case <-h.decided:
		if h.decision == Crash {
			return fmt.Errorf("%w: %s of commit %q (held, then crashed)", instore.ErrCrashed, Pass{h.site, pass}, id)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reg holds what is armed at each site. A site whose count goes from zero
// to one gets the dispatcher (failpoint.EnableCall); back at zero it is
// disabled. The dispatcher never blocks with reg or a library lock held,
// so arming and disarming stay free while commits are held. Term sets are
// kept by the pass they apply at (AnyPass for every pass).
var reg = struct {
	sync.Mutex
	holds map[instore.Site][]*Hold
	terms map[instore.Site]map[int]*termSet
}{holds: map[instore.Site][]*Hold{}, terms: map[instore.Site]map[int]*termSet{}}

// siteCountLocked counts what is armed at site; called with reg held.
func siteCountLocked(site instore.Site) int {
	return len(reg.holds[site]) + len(reg.terms[site])
}

// armOneLocked counts one more armed thing; called with reg held.
func armOneLocked() {
	if armed.Add(1) == 1 {
		hook.Set(dispatchAt)
	}
}

// dropOneLocked counts one less armed thing; called with reg held. At
// zero it empties the slot and the pass table.
func dropOneLocked() {
	if armed.Add(-1) == 0 {
		hook.Set(nil)
		forgetAllPasses()
	}
}

// addLocked counts one more armed thing at site; called with reg held.
func addLocked(site instore.Site) {
	if siteCountLocked(site) == 0 {
		p, _ := sitePath(site)
		if err := failpoint.EnableCall(p, dispatch); err != nil {
			panic(fmt.Sprintf("faults: enable %s: %v", p, err))
		}
	}
	armOneLocked()
}

// dropLocked counts one less armed thing at site, after it was removed
// from reg; called with reg held.
func dropLocked(site instore.Site) {
	dropOneLocked()
	if siteCountLocked(site) == 0 {
		p, _ := sitePath(site)
		mustDisable(p)
	}
}

// HoldAt arms a hold at site for the first commit whose id match accepts
// (nil matches any), at whichever pass of the site it is. The hold catches
// one commit; later ones pass. Call Release or Crash, then Disarm, when
// done. match runs with the registry locked: it must not call this
// package. HoldAt panics for a site not in instore.Sites (a hold there
// could never catch anything).
func HoldAt(site instore.Site, match func(hoststore.CommitID) bool) *Hold {
	return holdAt("HoldAt", site, AnyPass, match)
}

// HoldAtPass is HoldAt for one pass: the hold catches the first commit
// that match accepts when it reaches site for the pass-th time (pass 1 is
// its first time there; AnyPass, 0, is HoldAt). Passes before and after
// go on untouched, and match runs only at that pass. To crash a commit at
// its pass-th pass, Crash the hold before the commit arrives; Arrived is
// closed once it has crashed there. Passes are counted only while
// something in-store is armed, the hold included: see ForgetPasses for a
// commit id run again. HoldAtPass panics for a site not in instore.Sites
// or a negative pass.
func HoldAtPass(site instore.Site, pass int, match func(hoststore.CommitID) bool) *Hold {
	return holdAt("HoldAtPass", site, pass, match)
}

func holdAt(fn string, site instore.Site, pass int, match func(hoststore.CommitID) bool) *Hold {
	if _, ok := sitePath(site); !ok {
		panic(fmt.Sprintf("faults: %s: unknown site %q", fn, site))
	}
	if pass < 0 {
		panic(fmt.Sprintf("faults: %s: pass %d; passes count from 1 (AnyPass is 0)", fn, pass))
	}
	h := &Hold{site: site, pass: pass, match: match, arrived: make(chan struct{}), left: make(chan struct{}), decided: make(chan struct{})}
	reg.Lock()
	defer reg.Unlock()
	addLocked(site)
	reg.holds[site] = append(reg.holds[site], h)
	return h
}

// Disarm removes the hold from its site and releases a commit still held by
// it (as Proceed, unless Crash was decided first). It is idempotent.
func (h *Hold) Disarm() {
	h.Release()
	reg.Lock()
	defer reg.Unlock()
	hs := reg.holds[h.site]
	for i, x := range hs {
		if x == h {
			reg.holds[h.site] = append(hs[:i:i], hs[i+1:]...)
			dropLocked(h.site)
			return
		}
	}
}

// ArmTerms arms site with terms, e.g. `1*return("crash")` or `sleep(10)`,
// replacing the every-pass terms armed there before (with fresh counts).
// A return value of "crash" or true crashes, false passes; sleep delays
// the commit (ending early with its ctx). It refuses an unknown site and
// terms ValidateTerms refuses or whose return values are not those.
//
// The terms are evaluated at every call of the site, whatever the commit
// and its pass, and their counts run over all of them:
// `2*off->1*return("crash")` crashes the third call of the site, which is
// the second commit's first pass when each commit passes the site once,
// and the first commit's third pass when it passes three times.
func ArmTerms(site instore.Site, terms string) error {
	return ArmTermsAtPass(site, AnyPass, terms)
}

// ArmTermsAtPass is ArmTerms for one pass: the terms are evaluated only
// when a commit reaches site for the pass-th time (AnyPass, 0, is
// ArmTerms), and their counts run over those calls only:
// ArmTermsAtPass(CommitLocked, 2, `1*return("crash")`) crashes the first
// commit that reaches commit-locked twice, at its second pass, and no
// other call. It replaces the terms armed before at that site and pass;
// the terms of other passes stay. At a pass with terms of its own and
// every-pass terms, the pass's own are evaluated first, and an error from
// them ends the call. It refuses a negative pass.
func ArmTermsAtPass(site instore.Site, pass int, terms string) error {
	if _, ok := sitePath(site); !ok {
		return fmt.Errorf("failpoint %q: unknown in-store site; the sites are %v", site, instore.Sites)
	}
	if pass < 0 {
		return fmt.Errorf("failpoint %s: pass %d; passes count from 1 (AnyPass is 0)", site, pass)
	}
	chain, lib, err := parseInStoreTerms(terms)
	if err != nil {
		return fmt.Errorf("failpoint %s: %w", site, err)
	}
	reg.Lock()
	defer reg.Unlock()
	ts, err := armTermSet(failpath(site), terms, chain, lib)
	if err != nil {
		return err
	}
	if old := reg.terms[site][pass]; old != nil {
		old.disarm()
	} else {
		addLocked(site)
	}
	if reg.terms[site] == nil {
		reg.terms[site] = map[int]*termSet{}
	}
	reg.terms[site][pass] = ts
	return nil
}

// DisarmTerms removes the every-pass terms ArmTerms armed at site (terms
// armed at one pass stay); it does nothing when none are.
func DisarmTerms(site instore.Site) { DisarmTermsAtPass(site, AnyPass) }

// DisarmTermsAtPass removes the terms ArmTermsAtPass armed at site and
// pass; it does nothing when none are.
func DisarmTermsAtPass(site instore.Site, pass int) {
	reg.Lock()
	defer reg.Unlock()
	ts := reg.terms[site][pass]
	if ts == nil {
		return
	}
	delete(reg.terms[site], pass)
	if len(reg.terms[site]) == 0 {
		delete(reg.terms, site)
	}
	ts.disarm()
	dropLocked(site)
}

// ValidateTerms checks terms without arming anything: conform's subset of
// the pingcap/failpoint language (see the package doc), which the library
// must parse too. It returns an error that says what is wrong and where.
// It does not check return values, which depend on the site (ArmTerms,
// ArmWrapTerms and ParseFailpointFlag do).
func ValidateTerms(terms string) error {
	_, _, err := parseTerms(terms)
	return err
}

// parseInStoreTerms parses terms and checks their return values for an
// in-store site.
func parseInStoreTerms(terms string) ([]termAct, string, error) {
	chain, lib, err := parseTerms(terms)
	if err != nil {
		return nil, "", err
	}
	ok := func(v any) bool {
		switch x := v.(type) {
		case string:
			return x == "crash"
		case bool:
			return true
		}
		return false
	}
	if err := checkReturns(chain, ok, `"crash", true (crash) or false (pass)`); err != nil {
		return nil, "", fmt.Errorf("failpoint terms %q: %w", terms, err)
	}
	return chain, lib, nil
}

// atCall carries one instore.At call through failpoint.Call as a single
// pointer, so the armed path boxes nothing but it; atCalls are pooled.
type atCall struct {
	ctx  context.Context
	site instore.Site
	id   hoststore.CommitID
	pass int
	err  error
}

var atCalls = sync.Pool{New: func() any { return new(atCall) }}

// dispatchAt is the handler in internal/hook's slot while anything
// in-store is armed: instore.At calls it. It counts the commit's pass at
// the site (and records it), then calls the site's failpath, which is
// enabled with dispatch while anything is armed at that site; a site with
// nothing armed, or not in instore.Sites, returns nil.
func dispatchAt(ctx context.Context, name string, id hoststore.CommitID) error {
	site := instore.Site(name)
	i, ok := siteIndex(site)
	if !ok {
		return nil
	}
	pass := countPass(id, i, site)
	p, _ := sitePath(site)
	c := atCalls.Get().(*atCall)
	c.ctx, c.site, c.id, c.pass = ctx, site, id, pass
	failpoint.Call(p, c)
	err := c.err
	*c = atCall{}
	atCalls.Put(c)
	return err
}

// dispatch is the sites' failpoint.EnableCall function. It takes the first
// untaken hold that catches the commit at this pass, waits on it, then
// applies the terms armed for this pass, then the site's every-pass terms.
func dispatch(c *atCall) {
	hold, atPass, every := lookup(c.site, c.pass, c.id)
	if hold != nil {
		if c.err = hold.wait(c.ctx, c.id, c.pass); c.err != nil {
			return
		}
	}
	for _, ts := range [2]*termSet{atPass, every} {
		if ts != nil {
			if c.err = ts.inStore(c.ctx, Pass{c.site, c.pass}, c.id); c.err != nil {
				return
			}
		}
	}
}

// lookup takes the hold that catches commit id at its pass-th pass of
// site, if any, and returns the terms armed at that pass and the site's
// every-pass terms. The unlock is deferred: a matcher that panics must not
// leave the registry locked.
func lookup(site instore.Site, pass int, id hoststore.CommitID) (hold *Hold, atPass, every *termSet) {
	reg.Lock()
	defer reg.Unlock()
	if ts := reg.terms[site]; ts != nil {
		atPass, every = ts[pass], ts[AnyPass]
	}
	for _, h := range reg.holds[site] {
		if !h.taken && (h.pass == AnyPass || h.pass == pass) && (h.match == nil || h.match(id)) {
			h.taken = true
			return h, atPass, every
		}
	}
	return nil, atPass, every
}

// inStore evaluates in-store terms once for a commit at a pass of a site.
func (ts *termSet) inStore(ctx context.Context, at Pass, id hoststore.CommitID) error {
	t := ts.next()
	if t == nil {
		return nil
	}
	switch t.kind {
	case actSleep:
		return sleepCtx(ctx, t.sleep)
	case actReturn:
		if t.ret == "crash" || t.ret == true {
			return fmt.Errorf("%w: %s of commit %q (terms %q)", instore.ErrCrashed, at, id, ts.terms)
		}
	}
	return nil
}

// Armed counts what is armed in both layers' registries: in-store holds,
// recorders and term sets, and wrapper term sets. A row can check it is zero before
// and after an injection. Rules injected into a wrapper Store are that
// Store's own and are not counted.
func Armed() int { return int(armed.Load() + wrapArmed.Load()) }
