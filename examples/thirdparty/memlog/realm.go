package memlog

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Factory is one realm, which starts empty. It implements
// hoststore.HostStoreFactory: every Open is a new handle ("process") over
// the same realm.
type Factory struct {
	timing hoststore.FenceTiming

	// mu guards every field below. It is held only for look-ups, the fence
	// operations and the apply at a commit point: never while a commit waits
	// for a scope lock or at a failpoint.
	mu     sync.Mutex
	scopes map[hoststore.ScopeRef]*scopeState // nil entry never stored; tombstones kept
	names  [hoststore.KindRecord + 1][]hoststore.ScopeName
	locks  map[hoststore.ScopeRef]chan struct{}
	landed map[hoststore.CommitID]struct{}
	token  hoststore.FenceToken // highest token acquired; 0: none
	expiry time.Duration        // the holder's lease ends at this clock reading
	now    time.Duration        // the manual clock
}

var _ hoststore.HostStoreFactory = (*Factory)(nil)

// NewFactory returns an empty realm with the default fence timing (10 s
// renew interval, 30 s lease).
func NewFactory() *Factory {
	return &Factory{
		timing: hoststore.DefaultFenceTiming(),
		scopes: map[hoststore.ScopeRef]*scopeState{},
		locks:  map[hoststore.ScopeRef]chan struct{}{},
		landed: map[hoststore.CommitID]struct{}{},
	}
}

// Open returns a new handle on the realm, standing for a new process: it
// shares the realm's data with earlier handles and no state of theirs. It fails only when ctx has ended.
func (f *Factory) Open(ctx context.Context) (hoststore.HostStore, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Store{realm: f, dead: make(chan struct{})}, nil
}

// LapseFenceLeases advances the realm's manual clock past every recorded
// lease, so the holder is no longer live. The token stays the highest.
func (f *Factory) LapseFenceLeases(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = max(f.now, f.expiry) + time.Second
	return nil
}

// state returns the scope's current state (nil: never created).
func (f *Factory) state(s hoststore.ScopeRef) *scopeState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scopes[s]
}

// lockOf returns the scope's commit lock: a channel with room for one, so
// that a commit can wait for it and still honour its context and its
// handle's death.
func (f *Factory) lockOf(s hoststore.ScopeRef) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.locks[s]
	if l == nil {
		l = make(chan struct{}, 1)
		f.locks[s] = l
	}
	return l
}

// landedID reports whether a batch with commit id id landed.
func (f *Factory) landedID(id hoststore.CommitID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.landed[id]
	return ok
}

// applyLocked makes every new state of one batch visible at once and
// records its commit id: the batch's commit point. Called with mu held.
func (f *Factory) applyLocked(id hoststore.CommitID, refs []hoststore.ScopeRef, next []*scopeState) {
	for i, s := range refs {
		old := f.scopes[s]
		f.scopes[s] = next[i]
		switch {
		case next[i].deleted && old.live():
			f.names[s.Kind] = removeName(f.names[s.Kind], s.Name)
		case !next[i].deleted && !old.live():
			f.names[s.Kind] = insertName(f.names[s.Kind], s.Name)
		}
	}
	f.landed[id] = struct{}{}
}

// insertName inserts n into the sorted names (byte order of Go strings).
func insertName(names []hoststore.ScopeName, n hoststore.ScopeName) []hoststore.ScopeName {
	i, found := slices.BinarySearch(names, n)
	if found {
		return names
	}
	return slices.Insert(names, i, n)
}

// removeName removes n from the sorted names.
func removeName(names []hoststore.ScopeName, n hoststore.ScopeName) []hoststore.ScopeName {
	i, found := slices.BinarySearch(names, n)
	if !found {
		return names
	}
	return slices.Delete(names, i, i+1)
}

// compareRefs orders scopes by kind, then by the bytes of their names: the
// order commits take scope locks in.
func compareRefs(a, b hoststore.ScopeRef) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}
