package canary

import (
	"context"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// commitTorn is TornBatch's commit: it checks the batch and applies its
// first update, passes commit-before-point, and only then applies the rest.
func (s *Store) commitTorn(ctx context.Context, b *hoststore.CommitBatch) error {
	r := s.r
	id := b.CommitID()
	ups := b.Updates()
	if ok, err := s.openLocked(b); !ok {
		return err
	}
	r.landed[id] = true
	r.applyUpdateLocked(ups[0], id)
	r.mu.Unlock()
	if err := s.at(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	r.mu.Lock()
	if s.killed.Load() {
		r.mu.Unlock()
		return &hoststore.UnavailableError{Detail: "the handle was killed midway"}
	}
	for _, u := range ups[1:] {
		r.applyUpdateLocked(u, id)
	}
	r.mu.Unlock()
	return s.at(ctx, instore.CommitAfterPoint, id)
}

// commitDirty is DirtyRead's commit: it checks the batch and applies it
// at once, visible to every load, passes commit-before-point, and only then
// reaches its commit point, where a crash, a kill or a token superseded
// meanwhile rolls it back. (The rollback restores the scopes as they were
// before the batch; a commit on the same scopes in between is lost with
// it, which the chapter never does.)
func (s *Store) commitDirty(ctx context.Context, b *hoststore.CommitBatch) error {
	r := s.r
	id := b.CommitID()
	if ok, err := s.openLocked(b); !ok {
		return err
	}
	undo := map[hoststore.ScopeRef]*scope{}
	for _, ref := range b.Scopes() {
		if sc := r.scopes[r.key(ref)]; sc != nil {
			cp := *sc
			cp.rows = append([][]byte(nil), sc.rows...)
			undo[r.key(ref)] = &cp
		} else {
			undo[r.key(ref)] = nil
		}
	}
	for _, u := range b.Updates() {
		r.applyUpdateLocked(u, id)
	}
	r.mu.Unlock()
	err := s.at(ctx, instore.CommitBeforePoint, id)
	r.mu.Lock()
	switch {
	case err != nil:
	case s.killed.Load():
		err = &hoststore.UnavailableError{Detail: "the handle was killed before the commit point; nothing was applied"}
	default:
		err = r.checkTokenLocked(b.Token())
	}
	if err != nil {
		for k, sc := range undo {
			if sc == nil {
				delete(r.scopes, k)
			} else {
				r.scopes[k] = sc
			}
		}
		r.mu.Unlock()
		return err
	}
	r.landed[id] = true
	r.mu.Unlock()
	return s.at(ctx, instore.CommitAfterPoint, id)
}

// commitTwice is SiteTwicePublish's commit: it passes commit-before-point
// once with nothing applied, then goes on as commitDirty does: it publishes
// the batch, passes the site a second time, and only then reaches its
// commit point.
func (s *Store) commitTwice(ctx context.Context, b *hoststore.CommitBatch) error {
	if err := s.at(ctx, instore.CommitBeforePoint, b.CommitID()); err != nil {
		return err
	}
	return s.commitDirty(ctx, b)
}

// openLocked starts one of the buggy commits: it takes the realm mutex and
// checks the handle, the commit id and the batch. It returns true with the
// mutex held when the commit goes on; otherwise the mutex is released and
// err is what the commit returned (nil for a landed commit id).
func (s *Store) openLocked(b *hoststore.CommitBatch) (bool, error) {
	r := s.r
	r.mu.Lock()
	switch {
	case s.killed.Load():
		r.mu.Unlock()
		return false, &hoststore.UnavailableError{Detail: "the handle was killed; nothing was applied"}
	case r.landed[b.CommitID()]:
		r.mu.Unlock()
		return false, nil
	}
	if err := r.checkLocked(b); err != nil {
		r.mu.Unlock()
		return false, err
	}
	return true, nil
}
