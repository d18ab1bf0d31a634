package faults

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// Passes
//
// A store may reach a site more than once in one commit: once per scope,
// or again on an internal retry. While anything in-store is armed (a hold,
// a recorder, terms), an injector numbers the calls of each commit id at
// each site that reach it: pass 1 is the first time the commit reaches the
// site, pass 2 the second, and so on. Every call with the commit id that
// reaches the injector counts, from any handle: a second send of the same
// batch goes on with the count of the first.
//
// Memory: each injector's counts live in a table of at most 2*PassMemory
// commits. It
// forgets a commit's counts when asked (ForgetPasses); all of them when
// nothing in-store is armed any more (passes made with nothing armed are
// not seen, so counts from before could not be trusted); and a commit's
// when more than PassMemory other commits have reached a site since its
// own last pass (least recently passed first). A commit forgotten starts
// again at pass 1.

// AnyPass, as the pass of HoldAtPass, catches the first matching pass,
// whatever its number (HoldAt); as the pass of ArmTermsAtPass, applies the
// terms at every pass (ArmTerms).
const AnyPass = 0

// PassMemory bounds the pass table: a commit's counts are remembered
// while up to PassMemory other commits reach a site after its last pass,
// and the table holds at most 2*PassMemory commits.
const PassMemory = 4096

// Pass is one pass of a commit at a site: N is 1 the first time the commit
// reaches Site, 2 the second time.
type Pass struct {
	Site instore.Site
	N    int
}

// String returns the pass as the --failpoint flag names it, e.g.
// "commit-locked@2".
func (p Pass) String() string { return string(p.Site) + "@" + strconv.Itoa(p.N) }

// siteCounts counts one commit's passes, by siteIndex.
type siteCounts [3]int

// siteIndex returns the index of an in-store site in instore.Sites, or
// false for a site not there.
func siteIndex(s instore.Site) (int, bool) {
	switch s {
	case instore.CommitLocked:
		return 0, true
	case instore.CommitBeforePoint:
		return 1, true
	case instore.CommitAfterPoint:
		return 2, true
	}
	return 0, false
}

// passTable is an injector's pass table and its armed recorders.
//
// The table is two generations: a commit is counted in cur; when cur holds
// PassMemory commits it becomes old and cur starts empty; a commit found
// in old moves back to cur. A commit is forgotten when old is dropped, so
// only after more than PassMemory other commits entered cur after its last
// pass.
type passTable struct {
	sync.Mutex
	cur, old  map[hoststore.CommitID]siteCounts
	recorders []*Recorder
}

// count counts a pass of commit id at site k and returns its number; it
// records it in the recorders that match id. Called by dispatchAt for
// every call at an in-store site while anything is armed.
func (t *passTable) count(id hoststore.CommitID, k int, site instore.Site) int {
	t.Lock()
	defer t.Unlock()
	c, ok := t.cur[id]
	if !ok {
		if c, ok = t.old[id]; ok {
			delete(t.old, id)
		}
		if t.cur == nil {
			t.cur = make(map[hoststore.CommitID]siteCounts)
		} else if len(t.cur) >= PassMemory {
			t.old, t.cur = t.cur, make(map[hoststore.CommitID]siteCounts, PassMemory)
		}
	}
	c[k]++
	t.cur[id] = c
	n := c[k]
	for _, r := range t.recorders {
		if r.match == nil || r.match(id) {
			r.add(id, Pass{Site: site, N: n})
		}
	}
	return n
}

// forgetAll empties the table; called when nothing is armed any more, with
// reg held.
func (t *passTable) forgetAll() {
	t.Lock()
	t.cur, t.old = nil, nil
	t.Unlock()
}

// has reports whether the table counts commit id.
func (t *passTable) has(id hoststore.CommitID) bool {
	t.Lock()
	defer t.Unlock()
	_, ok := t.cur[id]
	if !ok {
		_, ok = t.old[id]
	}
	return ok
}

// ForgetPasses forgets the passes counted for the given commits: the next
// time one reaches a site is its pass 1 again. A driver calls it before it
// runs a commit id again (another run of the same history) while something
// stayed armed in between; with nothing armed in between the counts are
// gone already.
func (i *Injector) ForgetPasses(ids ...hoststore.CommitID) {
	t := &i.passes
	t.Lock()
	defer t.Unlock()
	for _, id := range ids {
		delete(t.cur, id)
		delete(t.old, id)
	}
}

// Passes returns how many times commit id has reached each in-store site
// while anything was armed in the injector, as far as its table remembers
// (see PassMemory); sites it has not reached are absent. The map is the
// caller's. A Recorder keeps the passes of the commits it matches for as
// long as the caller needs them.
func (i *Injector) Passes(id hoststore.CommitID) map[instore.Site]int {
	t := &i.passes
	t.Lock()
	defer t.Unlock()
	c, ok := t.cur[id]
	if !ok {
		c = t.old[id]
	}
	return c.toMap()
}

