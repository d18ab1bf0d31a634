package reference

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
)

// config is what the options set.
type config struct {
	timing hoststore.FenceTiming
	clock  *Clock
}

// Option configures a Factory.
type Option func(*config)

// WithTiming sets the fence timing the realm records leases with, which its
// handles return from FenceTiming. The default is
// hoststore.DefaultFenceTiming(). NewFactory panics on a timing that is
// not Valid (the zero value).
func WithTiming(t hoststore.FenceTiming) Option { return func(c *config) { c.timing = t } }

// WithClock sets the realm's clock (the default is a NewClock). Sharing a
// clock between factories moves all their leases together.
func WithClock(c *Clock) Option { return func(cfg *config) { cfg.clock = c } }

// Factory stands for one in-memory realm, which starts empty. It
// implements hoststore.HostStoreFactory.
type Factory struct {
	realm *realm
}

var _ hoststore.HostStoreFactory = (*Factory)(nil)

// NewFactory returns a factory over a new, empty realm.
func NewFactory(opts ...Option) *Factory {
	cfg := config{timing: hoststore.DefaultFenceTiming()}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.timing.Valid() {
		panic("reference: WithTiming got a fence timing that is not valid (use a hoststore constructor)")
	}
	if cfg.clock == nil {
		cfg.clock = NewClock()
	}
	return &Factory{realm: &realm{
		timing: cfg.timing,
		clock:  cfg.clock,
		slots:  newShardedMap[hoststore.ScopeRef, *slot](hashRef),
	}}
}

// Open returns a new handle (*Store) on the realm. The handle stands for a
// new process: it shares the realm's data with earlier handles and no state
// of theirs.
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Store{realm: f.realm, dead: make(chan struct{})}, nil
}

// LapseFenceLeases advances the realm's clock just past the recorded
// lease, so that no holder is live; it does nothing when none is.
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.realm.fence.lapse(f.realm.clock)
	return nil
}

// Clock returns the realm's clock.
func (f *Factory) Clock() *Clock { return f.realm.clock }

// realm is the state every handle of one factory shares. On the commit
// path it has no realm-wide lock (docs/host-store-contract.md#ob-8): the sharded maps lock
// one shard for one map operation, the name index is lock-free, and a
// commit takes one of the fence's point locks, shared, only around its
// commit point (see fence).
type realm struct {
	timing hoststore.FenceTiming
	clock  *Clock
	fence  fence
	slots  *shardedMap[hoststore.ScopeRef, *slot] // never removed
	// names holds, per kind, a persistent tree of names that is a superset
	// of the visible ones: a create enters its name before its commit point
	// (and leaves it again if it aborts), a delete removes it after. Writers
	// swap roots by compare-and-swap; readers never wait.
	names [hoststore.KindRecord + 1]atomic.Pointer[node[*slot]]
}

// slot is one scope of the realm: its writer lock, held for a whole
// commit, and its published state, which readers load without any lock.
//
// A batch over several scopes publishes in each a pending state: one that
// carries the batch's commit record and the state it replaces. Readers see
// the pending state only once the record is committed, and the replaced
// one before that or after an abort. All the batch's pending states share
// the record, so its commit point (one atomic step on the record) makes it
// visible in every scope at once: a reader that sees it in one scope sees
// it in every later load of another. After the point the writer publishes
// clean states again.
type slot struct {
	lock   chan struct{} // a one-token mutex that a waiter can leave on ctx or kill
	cur    atomic.Pointer[scopeState]
	shard  uint8                           // the fence point lock its commits take
	landed map[hoststore.CommitID]struct{} // ids of the batches past their commit point here; under lock
}

// commitRecord is the commit point of a batch over several scopes.
type commitRecord struct{ state atomic.Int32 }

const (
	recPending int32 = iota
	recCommitted
	recAborted
)

// visible returns the state a reader sees in the slot now (nil: never created).
func (s *slot) visible() *scopeState {
	st := s.cur.Load()
	if st == nil || st.rec == nil || st.rec.state.Load() == recCommitted {
		return st
	}
	return st.prev
}

// slotOf returns the scope's slot, or nil when no commit ever touched it.
func (r *realm) slotOf(s hoststore.ScopeRef) *slot {
	sl, _ := r.slots.load(s)
	return sl
}

// slotFor returns the scope's slot, making it if needed.
func (r *realm) slotFor(s hoststore.ScopeRef) *slot {
	if sl := r.slotOf(s); sl != nil {
		return sl
	}
	return r.slots.loadOrStore(s, func() *slot {
		return &slot{lock: make(chan struct{}, 1), shard: uint8(hashRef(r.slots.seed, s) % pointShards)}
	})
}

