package memlog

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// Commit applies one batch atomically; nil means it landed. The steps:
//
//  1. A commit id that already landed returns nil and changes nothing.
//  2. It takes the lock of every scope it writes, in sorted order (kind,
//     then name bytes), waiting no longer than ctx or the handle lives.
//     Commits on other scopes never wait for it.
//  3. instore.CommitLocked. It refuses a superseded token (*FencedOutError),
//     a previous version that is not the scope's current one
//     (*ConflictError) and a create of a deleted name (*InvalidError), and
//     builds every scope's next state without touching the realm.
//  4. instore.CommitBeforePoint. The commit point: under the realm's mutex,
//     which AcquireFence takes too, it checks the token again and swaps the
//     new states in all at once, so an acquire either comes before the
//     point (and the batch is refused) or after it (and the batch stays
//     visible). Then it releases the scope locks.
//  5. instore.CommitAfterPoint, then nil.
//
// A kill or a crash at a failpoint before the commit point leaves nothing
// applied; the call returns *UnavailableError (killed), the error wrapping
// instore.ErrCrashed, or ctx.Err(). After the commit point the batch is
// durable whatever the call returns.
func (s *Store) Commit(ctx context.Context, batch *hoststore.CommitBatch) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if batch == nil || batch.Len() == 0 {
		return &hoststore.InvalidError{Detail: "commit: a batch needs at least one update (build it with hoststore.NewCommitBatch)"}
	}
	f, id, token := s.realm, batch.CommitID(), batch.Token()
	if f.landedID(id) {
		return nil
	}
	ups := batch.Updates()
	slices.SortFunc(ups, func(a, b hoststore.ScopeUpdate) int { return compareRefs(a.Scope, b.Scope) })
	unlock, err := s.lockScopes(ctx, ups)
	if err != nil {
		return err
	}
	defer unlock()

	if err := at(ctx, instore.CommitLocked, id); err != nil {
		return err
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	refs := make([]hoststore.ScopeRef, len(ups))
	cur := make([]*scopeState, len(ups))
	f.mu.Lock()
	_, dup := f.landed[id] // a send of the same id landed while this one waited
	for i := range ups {
		refs[i] = ups[i].Scope
		cur[i] = f.scopes[refs[i]]
	}
	fenceErr := f.checkTokenLocked(token)
	f.mu.Unlock()
	if dup {
		return nil
	}
	if fenceErr != nil {
		return fenceErr
	}
	nexts := make([]*scopeState, len(ups))
	for i := range ups {
		if err := check(&ups[i], cur[i]); err != nil {
			return err
		}
		nexts[i] = next(cur[i], &ups[i], id)
	}

	if err := at(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	if err := f.checkTokenLocked(token); err != nil {
		f.mu.Unlock()
		return err
	}
	f.applyLocked(id, refs, nexts)
	f.mu.Unlock()
	unlock()

	return at(ctx, instore.CommitAfterPoint, id)
}

// at is instore.At, called at the three sites above. kill_test.go puts a
// hold of its own in its place: only conform's harness arms instore's sites.
var at = instore.At

// checkTokenLocked returns *FencedOutError when a token higher than token
// was acquired, since a stale batch must not become visible after an
// acquire, and *InvalidError for a token never issued.
// Called with mu held.
func (f *Factory) checkTokenLocked(token hoststore.FenceToken) error {
	switch {
	case token < f.token:
		return &hoststore.FencedOutError{Current: f.token}
	case token == 0 || token > f.token:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("commit: fence token %d was never issued", token)}
	}
	return nil
}

// lockScopes takes the lock of each update's scope in the order of ups. It
// gives up, releasing what it took, when ctx ends or the handle is killed.
// It returns a release function that is safe to call more than once.
func (s *Store) lockScopes(ctx context.Context, ups []hoststore.ScopeUpdate) (func(), error) {
	held := make([]chan struct{}, 0, len(ups))
	release := func() {
		for _, l := range held {
			<-l
		}
	}
	for _, u := range ups {
		l := s.realm.lockOf(u.Scope)
		select {
		case l <- struct{}{}:
			held = append(held, l)
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		case <-s.dead:
			release()
			return nil, &hoststore.UnavailableError{Detail: "the handle was killed"}
		}
	}
	return sync.OnceFunc(release), nil
}
