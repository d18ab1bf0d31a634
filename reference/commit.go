package reference

import (
	"context"
	"slices"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// Commit applies one batch atomically and meets the nine obligations at
// commit. In order, under the locks of the batch's scopes:
//   - a commit id that already landed returns nil and changes nothing, from any
//     handle, also for a retry racing the first send (it waits for the
//     first's scope locks). Each scope keeps the ids of the batches that
//     landed in it, under its own lock, so the check shares nothing
//     realm-wide;
//   - a token below the highest issued returns *hoststore.FencedOutError;
//     a token never issued (0 or above the highest) *hoststore.InvalidError;
//   - an update whose Previous is not its scope's current version returns
//     *hoststore.ConflictError{Scope, Current};
//   - a create of a deleted name returns *hoststore.InvalidError;
//   - otherwise the batch lands in every scope at one commit point, where
//     the token is checked again atomically with respect to AcquireFence.
//
// Independence: a commit takes only its own scopes' locks, in a fixed order
// (kind, then name), so two batches never deadlock and scopes commit
// concurrently; it holds them for the whole commit, failpoints included.
// No reader waits on them. The store keeps copies of the batch's bytes.
//
// In-store failpoints: instore.CommitLocked right after the locks are taken,
// instore.CommitBeforePoint just before the commit point,
// instore.CommitAfterPoint just after it. An error from one (a crash, or ctx
// ending while held) is returned at once: before the point nothing was
// applied, after it the batch stays applied. A handle killed meanwhile
// returns *hoststore.UnavailableError before the point (nothing applied)
// and *hoststore.IndeterminateError after it (the answer is lost).
//
// A call whose ctx already ended, or ends while waiting for a scope lock,
// returns ctx.Err() and applies nothing.
func (s *Store) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if err := checkBatch(b); err != nil {
		return err
	}
	var bufs txnBufs
	t := newTxn(s, b, &bufs)
	defer t.unlock()
	if err := t.lock(ctx); err != nil {
		return err
	}
	return t.run(ctx)
}

// txn is one commit in flight. Its slices are aligned with ups; for a
// batch of up to two updates they live in a txnBufs on the caller's stack.
type txn struct {
	s      *Store
	r      *realm
	id     hoststore.CommitID
	token  hoststore.FenceToken
	ups    []hoststore.ScopeUpdate
	slots  []*slot
	order  []int // lock order: indices of ups sorted by kind, then name
	locked int   // how many of order are locked
	prev   []*scopeState
	next   []*scopeState
	rec    *commitRecord // the commit point of a batch over several scopes
	staged bool
}

// txnBufs backs the slices of a txn over at most two scopes.
type txnBufs struct {
	slots  [2]*slot
	order  [2]int
	states [4]*scopeState
}

func newTxn(s *Store, b *hoststore.CommitBatch, bufs *txnBufs) txn {
	ups := b.Updates() // a private deep copy: the states keep its bytes
	n := len(ups)
	t := txn{s: s, r: s.realm, id: b.CommitID(), token: b.Token(), ups: ups}
	if n <= len(bufs.slots) {
		t.slots, t.order, t.prev, t.next = bufs.slots[:n], bufs.order[:n], bufs.states[:n], bufs.states[n:2*n]
	} else {
		states := make([]*scopeState, 2*n)
		t.slots, t.order, t.prev, t.next = make([]*slot, n), make([]int, n), states[:n], states[n:]
	}
	for i := range ups {
		t.slots[i] = s.realm.slotFor(ups[i].Scope)
		t.order[i] = i
	}
	if n > 1 {
		slices.SortFunc(t.order, func(a, b int) int { return compareRefs(ups[a].Scope, ups[b].Scope) })
	}
	return t
}

// lock takes the scope locks in order; it gives up when ctx ends or the
// handle is killed (t.unlock releases what it took).
func (t *txn) lock(ctx context.Context) error {
	for _, i := range t.order {
		l := t.slots[i].lock
		select {
		case l <- struct{}{}:
		default:
			select {
			case l <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			case <-t.s.dead:
				return errKilled()
			}
		}
		t.locked++
	}
	return nil
}

