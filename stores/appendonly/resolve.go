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

// batch is one committed batch: its first marker and one update per scope.
type batch struct {
	id      hoststore.CommitID
	token   uint64
	seq     int64
	updates map[hoststore.ScopeRef]*logUpdate
}

// beats reports whether b wins over o at one version: the higher token,
// then the lower commit id (byte order).
func (b *batch) beats(o *batch) bool {
	if b.token != o.token {
		return b.token > o.token
	}
	return b.id < o.id
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
	batches := visibleBatches(markers, acquires, updates)
	chains := resolveChains(batches)
	views := make(map[hoststore.ScopeRef]*view, len(chains))
	for ref, chain := range chains {
		views[ref] = replay(ref, chain)
	}
	return views
}

// visibleBatches keeps each commit id's first marker, drops the batches
// fenced out by an acquire ordered before their marker, and gathers their
// updates (one per scope: a copy written twice by a retry collapses).
func visibleBatches(markers []logMarker, acquires []logAcquire, updates []logUpdate) map[hoststore.CommitID]*batch {
	out := map[hoststore.CommitID]*batch{}
	seen := map[hoststore.CommitID]bool{}
	var highest uint64
	a := 0
	for _, m := range markers {
		for a < len(acquires) && acquires[a].seq < m.seq {
			highest = max(highest, acquires[a].token)
			a++
		}
		if seen[m.id] {
			continue
		}
		seen[m.id] = true
		if m.token < highest {
			continue // fenced out (obligation 5)
		}
		out[m.id] = &batch{id: m.id, token: m.token, seq: m.seq, updates: map[hoststore.ScopeRef]*logUpdate{}}
	}
	for i := range updates {
		u := &updates[i]
		if b, ok := out[u.id]; ok {
			if _, dup := b.updates[u.scope]; !dup {
				b.updates[u.scope] = u
			}
		}
	}
	return out
}

// resolveChains decides which batches are visible and returns, per scope,
// the chain of visible batches from its creation, in version order. Each
// round resolves every scope's chain among the batches still in; a batch
// off the chain of any scope it writes is out; rounds go on until none is
// removed.
func resolveChains(batches map[hoststore.CommitID]*batch) map[hoststore.ScopeRef][]*batch {
	byScope := map[hoststore.ScopeRef][]*batch{}
	for _, b := range batches {
		for ref := range b.updates {
			byScope[ref] = append(byScope[ref], b)
		}
	}
	in := make(map[*batch]bool, len(batches))
	for _, b := range batches {
		in[b] = true
	}
	for {
		chains := map[hoststore.ScopeRef][]*batch{}
		onChain := map[*batch]int{}
		for ref, cands := range byScope {
			chain := scopeChain(ref, cands, in)
			for _, b := range chain {
				onChain[b]++
			}
			if len(chain) > 0 {
				chains[ref] = chain
			}
		}
		removed := false
		for b := range in {
			if onChain[b] != len(b.updates) {
				delete(in, b)
				removed = true
			}
		}
		if !removed {
			return chains
		}
	}
}

// scopeChain walks one scope's versions from the absent state: at each
// version the best batch still in whose update applies to it wins; a
// delete ends the chain.
func scopeChain(ref hoststore.ScopeRef, cands []*batch, in map[*batch]bool) []*batch {
	byPrev := map[uint64][]*batch{}
	for _, b := range cands {
		if in[b] {
			p := b.updates[ref].previous
			byPrev[p] = append(byPrev[p], b)
		}
	}
	var chain []*batch
	cur := uint64(0)
	for {
		var best *batch
		for _, b := range byPrev[cur] {
			if best == nil || b.beats(best) {
				best = b
			}
		}
		if best == nil {
			return chain
		}
		chain = append(chain, best)
		u := best.updates[ref]
		if u.deleted || u.next != cur+1 {
			return chain
		}
		cur = u.next
	}
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
