package canary

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// Commit applies one batch atomically ("commit(batch)"). It passes the
// in-store failpoints commit-locked and commit-before-point, then checks
// and applies the whole batch under the realm's mutex (its commit point),
// then passes commit-after-point. A failpoint's error (a crash the harness
// injected, or ctx.Err() while held) is returned as it is: before the
// commit point nothing was applied, after it the batch stays applied.
// Under OkOnEndedContext, a commit that ends with its context's error
// answers Ok instead, applied or not; under HangsOnEndedContext it never
// answers.
func (s *Store) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	err := s.commit(ctx, b)
	if s.r.bugs.Has(OkOnEndedContext) && err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	if s.r.bugs.Has(HangsOnEndedContext) && err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		<-never
	}
	return err
}

func (s *Store) commit(ctx context.Context, b *hoststore.CommitBatch) error {
	if b == nil {
		return &hoststore.InvalidError{Detail: "commit of a nil batch"}
	}
	if err := s.enter(ctx); err != nil {
		return err
	}
	r := s.r
	id := b.CommitID()
	if r.bugs&(HangsCommit|Outage|StuckCommits|LeaksScopeLock) != 0 {
		n := r.commits.Add(1)
		if r.bugs.Has(LeaksScopeLock) && r.leak(b, n >= HangCommitAt) {
			<-never
		}
		if r.bugs.Has(HangsCommit) && n == HangCommitAt || r.bugs.Has(StuckCommits) && n >= HangCommitAt && b.Len() > 1 {
			<-never
		}
		if r.bugs.Has(Outage) && n == OutageAt {
			r.gone.Store(true)
			return errGone()
		}
	}
	if r.bugs.Has(Panics) && strings.Contains(string(id), "rows/") {
		panic(fmt.Sprintf("canary: deliberate panic in the commit of %q", id))
	}
	if r.bugs.Has(RealmLock) {
		r.commitMu.Lock()
		defer r.commitMu.Unlock()
	}
	if err := s.at(ctx, instore.CommitLocked, id); err != nil {
		return err
	}
	switch {
	case r.bugs.Has(TornBatch):
		return s.commitTorn(ctx, b)
	case r.bugs.Has(DirtyRead):
		return s.commitDirty(ctx, b)
	case r.bugs.Has(SiteTwicePublish):
		return s.commitTwice(ctx, b)
	}
	if err := s.at(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	if err := s.point(b); err != nil {
		return err
	}
	if err := s.at(ctx, instore.CommitAfterPoint, id); err != nil {
		return err
	}
	if s.killed.Load() {
		return &hoststore.IndeterminateError{Detail: "the handle was killed after the commit point; the answer is lost"}
	}
	return nil
}

// point is the commit point: under the realm's mutex, a killed handle
// applies nothing; otherwise the batch is checked and applied in one step.
// Under LostOnKill the checked batch is only kept in the handle.
func (s *Store) point(b *hoststore.CommitBatch) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.killed.Load() {
		return &hoststore.UnavailableError{Detail: "the handle was killed before the commit point; nothing was applied"}
	}
	if !r.bugs.Has(LostOnKill) {
		return r.pointLocked(b)
	}
	if r.landed[b.CommitID()] {
		return nil
	}
	if err := r.checkLocked(b); err != nil {
		return err
	}
	s.pmu.Lock()
	s.pending = append(s.pending, b)
	s.pmu.Unlock()
	return nil
}

// pointLocked checks and applies b; a commit id that already landed
// returns nil without acting again ("A commit id that already landed
// returns nil without acting again"), except under RetryTwice.
func (r *realm) pointLocked(b *hoststore.CommitBatch) error {
	id := b.CommitID()
	if r.landed[id] {
		if r.bugs.Has(RetryTwice) {
			r.reapplyLocked(b)
		}
		return nil
	}
	if r.bugs.Has(ApplyAsChecked) {
		return r.applyAsCheckedLocked(b)
	}
	if err := r.checkLocked(b); err != nil {
		return err
	}
	r.landed[id] = true
	for _, u := range b.Updates() {
		r.applyUpdateLocked(u, id)
	}
	if r.bugs.Has(UnavailableAfterApply) && strings.Contains(string(id), "reopen/") && !r.lied[id] {
		r.lied[id] = true
		return &hoststore.UnavailableError{Detail: "canary: the batch was applied, yet the answer says nothing was"}
	}
	return nil
}

// checkLocked refuses a batch that must not land: see checkTokenLocked and
// checkUpdateLocked.
func (r *realm) checkLocked(b *hoststore.CommitBatch) error {
	if err := r.checkTokenLocked(b.Token()); err != nil {
		return err
	}
	for _, u := range b.Updates() {
		if err := r.checkUpdateLocked(u); err != nil {
			return err
		}
	}
	return nil
}

// checkTokenLocked: a token below the highest acquired is
// *hoststore.FencedOutError (obligation 5 met at commit); a token never
// issued is *hoststore.InvalidError.
func (r *realm) checkTokenLocked(t hoststore.FenceToken) error {
	if r.bugs.Has(IgnoreToken) {
		return nil
	}
	switch {
	case t < r.token:
		return &hoststore.FencedOutError{Current: r.token}
	case t == 0 || t > r.token:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("token %d was never issued", t)}
	}
	return nil
}

