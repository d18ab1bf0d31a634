package faults

import (
	"context"
	"fmt"
	"sync"

	"github.com/pingcap/failpoint"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
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
	inj      *Injector
	site     instore.Site
	pass     int // the pass it takes, or AnyPass
	match    func(hoststore.CommitID) bool
	arrived  chan struct{}
	left     chan struct{} // closed once the held commit goes on from the site
	decided  chan struct{} // closed once decision is set
	decision Decision
	once     sync.Once
	taken    bool // a commit took the hold; guarded by inj.reg
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
	defer h.inj.clock.begin()()
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

// sites counts, for each in-store site, the injectors with something
// armed there. A site's failpath is enabled with dispatch
// (failpoint.EnableCall) while its count is above zero: pingcap/failpoint's
// registry is the process's, so the injectors share the three failpaths,
// and each call carries the injector it dispatches to (atCall.inj).
var sites struct {
	sync.Mutex
	n [3]int
}

// enableSite counts one more injector with something armed at site.
func enableSite(site instore.Site) {
	i, _ := siteIndex(site)
	sites.Lock()
	defer sites.Unlock()
	sites.n[i]++
	if sites.n[i] == 1 {
		p, _ := sitePath(site)
		if err := failpoint.EnableCall(p, dispatch); err != nil {
			panic(fmt.Sprintf("faults: enable %s: %v", p, err))
		}
	}
}

// disableSite counts one less injector with something armed at site.
func disableSite(site instore.Site) {
	i, _ := siteIndex(site)
	sites.Lock()
	defer sites.Unlock()
	sites.n[i]--
	if sites.n[i] == 0 {
		p, _ := sitePath(site)
		mustDisable(p)
	}
}

// siteCountLocked counts what is armed at site; called with reg held.
func (i *Injector) siteCountLocked(site instore.Site) int {
	return len(i.reg.holds[site]) + len(i.reg.terms[site])
}

// armOneLocked counts one more armed thing; called with reg held.
func (i *Injector) armOneLocked() {
	armedAll.Add(1)
	if i.armed.Add(1) == 1 {
		i.activate()
	}
}

// dropOneLocked counts one less armed thing; called with reg held. At
// zero it deactivates the injector and empties its pass table.
func (i *Injector) dropOneLocked() {
	armedAll.Add(-1)
	if i.armed.Add(-1) == 0 {
		i.deactivate()
		i.passes.forgetAll()
	}
}

// addLocked counts one more armed thing at site; called with reg held.
func (i *Injector) addLocked(site instore.Site) {
	if i.siteCountLocked(site) == 0 {
		enableSite(site)
	}
	i.armOneLocked()
}

// dropLocked counts one less armed thing at site, after it was removed
// from reg; called with reg held.
func (i *Injector) dropLocked(site instore.Site) {
	i.dropOneLocked()
	if i.siteCountLocked(site) == 0 {
		disableSite(site)
	}
}

// HoldAt arms a hold at site for the first commit whose id match accepts
// (nil matches any), at whichever pass of the site it is. The hold catches
// one commit; later ones pass. Call Release or Crash, then Disarm, when
// done. match runs with the registry locked: it must not call this
// package. HoldAt panics for a site not in instore.Sites (a hold there
// could never catch anything).
func (i *Injector) HoldAt(site instore.Site, match func(hoststore.CommitID) bool) *Hold {
	return i.holdAt("HoldAt", site, AnyPass, match)
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
func (i *Injector) HoldAtPass(site instore.Site, pass int, match func(hoststore.CommitID) bool) *Hold {
	return i.holdAt("HoldAtPass", site, pass, match)
}

func (i *Injector) holdAt(fn string, site instore.Site, pass int, match func(hoststore.CommitID) bool) *Hold {
	if _, ok := sitePath(site); !ok {
		panic(fmt.Sprintf("faults: %s: unknown site %q", fn, site))
	}
	if pass < 0 {
		panic(fmt.Sprintf("faults: %s: pass %d; passes count from 1 (AnyPass is 0)", fn, pass))
	}
	h := &Hold{inj: i, site: site, pass: pass, match: match, arrived: make(chan struct{}), left: make(chan struct{}), decided: make(chan struct{})}
	i.reg.Lock()
	defer i.reg.Unlock()
	i.addLocked(site)
	i.reg.holds[site] = append(i.reg.holds[site], h)
	return h
}

// Disarm removes the hold from its site and releases a commit still held by
// it (as Proceed, unless Crash was decided first). It is idempotent.
func (h *Hold) Disarm() {
	h.Release()
	i := h.inj
	i.reg.Lock()
	defer i.reg.Unlock()
	hs := i.reg.holds[h.site]
	for k, x := range hs {
		if x == h {
			i.reg.holds[h.site] = append(hs[:k:k], hs[k+1:]...)
			i.dropLocked(h.site)
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
func (i *Injector) ArmTerms(site instore.Site, terms string) error {
	return i.ArmTermsAtPass(site, AnyPass, terms)
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
func (i *Injector) ArmTermsAtPass(site instore.Site, pass int, terms string) error {
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
	i.reg.Lock()
	defer i.reg.Unlock()
	ts, err := armTermSet(failpath(site), terms, chain, lib)
	if err != nil {
		return err
	}
	if old := i.reg.terms[site][pass]; old != nil {
		old.disarm()
	} else {
		i.addLocked(site)
	}
	if i.reg.terms[site] == nil {
		i.reg.terms[site] = map[int]*termSet{}
	}
	i.reg.terms[site][pass] = ts
	return nil
}

// DisarmTerms removes the every-pass terms ArmTerms armed at site (terms
// armed at one pass stay); it does nothing when none are.
func (i *Injector) DisarmTerms(site instore.Site) { i.DisarmTermsAtPass(site, AnyPass) }

// DisarmTermsAtPass removes the terms ArmTermsAtPass armed at site and
// pass; it does nothing when none are.
func (i *Injector) DisarmTermsAtPass(site instore.Site, pass int) {
	i.reg.Lock()
	defer i.reg.Unlock()
	ts := i.reg.terms[site][pass]
	if ts == nil {
		return
	}
	delete(i.reg.terms[site], pass)
	if len(i.reg.terms[site]) == 0 {
		delete(i.reg.terms, site)
	}
	ts.disarm()
	i.dropLocked(site)
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
	inj  *Injector
	ctx  context.Context
	site instore.Site
	id   hoststore.CommitID
	pass int
	err  error
}

var atCalls = sync.Pool{New: func() any { return new(atCall) }}

// dispatchAt runs the injector's in-store failpoint for a call of
// instore.At that reached it through internal/hook. With nothing armed in
// the injector it returns nil. Otherwise it counts the commit's pass at
// the site (and records it), then calls the site's failpath, which is
// enabled with dispatch while any injector has something armed at that
// site; a site with nothing armed, or not in instore.Sites, returns nil.
func (i *Injector) dispatchAt(ctx context.Context, name string, id hoststore.CommitID) error {
	if i.armed.Load() == 0 {
		return nil
	}
	site := instore.Site(name)
	k, ok := siteIndex(site)
	if !ok {
		return nil
	}
	pass := i.passes.count(id, k, site)
	p, _ := sitePath(site)
	c := atCalls.Get().(*atCall)
	c.inj, c.ctx, c.site, c.id, c.pass = i, ctx, site, id, pass
	failpoint.Call(p, c)
	err := c.err
	*c = atCall{}
	atCalls.Put(c)
	return err
}

// dispatch is the sites' failpoint.EnableCall function. It dispatches to
// the call's injector: it takes the first untaken hold that catches the
// commit at this pass, waits on it, then applies the terms armed for this
// pass, then the site's every-pass terms.
func dispatch(c *atCall) {
	i := c.inj
	hold, atPass, every := i.lookup(c.site, c.pass, c.id)
	if hold != nil {
		if c.err = hold.wait(c.ctx, c.id, c.pass); c.err != nil {
			return
		}
	}
	for _, ts := range [2]*termSet{atPass, every} {
		if ts != nil {
			if c.err = ts.inStore(c.ctx, i, Pass{c.site, c.pass}, c.id); c.err != nil {
				return
			}
		}
	}
}

// lookup takes the hold that catches commit id at its pass-th pass of
// site, if any, and returns the terms armed at that pass and the site's
// every-pass terms. The unlock is deferred: a matcher that panics must not
// leave the registry locked.
func (i *Injector) lookup(site instore.Site, pass int, id hoststore.CommitID) (hold *Hold, atPass, every *termSet) {
	i.reg.Lock()
	defer i.reg.Unlock()
	if ts := i.reg.terms[site]; ts != nil {
		atPass, every = ts[pass], ts[AnyPass]
	}
	for _, h := range i.reg.holds[site] {
		if !h.taken && (h.pass == AnyPass || h.pass == pass) && (h.match == nil || h.match(id)) {
			h.taken = true
			return h, atPass, every
		}
	}
	return nil, atPass, every
}

// inStore evaluates in-store terms once for a commit at a pass of a site.
func (ts *termSet) inStore(ctx context.Context, i *Injector, at Pass, id hoststore.CommitID) error {
	t := ts.next()
	if t == nil {
		return nil
	}
	switch t.kind {
	case actSleep:
		return i.sleepCtx(ctx, t.sleep)
	case actReturn:
		if t.ret == "crash" || t.ret == true {
			return fmt.Errorf("%w: %s of commit %q (terms %q)", instore.ErrCrashed, at, id, ts.terms)
		}
	}
	return nil
}

// Armed counts what is armed in the injector, over both layers: in-store
// holds, recorders and term sets, and wrapper term sets. A row can check
// it is zero before and after an injection. Rules injected into a wrapper
// Store are that Store's own and are not counted.
func (i *Injector) Armed() int { return int(i.armed.Load() + i.wrapArmed.Load()) }

// ArmedAnywhere counts what is armed in every injector of the process, as
// Armed counts it for one. A test can check it is zero once its runs
// ended: nothing of them is left armed anywhere.
func ArmedAnywhere() int { return int(armedAll.Load()) }
