package reference

import (
	"cmp"
	"maps"
	"slices"

	"github.com/conform-spi/conform/hoststore"
)

// Model is the contract as a pure value: it applies accepted batches and
// returns what a correct store shows. It is deterministic and has no fence,
// clock or failpoint; tokens are not its concern. A Model is not safe for
// concurrent use; distinct Models (a Model and its clones) are independent.
type Model struct {
	states map[hoststore.ScopeRef]*scopeState // every scope ever created; deleted ones as tombstones
	names  [hoststore.KindRecord + 1]*node[struct{}]
	landed map[hoststore.CommitID]struct{}
}

// NewModel returns the model of an empty realm.
func NewModel() *Model {
	return &Model{states: map[hoststore.ScopeRef]*scopeState{}, landed: map[hoststore.CommitID]struct{}{}}
}

// Clone returns a deep copy: applying batches to either changes nothing the
// other shows. Scope states are immutable and shared; the maps are copied.
func (m *Model) Clone() *Model {
	c := &Model{states: maps.Clone(m.states), names: m.names, landed: maps.Clone(m.landed)}
	return c
}

// Apply applies b if it lands, all or nothing, and returns what a store's
// Commit returns. A commit id that already landed returns nil and changes
// nothing; this is checked first (docs/host-store-contract.md#ob-3). An
// update whose
// Previous is not the scope's current version (nil: absent or deleted)
// returns *hoststore.ConflictError{Scope, Current} and applies nothing. A
// create of a name that was deleted returns *hoststore.InvalidError. A nil
// batch, or one NewCommitBatch did not build, returns *hoststore.InvalidError.
func (m *Model) Apply(b *hoststore.CommitBatch) error {
	ups, cur, err := m.check(b)
	if err != nil || ups == nil {
		return err
	}
	id := b.CommitID()
	for i := range ups {
		u := &ups[i]
		m.states[u.Scope] = applyUpdate(cur[i], u, id)
		k := u.Scope.Kind
		switch {
		case u.Delete:
			m.names[k] = treeRemove(m.names[k], u.Scope.Name)
		case u.Previous == nil:
			m.names[k] = treeInsert(m.names[k], u.Scope.Name, struct{}{})
		}
	}
	m.landed[id] = struct{}{}
	return nil
}

// Check returns what Apply would return for b, applying nothing.
func (m *Model) Check(b *hoststore.CommitBatch) error {
	_, _, err := m.check(b)
	return err
}

// check returns the batch's updates and their scopes' current states when
// b would apply, nil updates and a nil error when its commit id landed.
func (m *Model) check(b *hoststore.CommitBatch) ([]hoststore.ScopeUpdate, []*scopeState, error) {
	if err := checkBatch(b); err != nil {
		return nil, nil, err
	}
	if m.Landed(b.CommitID()) {
		return nil, nil, nil
	}
	ups := b.Updates()
	cur := make([]*scopeState, len(ups))
	for i := range ups {
		cur[i] = m.states[ups[i].Scope]
	}
	if err := checkUpdates(ups, cur); err != nil {
		return nil, nil, err
	}
	return ups, cur, nil
}

// Landed reports whether a batch with commit id id was applied.
func (m *Model) Landed(id hoststore.CommitID) bool {
	_, ok := m.landed[id]
	return ok
}

// Head returns a copy of the scope's visible head, as LoadHead does, or nil
// when the scope is absent or deleted.
func (m *Model) Head(s hoststore.ScopeRef) *hoststore.VersionedHead {
	return m.states[s].versionedHead()
}

// Bounds returns the scope's visible rows as the indices [start, end);
// ok is false when the scope is absent or deleted.
func (m *Model) Bounds(s hoststore.ScopeRef) (start, end hoststore.RowIndex, ok bool) {
	st := m.states[s]
	if !st.live() {
		return 0, 0, false
	}
	return st.start, st.end, true
}

// ReadRows returns what a store's ReadRows returns: copies of up to limit
// visible rows in index order, from index from, fewer only where the scope
// ends; no rows and a nil error for a scope that does not exist;
// *hoststore.InvalidError for a from below the lowest visible index, for a
// limit <= 0 and for a malformed scope.
func (m *Model) ReadRows(s hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := checkScope("ReadRows", s); err != nil {
		return nil, err
	}
	return readRows(m.states[s], from, limit)
}

// ListHeads returns what a store's ListHeads returns: up to limit visible
// scopes of kind with names above *after (from the first name when after
// is nil), in byte order of name, each with a copy of its head. Next is the
// last name on the page when another visible scope follows, and nil
// otherwise. A limit <= 0, a kind that is not a kind or a malformed
// cursor returns *hoststore.InvalidError. A page costs O(limit + log n).
func (m *Model) ListHeads(kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if err := checkList(kind, after, limit); err != nil {
		return hoststore.HeadPage{}, err
	}
	return headPage(m.names[kind], after, limit, func(n hoststore.ScopeName, _ struct{}) *scopeState {
		return m.states[hoststore.ScopeRef{Kind: kind, Name: n}]
	}), nil
}

// Names returns the visible names of kind in byte order (nil for a kind
// that is not a kind or has none).
func (m *Model) Names(kind hoststore.ScopeKind) []hoststore.ScopeName {
	if !kind.Valid() {
		return nil
	}
	var out []hoststore.ScopeName
	treeAscend(m.names[kind], nil, func(n hoststore.ScopeName, _ struct{}) bool {
		out = append(out, n)
		return true
	})
	return out
}

// Scopes returns every scope ever created, deleted ones included, sorted by
// kind, then by name in byte order.
func (m *Model) Scopes() []hoststore.ScopeRef {
	out := slices.Collect(maps.Keys(m.states))
	slices.SortFunc(out, compareRefs)
	return out
}

// Deleted reports whether the scope was created and then deleted.
func (m *Model) Deleted(s hoststore.ScopeRef) bool {
	st := m.states[s]
	return st != nil && st.deleted
}

// compareRefs orders scopes by kind, then by name in byte order: the
// order of Scopes and the order in which a commit takes its scope locks.
func compareRefs(a, b hoststore.ScopeRef) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}
