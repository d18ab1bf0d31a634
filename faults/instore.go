// Package faults is conform's fault injector: the in-store failpoints that a
// store calls from its own commit path, the catalogue that names them, and
// the wrapper that kills, delays and breaks a store's requests from outside.
//
// # In-store failpoints
//
// A store calls At at three sites of its commit, one line each:
//
//	if err := faults.At(ctx, faults.CommitLocked, batch.CommitID()); err != nil {
//		return err // the "process" crashed here: abandon the commit, no rollback step of your own
//	}
//
//   - CommitLocked: after the commit has taken its locks or begun its
//     transaction, before it checks anything;
//   - CommitBeforePoint: just before the commit point (the moment after
//     which the batch is visible, e.g. before COMMIT);
//   - CommitAfterPoint: just after the commit point, before the store
//     answers.
//
// At answers nil almost always: when nothing is armed it costs one atomic
// load. When the harness holds the commit there, At blocks until the harness
// releases it (or ctx ends). When the harness crashes it there, At answers an
// error wrapping ErrCrashed; the store must then return that error at once,
// as a process dying there would: a transaction is left to the backend's
// own abort (drop it, do not COMMIT), an in-memory store applies nothing
// before the commit point and forgets the answer after it. The harness
// treats the handle as killed after a crash.
//
// The sites are also github.com/pingcap/failpoint failpaths (Failpath), so a
// run can arm them with terms: `return("crash")` crashes, `sleep(ms)`
// delays, `N*` counts. Terms drawing from `N%` are refused (they use an
// unseeded global source; a reproducible run uses counted terms).
package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pingcap/failpoint"

	"github.com/conform-spi/conform/hoststore"
)

// Site is a named point inside a store's commit.
type Site string

// The in-store sites, in the order a commit passes them.
const (
	CommitLocked      Site = "commit-locked"
	CommitBeforePoint Site = "commit-before-point"
	CommitAfterPoint  Site = "commit-after-point"
)

// Sites lists the in-store sites in commit order.
var Sites = []Site{CommitLocked, CommitBeforePoint, CommitAfterPoint}

// FailpathPrefix prefixes every failpath of conform's catalogue.
const FailpathPrefix = "conform/"

// Failpath is the site's name in pingcap/failpoint's registry.
func (s Site) Failpath() string { return FailpathPrefix + string(s) }

// ErrCrashed is wrapped by the error At answers when the harness crashes
// the commit at a site.
var ErrCrashed = errors.New("conform: crashed at an in-store failpoint")

// armed counts the sites that have a hold, a watcher or terms; zero keeps At
// to one atomic load.
var armed atomic.Int64

// Decision is what a hold's commit does when released.
type Decision int

const (
	// Proceed lets the commit go on.
	Proceed Decision = iota
	// Crash makes At answer ErrCrashed.
	Crash
)

// Hold holds one matching commit at a site. Build it with HoldAt.
type Hold struct {
	site    Site
	match   func(hoststore.CommitID) bool
	arrived chan struct{}
	release chan Decision
	once    sync.Once
	taken   atomic.Bool
	relOnce sync.Once
}

// Arrived is closed when the held commit reached the site and waits there.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held commit go on (or, if it has not arrived yet, lets it
// pass when it does). Release and Crash are idempotent; the first wins.
func (h *Hold) Release() { h.decide(Proceed) }

// Crash makes the held commit crash at the site.
func (h *Hold) Crash() { h.decide(Crash) }

func (h *Hold) decide(d Decision) {
	h.relOnce.Do(func() { h.release <- d; close(h.release) })
}

// Site is where the hold waits.
func (h *Hold) Site() Site { return h.site }

// registry of holds and crash rules per site.
var reg = struct {
	sync.Mutex
	holds  map[Site][]*Hold
	terms  map[Site]string
	counts map[Site]int
}{holds: map[Site][]*Hold{}, terms: map[Site]string{}, counts: map[Site]int{}}

// HoldAt arms a hold at site for the first commit whose id match accepts
// (nil matches any). The hold catches one commit; later ones pass. Call
// Release or Crash, then Disarm, when done.
func HoldAt(site Site, match func(hoststore.CommitID) bool) *Hold {
	h := &Hold{site: site, match: match, arrived: make(chan struct{}), release: make(chan Decision, 1)}
	reg.Lock()
	reg.holds[site] = append(reg.holds[site], h)
	reg.counts[site]++
	if reg.counts[site] == 1 {
		enableCall(site)
	}
	reg.Unlock()
	armed.Add(1)
	return h
}

