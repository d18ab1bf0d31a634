package appendonly

import (
	"sort"

	"github.com/conform-spi/conform/hoststore"
)

// logMarker is one row of markers.
type logMarker struct {
	seq   int64
	id    hoststore.CommitID
	token uint64
}

// logAcquire is one acquire row of fences.
type logAcquire struct {
	seq   int64
	token uint64
}

// logUpdate is one row of updates_log, without its head bytes.
type logUpdate struct {
	id         hoststore.CommitID
	scope      hoststore.ScopeRef
	previous   uint64 // 0: the update creates the scope
	next       uint64
	hasHead    bool
	truncAfter *uint64
	dropBefore *uint64
	deleted    bool
	appended   uint64
}

// batch is one commit id with a marker: its token and one update per scope.
type batch struct {
	id      hoststore.CommitID
	token   uint64
	updates map[hoststore.ScopeRef]*logUpdate
}

// send is one marker of a batch that fencing left in: a commit point at
// which the batch may become visible.
type send struct {
	seq int64
	b   *batch
}

// segment is a run of rows one update appended: ordinals 0..n-1 of batch
// id's update of the scope take indices base..base+n-1.
type segment struct {
	id      hoststore.CommitID
	base, n uint64
}

// view is a scope's visible state after its chain.
type view struct {
	version    hoststore.ScopeVersion
	id         hoststore.CommitID // the batch that wrote the version
	headID     hoststore.CommitID // the batch whose head is visible
	deleted    bool
	start, end uint64
	segments   []segment // disjoint, in index order; only [start, end) is visible
}

// resolve replays the log (see the package doc): it returns the view of
// every scope that some visible batch wrote. markers and acquires must be
// in seq order, updates in the order they were written.
func resolve(markers []logMarker, acquires []logAcquire, updates []logUpdate) map[hoststore.ScopeRef]*view {
	chains := resolveChains(sends(markers, acquires, updates))
	views := make(map[hoststore.ScopeRef]*view, len(chains))
	for ref, chain := range chains {
		views[ref] = replay(ref, chain)
	}
	return views
}

// sends gathers each commit id's updates (one per scope: a copy written
// twice by a retry collapses) and returns its markers in seq order, without
// those fenced out by an acquire ordered before them (obligation 5).
func sends(markers []logMarker, acquires []logAcquire, updates []logUpdate) []send {
	batches := map[hoststore.CommitID]*batch{}
	var out []send
	var highest uint64
	a := 0
	for _, m := range markers {
		for a < len(acquires) && acquires[a].seq < m.seq {
			highest = max(highest, acquires[a].token)
			a++
		}
		b := batches[m.id]
		if b == nil {
			b = &batch{id: m.id, token: m.token, updates: map[hoststore.ScopeRef]*logUpdate{}}
			batches[m.id] = b
		}
		if m.token < highest {
			continue // fenced out (obligation 5)
		}
		out = append(out, send{seq: m.seq, b: b})
	}
	for i := range updates {
		u := &updates[i]
		if b, ok := batches[u.id]; ok {
			if _, dup := b.updates[u.scope]; !dup {
				b.updates[u.scope] = u
			}
		}
	}
	return out
}

// resolveChains decides which batches are visible and returns, per scope,
// the chain of visible batches from its creation, in version order. It
// walks the sends in the order of their commit points (marker seqs) and
// decides each one once, at its commit point, against the scopes as the
// visible batches before it left them (see applies). A send that does not
// apply loses, in every scope its batch writes, for good: nothing after its
// commit point is looked at, so a later batch that creates the version it
// named does not bring it back, and a load that sees more of the log
// decides it the same way. A lost send never happened, so a later send of
// the same commit id is decided at its own commit point; once a send of a
// commit id is visible, its later sends change nothing (obligation 3).
func resolveChains(sends []send) map[hoststore.ScopeRef][]*batch {
	at := map[hoststore.ScopeRef]scopeAt{}
	chains := map[hoststore.ScopeRef][]*batch{}
	visible := map[*batch]bool{}
	for _, s := range sends {
		if visible[s.b] || !s.b.applies(at) {
			continue // landed already, or lost at this commit point (obligation 4)
		}
		visible[s.b] = true
		for ref, u := range s.b.updates {
			at[ref] = scopeAt{version: u.next, deleted: u.deleted}
			chains[ref] = append(chains[ref], s.b)
		}
	}
	return chains
}

// scopeAt is a scope's state between two commit points: its version (0
// when it was never created) and whether a delete ended it.
type scopeAt struct {
	version uint64
	deleted bool
}

// applies reports whether every update of b applies to its scope in at,
// the state at b's commit point, as the reference checks at commit
// (docs/host-store-contract.md#op-commit, steps 3 and 4): previous is the
// current version (a create finds no scope), and no update touches a
// deleted scope, a create of a deleted name included.
func (b *batch) applies(at map[hoststore.ScopeRef]scopeAt) bool {
	for ref, u := range b.updates {
		s := at[ref]
		if s.deleted || u.previous != s.version || u.next != s.version+1 {
			return false
		}
	}
	return true
}

// replay applies a scope's chain, each update's parts in their fixed order:
// TruncateAfter, DropBefore, Append, Head
// (docs/host-store-contract.md#batches).
func replay(ref hoststore.ScopeRef, chain []*batch) *view {
	v := &view{}
	for _, b := range chain {
		u := b.updates[ref]
		v.version, v.id = hoststore.ScopeVersion(u.next), b.id
		if u.deleted {
			v.deleted, v.start, v.segments = true, v.end, nil
			continue
		}
		if t := u.truncAfter; t != nil && *t < v.end {
			v.end = *t
			v.start = min(v.start, v.end)
			v.segments = cut(v.segments, v.end)
		}
		if d := u.dropBefore; d != nil && *d > v.start {
			v.start = min(*d, v.end)
		}
		if u.appended > 0 {
			v.segments = append(v.segments, segment{id: b.id, base: v.end, n: u.appended})
			v.end += u.appended
		}
		if u.hasHead {
			v.headID = b.id
		}
	}
	return v
}

// cut drops every row at or above end from segs.
func cut(segs []segment, end uint64) []segment {
	out := segs[:0:0]
	for _, s := range segs {
		if s.base >= end {
			continue
		}
		s.n = min(s.n, end-s.base)
		out = append(out, s)
	}
	return out
}

// piece is the part of one segment that a read covers: indices [lo, hi)
// of the rows that batch id appended from index base.
type piece struct {
	id           hoststore.CommitID
	base, lo, hi uint64
}

// rowsIn returns the pieces of segments covering the visible indices in
// [from, to), in index order.
func (v *view) rowsIn(from, to uint64) []piece {
	from, to = max(from, v.start), min(to, v.end)
	var out []piece
	for _, s := range v.segments {
		lo, hi := max(from, s.base), min(to, s.base+s.n)
		if lo < hi {
			out = append(out, piece{id: s.id, base: s.base, lo: lo, hi: hi})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	return out
}