// checkUpdateLocked: an update whose Previous is not the scope's version
// is *hoststore.ConflictError (obligation 4 met at commit), and a create of
// a deleted name is *hoststore.InvalidError, a refusal the contract allows
// (docs/host-store-contract.md#edges).
func (r *realm) checkUpdateLocked(u hoststore.ScopeUpdate) error {
	if r.bugs.Has(LastWriterWins) {
		return nil
	}
	cur := r.scopes[r.key(u.Scope)]
	switch {
	case u.Previous == nil && cur.live() && r.bugs.Has(CreateOverExisting):
		return nil
	case u.Previous == nil && cur.live():
		return &hoststore.ConflictError{Scope: u.Scope, Current: hoststore.Ptr(cur.version)}
	case u.Previous == nil && cur != nil:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("scope %s was deleted; its name is never created again", u.Scope)}
	case u.Previous != nil && !cur.live():
		return &hoststore.ConflictError{Scope: u.Scope}
	case u.Previous != nil && cur.version != *u.Previous:
		return &hoststore.ConflictError{Scope: u.Scope, Current: hoststore.Ptr(cur.version)}
	}
	return nil
}

// applyAsCheckedLocked is ApplyAsChecked's commit: each update is checked
// and applied in turn, so a refusal of a later one leaves the earlier ones
// applied.
func (r *realm) applyAsCheckedLocked(b *hoststore.CommitBatch) error {
	if err := r.checkTokenLocked(b.Token()); err != nil {
		return err
	}
	for _, u := range b.Updates() {
		if err := r.checkUpdateLocked(u); err != nil {
			return err
		}
		r.applyUpdateLocked(u, b.CommitID())
	}
	r.landed[b.CommitID()] = true
	return nil
}

// reapplyLocked is RetryTwice's second application of a landed batch:
// each update's parts act again on the scope as it is now.
func (r *realm) reapplyLocked(b *hoststore.CommitBatch) {
	for _, u := range b.Updates() {
		cur := r.scopes[r.key(u.Scope)]
		if !cur.live() || u.Delete {
			continue
		}
		u.Previous = hoststore.Ptr(cur.version)
		u.Next = cur.version + 1
		r.applyUpdateLocked(u, b.CommitID())
	}
}

// applyUpdateLocked applies one update, its parts in the order
// TruncateAfter, DropBefore, Append, Head.
func (r *realm) applyUpdateLocked(u hoststore.ScopeUpdate, id hoststore.CommitID) {
	if u.Delete {
		gone := &scope{name: u.Scope.Name, version: u.Next, commitID: id, deleted: true}
		if old := r.scopes[r.key(u.Scope)]; old != nil {
			gone.name, gone.head = old.name, old.head // what ListedAfterDelete keeps listing
		}
		r.scopes[r.key(u.Scope)] = gone
		return
	}
	sc := r.scopes[r.key(u.Scope)]
	if u.Previous == nil || !sc.live() {
		sc = &scope{name: u.Scope.Name}
		r.scopes[r.key(u.Scope)] = sc
	}
	if t := sc.lateTruncate; t != nil {
		sc.lateTruncate = nil
		sc.truncate(*t)
	}
	if t := u.TruncateAfter; t != nil {
		if r.bugs.Has(LateTruncate) {
			sc.lateTruncate = hoststore.Ptr(*t)
		} else {
			sc.truncate(*t)
		}
	}
	if d := u.DropBefore; d != nil {
		sc.drop(*d, r.bugs.Has(DropRenumbers))
	}
	rows := u.Append // Updates() returned a copy: the store may keep it
	if r.bugs.Has(ReversedAppend) {
		slices.Reverse(rows)
	}
	sc.rows = append(sc.rows, rows...)
	sc.end += hoststore.RowIndex(len(rows))
	if u.Head != nil {
		sc.head = *u.Head
	}
	sc.version = u.Next
	sc.commitID = id
}

// truncate removes the rows at index t and above, and the next appended
// row gets index t. A t at or past the end removes nothing.
func (sc *scope) truncate(t hoststore.RowIndex) {
	if t >= sc.end {
		return
	}
	if t <= sc.start {
		sc.rows, sc.start = nil, t
	} else {
		sc.rows = sc.rows[:t-sc.start]
	}
	sc.end = t
}

// drop removes the rows below index d; the rest keep their indices (unless
// renumber, the DropRenumbers bug). A d past the end removes every row and
// leaves the end alone.
func (sc *scope) drop(d hoststore.RowIndex, renumber bool) {
	if d <= sc.start {
		return
	}
	if d >= sc.end {
		sc.rows, sc.start = nil, sc.end
	} else {
		sc.rows = sc.rows[d-sc.start:]
		sc.start = d
	}
	if renumber {
		sc.start, sc.end = 0, hoststore.RowIndex(len(sc.rows))
	}
}

// at calls the in-store site, unless the store is NoSites.
func (s *Store) at(ctx context.Context, site instore.Site, id hoststore.CommitID) error {
	if s.r.bugs.Has(NoSites) {
		return nil
	}
	return instore.At(ctx, site, id)
}

// leak reports whether b touches a scope whose lock an earlier commit
// kept (LeaksScopeLock); when it does not and keep is set, b's first
// scope's lock is kept from now on.
func (r *realm) leak(b *hoststore.CommitBatch, keep bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	scopes := b.Scopes()
	for _, s := range scopes {
		if r.leaked[s] {
			return true
		}
	}
	if keep {
		if r.leaked == nil {
			r.leaked = map[hoststore.ScopeRef]bool{}
		}
		r.leaked[scopes[0]] = true
	}
	return false
}