func hashRef(seed maphash.Seed, s hoststore.ScopeRef) uint64 {
	return maphash.String(seed, string(s.Name)) ^ uint64(s.Kind)
}

// visible returns the state a reader of s sees now.
func (r *realm) visible(s hoststore.ScopeRef) *scopeState {
	if sl := r.slotOf(s); sl != nil {
		return sl.visible()
	}
	return nil
}

// addName enters name into the kind's index; removeName takes it out.
func (r *realm) addName(s hoststore.ScopeRef, sl *slot) {
	for p := &r.names[s.Kind]; ; {
		old := p.Load()
		if _, ok := treeGet(old, s.Name); ok || p.CompareAndSwap(old, treeInsert(old, s.Name, sl)) {
			return
		}
	}
}

func (r *realm) removeName(s hoststore.ScopeRef) {
	for p := &r.names[s.Kind]; ; {
		old := p.Load()
		if nw := treeRemove(old, s.Name); nw == old || p.CompareAndSwap(old, nw) {
			return
		}
	}
}

// Store is one handle over a realm. It implements hoststore.HostStore and
// hoststore.Killer, and meets the nine obligations at commit. Readers never
// wait: LoadHead, ListHeads and ReadRows load published snapshots, so a
// commit held anywhere in flight holds up no read, no fence call and no
// commit on another scope.
type Store struct {
	realm    *realm
	killed   atomic.Bool
	dead     chan struct{}
	killOnce sync.Once
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
)

// Kill ends the handle as a crash would: every later call returns
// *hoststore.UnavailableError. A commit in flight applies nothing if it had
// not reached its commit point, and returns *hoststore.UnavailableError; if
// it had, the batch stays applied and the commit returns
// *hoststore.IndeterminateError. Kill may be called more than once.
func (s *Store) Kill() {
	s.killOnce.Do(func() {
		s.killed.Store(true)
		close(s.dead)
	})
}

// errKilled returns a call on a killed handle.
func errKilled() error { return &hoststore.UnavailableError{Detail: "the handle was killed"} }

// enter returns ctx.Err() when the caller's context ended, Unavailable
// when the handle was killed.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.killed.Load() {
		return errKilled()
	}
	return nil
}

// AcquireFence issues the next token of the realm and starts its holder's
// lease now, on the realm's clock. With Exclusive it returns
// *hoststore.HeldError{Holder, Remaining} while another lease is live. With
// Takeover it always issues a token, and SupersededLease is what was left
// of the live holder's lease, or zero. A mode that is neither returns
// *hoststore.InvalidError.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	if err := s.enter(ctx); err != nil {
		return hoststore.FenceGrant{}, err
	}
	return s.realm.fence.acquire(mode, s.realm.clock, s.realm.timing.Lease())
}

// RenewFence starts a fresh lease now for the holder of token when token is
// the highest issued, even after the last lease ran out. A superseded token
// returns
// *hoststore.FencedOutError{Current}; a token never issued (0, or above the
// highest) returns *hoststore.InvalidError.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	return s.realm.fence.renew(token, s.realm.clock, s.realm.timing.Lease())
}

// FenceTiming returns the timing the realm was configured with.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.realm.timing }

// LoadHead returns a copy of the scope's visible head, or nil, nil when the
// scope does not exist (never created, or deleted). A malformed scope returns
// *hoststore.InvalidError.
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := checkScope("LoadHead", scope); err != nil {
		return nil, err
	}
	return s.realm.visible(scope).versionedHead(), nil
}

// ListHeads returns up to limit visible scopes of kind with names above
// *after, in byte order of name, each with a copy of its head. Next is the
// last name on the page when another visible scope follows, and nil
// otherwise. A limit <= 0, a bad kind or a malformed cursor returns
// *hoststore.InvalidError. A page costs
// O(limit + log n) plus the scopes created or deleted in flight.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if err := s.enter(ctx); err != nil {
		return hoststore.HeadPage{}, err
	}
	if err := checkList(kind, after, limit); err != nil {
		return hoststore.HeadPage{}, err
	}
	return headPage(s.realm.names[kind].Load(), after, limit, func(_ hoststore.ScopeName, sl *slot) *scopeState {
		return sl.visible()
	}), nil
}

// ReadRows returns copies of up to limit visible rows of the scope, in
// index order from index from, fewer only where the scope ends. A scope
// that does not exist returns nil, nil. A from below the lowest visible
// index, a limit <= 0 or a malformed scope returns *hoststore.InvalidError.
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := checkScope("ReadRows", scope); err != nil {
		return nil, err
	}
	return readRows(s.realm.visible(scope), from, limit)
}

// String returns a name for the handle, for traces.
func (s *Store) String() string { return fmt.Sprintf("reference store %p", s.realm) }