func (t *txn) unlock() {
	for k := t.locked - 1; k >= 0; k-- {
		<-t.slots[t.order[k]].lock
	}
	t.locked = 0
}

// run is the commit under the locks: checks, staging, the commit point.
func (t *txn) run(ctx context.Context) error {
	if err := instore.At(ctx, instore.CommitLocked, t.id); err != nil {
		return err
	}
	if t.s.killed.Load() {
		return errKilled()
	}
	if t.landed() {
		return nil
	}
	if err := t.r.fence.check("commit", t.token); err != nil {
		return err
	}
	for i, sl := range t.slots {
		t.prev[i] = sl.visible()
	}
	if err := checkUpdates(t.ups, t.prev); err != nil {
		return err
	}
	t.stage()
	if err := instore.At(ctx, instore.CommitBeforePoint, t.id); err != nil {
		t.abort()
		return err
	}
	if err := t.point(); err != nil {
		t.abort()
		return err
	}
	t.finish()
	if err := instore.At(ctx, instore.CommitAfterPoint, t.id); err != nil {
		return err
	}
	if t.s.killed.Load() {
		return &hoststore.IndeterminateError{Detail: "the handle was killed after the commit point of " + string(t.id) + "; the answer is lost"}
	}
	return nil
}

// stage builds the new states and makes them ready for the point: a
// created name enters the index (unlisted until its state is visible), and
// a batch over several scopes publishes its pending states (see slot).
func (t *txn) stage() {
	t.staged = true
	for i := range t.ups {
		t.next[i] = applyUpdate(t.prev[i], &t.ups[i], t.id)
		if t.ups[i].Previous == nil {
			t.r.addName(t.ups[i].Scope, t.slots[i])
		}
	}
	if len(t.ups) > 1 {
		t.rec = &commitRecord{}
		for i, sl := range t.slots {
			t.next[i].rec, t.next[i].prev = t.rec, t.prev[i]
			sl.cur.Store(t.next[i])
		}
	}
}

// point is the commit point: under a point lock of the fence (see fence),
// the token is checked again and the batch becomes visible in one atomic
// step (the record, or the one scope's state), and its commit id is
// recorded landed. A handle killed before it applies nothing.
func (t *txn) point() error {
	l := t.r.fence.pointLock(t.slots[t.order[0]].shard)
	l.RLock()
	defer l.RUnlock()
	if t.s.killed.Load() {
		return errKilled()
	}
	if err := t.r.fence.check("commit", t.token); err != nil {
		return err
	}
	if t.rec != nil {
		t.rec.state.Store(recCommitted)
	} else {
		t.slots[0].cur.Store(t.next[0])
	}
	for _, sl := range t.slots {
		if sl.landed == nil {
			sl.landed = map[hoststore.CommitID]struct{}{}
		}
		sl.landed[t.id] = struct{}{}
	}
	return nil
}

// landed reports whether the batch already landed: its commit id is in the
// landed set of one of its scopes (all of them, when the writer sends a
// batch again unchanged, as it does).
func (t *txn) landed() bool {
	for _, sl := range t.slots {
		if _, ok := sl.landed[t.id]; ok {
			return true
		}
	}
	return false
}

// abort undoes stage before the point; no reader ever saw the new states.
func (t *txn) abort() {
	if !t.staged {
		return
	}
	if t.rec != nil {
		t.rec.state.Store(recAborted)
		for i, sl := range t.slots {
			sl.cur.Store(t.prev[i])
		}
	}
	for i := range t.ups {
		if t.ups[i].Previous == nil {
			t.r.removeName(t.ups[i].Scope)
		}
	}
}

// finish tidies after the point: clean copies replace the pending states,
// deleted names leave the index (listings already skip them).
func (t *txn) finish() {
	if t.rec != nil {
		for i, sl := range t.slots {
			clean := *t.next[i]
			clean.rec, clean.prev = nil, nil
			sl.cur.Store(&clean)
		}
	}
	for i := range t.ups {
		if t.ups[i].Delete {
			t.r.removeName(t.ups[i].Scope)
		}
	}
}