// Disarm removes the hold from its site and releases a commit still held by
// it (as Proceed, unless Crash was decided first).
func (h *Hold) Disarm() {
	h.Release()
	reg.Lock()
	defer reg.Unlock()
	hs := reg.holds[h.site]
	for i, x := range hs {
		if x == h {
			reg.holds[h.site] = append(hs[:i:i], hs[i+1:]...)
			armed.Add(-1)
			reg.counts[h.site]--
			if reg.counts[h.site] == 0 {
				_ = failpoint.Disable(h.site.Failpath())
			}
			return
		}
	}
}

// ArmTerms arms site with pingcap/failpoint terms, e.g. `1*return("crash")`
// or `sleep(10)`. It refuses malformed terms and `%` terms (unseeded).
func ArmTerms(site Site, terms string) error {
	if err := ValidateTerms(terms); err != nil {
		return err
	}
	reg.Lock()
	defer reg.Unlock()
	if _, ok := reg.terms[site]; !ok {
		armed.Add(1)
		reg.counts[site]++
	}
	reg.terms[site] = terms
	if err := failpoint.Enable(termsPath(site), terms); err != nil {
		return fmt.Errorf("failpoint terms %q: %v", terms, err)
	}
	if reg.counts[site] == 1 {
		enableCall(site)
	}
	return nil
}

// DisarmTerms removes the terms armed at site.
func DisarmTerms(site Site) {
	reg.Lock()
	defer reg.Unlock()
	if _, ok := reg.terms[site]; !ok {
		return
	}
	delete(reg.terms, site)
	_ = failpoint.Disable(termsPath(site))
	armed.Add(-1)
	reg.counts[site]--
	if reg.counts[site] == 0 {
		_ = failpoint.Disable(site.Failpath())
	}
}

// termsPath is a private failpath holding the terms, so that the site's
// own failpath stays an EnableCall dispatcher.
func termsPath(site Site) string { return site.Failpath() + "#terms" }

// ValidateTerms checks terms without arming anything.
func ValidateTerms(terms string) error {
	for i := 0; i < len(terms); i++ {
		if terms[i] == '%' {
			return fmt.Errorf("failpoint terms %q: %% terms draw from an unseeded source; use counted terms (N*)", terms)
		}
	}
	probe := FailpathPrefix + "validate#probe"
	if err := failpoint.Enable(probe, terms); err != nil {
		return fmt.Errorf("failpoint terms %q: %v", terms, err)
	}
	_ = failpoint.Disable(probe)
	return nil
}

type callFn = func(ctx context.Context, site Site, id hoststore.CommitID, out *error)

// enableCall installs the dispatcher; called with reg held.
func enableCall(site Site) {
	_ = failpoint.EnableCall(site.Failpath(), callFn(dispatch))
}

// At is the in-store failpoint: a store calls it at site during the commit
// of the batch with commit id id. See the package doc for what it answers.
func At(ctx context.Context, site Site, id hoststore.CommitID) error {
	if armed.Load() == 0 {
		return nil
	}
	var err error
	failpoint.Call(site.Failpath(), ctx, site, id, &err)
	return err
}

func dispatch(ctx context.Context, site Site, id hoststore.CommitID, out *error) {
	reg.Lock()
	var hold *Hold
	for _, h := range reg.holds[site] {
		if (h.match == nil || h.match(id)) && h.taken.CompareAndSwap(false, true) {
			hold = h
			break
		}
	}
	terms, hasTerms := reg.terms[site]
	reg.Unlock()
	if hold != nil {
		close(hold.arrived)
		select {
		case d := <-hold.release:
			if d == Crash {
				*out = fmt.Errorf("%w: %s of commit %q", ErrCrashed, site, id)
				return
			}
		case <-ctx.Done():
			*out = ctx.Err()
			return
		}
	}
	if hasTerms {
		if err := evalTerms(site, terms); err != nil {
			*out = fmt.Errorf("%w: %s of commit %q (%v)", ErrCrashed, site, id, err)
		}
	}
}

// evalTerms evaluates the armed terms; a `return` value of "crash" or true
// crashes. Other effects (sleep, pause, print) act inside the library.
func evalTerms(site Site, terms string) error {
	v, err := failpoint.Eval(termsPath(site))
	if err != nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		if x == "crash" {
			return errors.New("terms " + terms)
		}
	case bool:
		if x {
			return errors.New("terms " + terms)
		}
	}
	return nil
}
