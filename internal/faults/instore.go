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

// armed counts the in-store holds and term sets. It changes only with reg
// held. While it is above zero, dispatchAt is in internal/hook's slot; at
// zero the slot is empty, which keeps instore.At to one atomic load.
var armed atomic.Int64

// Decision is what a hold's commit does when released.
type Decision int

const (
	// Proceed lets the commit go on.
	Proceed Decision = iota
	// Crash makes instore.At return an error wrapping instore.ErrCrashed.
	Crash
)

// Hold holds one matching commit at a site. Build it with HoldAt.
type Hold struct {
	site     instore.Site
	match    func(hoststore.CommitID) bool
	arrived  chan struct{}
	decided  chan struct{} // closed once decision is set
	decision Decision
	once     sync.Once
	taken    bool // a commit took the hold; guarded by reg
}

// Arrived is closed when the held commit reached the site and waits there.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

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

// wait blocks the commit that took the hold until the harness decides or
// ctx ends.
func (h *Hold) wait(ctx context.Context, id hoststore.CommitID) error {
	defer beginHarnessWait()()
	close(h.arrived)
	select {
	case <-h.decided:
		if h.decision == Crash {
			return fmt.Errorf("%w: %s of commit %q (held, then crashed)", instore.ErrCrashed, h.site, id)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reg holds what is armed at each site. A site whose count goes from zero
// to one gets the dispatcher (failpoint.EnableCall); back at zero it is
// disabled. The dispatcher never blocks with reg or a library lock held,
// so arming and disarming stay free while commits are held.
var reg = struct {
	sync.Mutex
	holds map[instore.Site][]*Hold
	terms map[instore.Site]*termSet
}{holds: map[instore.Site][]*Hold{}, terms: map[instore.Site]*termSet{}}

// siteCountLocked counts what is armed at site; called with reg held.
func siteCountLocked(site instore.Site) int {
	n := len(reg.holds[site])
	if reg.terms[site] != nil {
		n++
	}
	return n
}

// addLocked counts one more armed thing at site; called with reg held.
func addLocked(site instore.Site) {
	if siteCountLocked(site) == 0 {
		p, _ := sitePath(site)
		if err := failpoint.EnableCall(p, dispatch); err != nil {
			panic(fmt.Sprintf("faults: enable %s: %v", p, err))
		}
	}
	if armed.Add(1) == 1 {
		hook.Set(dispatchAt)
	}
}

// dropLocked counts one less armed thing at site, after it was removed
// from reg; called with reg held.
func dropLocked(site instore.Site) {
	if armed.Add(-1) == 0 {
		hook.Set(nil)
	}
	if siteCountLocked(site) == 0 {
		p, _ := sitePath(site)
		mustDisable(p)
	}
}

// HoldAt arms a hold at site for the first commit whose id match accepts
// (nil matches any). The hold catches one commit; later ones pass. Call
// Release or Crash, then Disarm, when done. match runs with the registry
// locked: it must not call this package. HoldAt panics for a site not in
// instore.Sites (a hold there could never catch anything).
func HoldAt(site instore.Site, match func(hoststore.CommitID) bool) *Hold {
	if _, ok := sitePath(site); !ok {
		panic(fmt.Sprintf("faults: HoldAt: unknown site %q", site))
	}
	h := &Hold{site: site, match: match, arrived: make(chan struct{}), decided: make(chan struct{})}
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
// replacing terms armed there before (with fresh counts). A return value of
// "crash" or true crashes, false passes; sleep delays the commit (ending
// early with its ctx). It refuses an unknown site and terms ValidateTerms
// refuses or whose return values are not those.
func ArmTerms(site instore.Site, terms string) error {
	if _, ok := sitePath(site); !ok {
		return fmt.Errorf("failpoint %q: unknown in-store site; the sites are %v", site, instore.Sites)
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
	if old := reg.terms[site]; old != nil {
		old.disarm()
	} else {
		addLocked(site)
	}
	reg.terms[site] = ts
	return nil
}

// DisarmTerms removes the terms armed at site; it does nothing when none are.
func DisarmTerms(site instore.Site) {
	reg.Lock()
	defer reg.Unlock()
	ts := reg.terms[site]
	if ts == nil {
		return
	}
	delete(reg.terms, site)
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
	err  error
}

var atCalls = sync.Pool{New: func() any { return new(atCall) }}

// dispatchAt is the handler in internal/hook's slot while anything
// in-store is armed: instore.At calls it. It calls the site's failpath,
// which is enabled with dispatch while anything is armed at that site; a
// site with nothing armed, or not in instore.Sites, returns nil.
func dispatchAt(ctx context.Context, name string, id hoststore.CommitID) error {
	site := instore.Site(name)
	p, ok := sitePath(site)
	if !ok {
		return nil
	}
	c := atCalls.Get().(*atCall)
	c.ctx, c.site, c.id = ctx, site, id
	failpoint.Call(p, c)
	err := c.err
	*c = atCall{}
	atCalls.Put(c)
	return err
}

// dispatch is the sites' failpoint.EnableCall function. It takes the first
// untaken hold whose matcher accepts the commit, waits on it, then applies
// the site's terms.
func dispatch(c *atCall) {
	hold, ts := lookup(c.site, c.id)
	if hold != nil {
		if c.err = hold.wait(c.ctx, c.id); c.err != nil {
			return
		}
	}
	if ts != nil {
		c.err = ts.inStore(c.ctx, c.site, c.id)
	}
}

// lookup takes the hold that catches commit id at site, if any, and
// returns the site's terms. The unlock is deferred: a matcher that panics
// must not leave the registry locked.
func lookup(site instore.Site, id hoststore.CommitID) (*Hold, *termSet) {
	reg.Lock()
	defer reg.Unlock()
	for _, h := range reg.holds[site] {
		if !h.taken && (h.match == nil || h.match(id)) {
			h.taken = true
			return h, reg.terms[site]
		}
	}
	return nil, reg.terms[site]
}

// inStore evaluates in-store terms once for a commit at site.
func (ts *termSet) inStore(ctx context.Context, site instore.Site, id hoststore.CommitID) error {
	t := ts.next()
	if t == nil {
		return nil
	}
	switch t.kind {
	case actSleep:
		return sleepCtx(ctx, t.sleep)
	case actReturn:
		if t.ret == "crash" || t.ret == true {
			return fmt.Errorf("%w: %s of commit %q (terms %q)", instore.ErrCrashed, site, id, ts.terms)
		}
	}
	return nil
}

// Armed counts what is armed in both layers' registries: in-store holds
// and term sets, and wrapper term sets. A row can check it is zero before
// and after an injection. Rules injected into a wrapper Store are that
// Store's own and are not counted.
func Armed() int { return int(armed.Load() + wrapArmed.Load()) }