func (c siteCounts) toMap() map[instore.Site]int {
	m := map[instore.Site]int{}
	for i, n := range c {
		if n > 0 {
			m[instore.Sites[i]] = n
		}
	}
	return m
}

// Recorder records, for each commit its matcher accepts, every pass the
// commit makes at an in-store site while the recorder is armed. Its pass
// numbers are its injector's, the ones HoldAtPass and ArmTermsAtPass
// take. Build it with Record.
//
// A driver records a run, then for each (site, pass) a commit reached
// crashes another run of it there:
//
//	rec := inj.Record(match)
//	// ... run the history ...
//	rec.Disarm()
//	for _, p := range rec.Trail(id) {
//		inj.ForgetPasses(id) // unless nothing stays armed between runs
//		h := inj.HoldAtPass(p.Site, p.N, match)
//		h.Crash()
//		// ... run the history again; h.Arrived() is closed if the crash happened ...
//		h.Disarm()
//	}
type Recorder struct {
	inj   *Injector
	match func(hoststore.CommitID) bool
	// Guarded by inj.passes.
	order  []hoststore.CommitID
	trails map[hoststore.CommitID][]Pass
	armed  bool
}

// Record arms a recorder of the passes of the commits match accepts (nil
// matches every commit). match runs with the pass table locked: it must
// not call this package. The recorder keeps every pass it records until it
// is dropped, so its memory grows with the passes of the commits it
// matches; match only the commits you need, and Disarm it when the run is
// over. A recorder counts in Armed.
func (i *Injector) Record(match func(hoststore.CommitID) bool) *Recorder {
	r := &Recorder{inj: i, match: match, trails: map[hoststore.CommitID][]Pass{}, armed: true}
	i.reg.Lock()
	defer i.reg.Unlock()
	i.armOneLocked()
	i.passes.Lock()
	i.passes.recorders = append(i.passes.recorders, r)
	i.passes.Unlock()
	return r
}

// Disarm stops the recording; what was recorded stays readable. It is
// idempotent.
func (r *Recorder) Disarm() {
	i := r.inj
	i.reg.Lock()
	defer i.reg.Unlock()
	i.passes.Lock()
	if !r.armed {
		i.passes.Unlock()
		return
	}
	r.armed = false
	rs := i.passes.recorders
	for k, x := range rs {
		if x == r {
			i.passes.recorders = append(rs[:k:k], rs[k+1:]...)
			break
		}
	}
	i.passes.Unlock()
	i.dropOneLocked()
}

// add records a pass; called with inj.passes held.
func (r *Recorder) add(id hoststore.CommitID, p Pass) {
	t, ok := r.trails[id]
	if !ok {
		r.order = append(r.order, id)
	}
	r.trails[id] = append(t, p)
}

// Commits returns the commits the recorder saw, in the order each first
// reached a site. The slice is the caller's.
func (r *Recorder) Commits() []hoststore.CommitID {
	r.inj.passes.Lock()
	defer r.inj.passes.Unlock()
	return append([]hoststore.CommitID(nil), r.order...)
}

// Trail returns the passes commit id made while the recorder was armed, in
// the order it made them, e.g. [commit-locked@1 commit-locked@2
// commit-before-point@1 commit-after-point@1] for a store that passes
// commit-locked once per scope of a two-scope batch. The slice is the
// caller's.
func (r *Recorder) Trail(id hoststore.CommitID) []Pass {
	r.inj.passes.Lock()
	defer r.inj.passes.Unlock()
	return append([]Pass(nil), r.trails[id]...)
}

// Passes returns, for each site commit id reached while the recorder was
// armed, the highest pass number it made there: the count of its passes
// when the recorder was armed before the commit began. Sites it did not
// reach are absent. The map is the caller's.
func (r *Recorder) Passes(id hoststore.CommitID) map[instore.Site]int {
	r.inj.passes.Lock()
	defer r.inj.passes.Unlock()
	var c siteCounts
	for _, p := range r.trails[id] {
		i, _ := siteIndex(p.Site)
		c[i] = max(c[i], p.N)
	}
	return c.toMap()
}

// parsePass reads the pass of a --failpoint name (after "@"): a whole
// number from 1 up, without sign or leading zero.
func parsePass(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("no pass after \"@\"; want e.g. %s", `commit-locked@2`)
	}
	for k := 0; k < len(s); k++ {
		if !isDigit(s[k]) {
			return 0, fmt.Errorf("pass %q: want a whole number from 1 up", s)
		}
	}
	if s[0] == '0' {
		return 0, fmt.Errorf("pass %q: want a whole number from 1 up, without leading zeros", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("pass %q: %v", s, err)
	}
	return n, nil
}
