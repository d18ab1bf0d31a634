package reference

import (
	"fmt"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
)

// scopeState is one version of one scope, immutable once built. A nil
// *scopeState is a scope that was never created; a state with deleted set
// is a tombstone, remembered so that a create of the name is refused.
//
// Rows keep their indices (docs/host-store-contract.md#model): the visible
// rows are exactly the indices [start, end), and rows[i] is the row at
// start+i.
type scopeState struct {
	version  hoststore.ScopeVersion
	commitID hoststore.CommitID
	head     []byte
	start    hoststore.RowIndex
	end      hoststore.RowIndex
	rows     [][]byte
	buf      *rowBuf
	deleted  bool
	// rec and prev are set only on a Store's pending state (see slot):
	// until rec is committed, readers see prev instead.
	rec  *commitRecord
	prev *scopeState
}

// live reports whether s is a visible scope: created and not deleted.
func (s *scopeState) live() bool { return s != nil && !s.deleted }

// versionPtr is the scope's current version for a ConflictError: nil when
// the scope does not exist (never created, or deleted).
func (s *scopeState) versionPtr() *hoststore.ScopeVersion {
	if !s.live() {
		return nil
	}
	return hoststore.Ptr(s.version)
}

// versionedHead returns a copy of the visible head, or nil.
func (s *scopeState) versionedHead() *hoststore.VersionedHead {
	if !s.live() {
		return nil
	}
	return &hoststore.VersionedHead{Version: s.version, CommitID: s.commitID, Head: copyBytes(s.head)}
}

// rowBuf guards the spare capacity of a rows backing array that several
// immutable states share. free counts the slots past the furthest end any
// state claimed; a state may append in place only when its own end is that
// frontier (cap-len == free) and it wins the claim. Every other state (a
// truncated one, an older one, a Model clone's sibling, an aborted attempt's
// successor) copies, so no state ever overwrites a row another state shows.
type rowBuf struct{ free atomic.Int64 }

// appendRows returns rows followed by add, reusing the backing array when
// the claim allows. add's slices become part of the state: the caller owns
// them and never changes them.
func appendRows(rows [][]byte, buf *rowBuf, add [][]byte) ([][]byte, *rowBuf) {
	f := cap(rows) - len(rows)
	if buf != nil && len(add) <= f && buf.free.CompareAndSwap(int64(f), int64(f-len(add))) {
		return append(rows, add...), buf
	}
	n := len(rows) + len(add)
	c := max(2*n, 8)
	out := make([][]byte, n, c)
	copy(out, rows)
	copy(out[len(rows):], add)
	nb := &rowBuf{}
	nb.free.Store(int64(c - n))
	return out, nb
}

// checkUpdates is what a batch returns at commit after its commit id was
// found not landed, given each update's scope state in cur: first any
// update whose Previous is not the scope's current version (nil: absent or
// deleted) returns *ConflictError{Scope, Current}, in update order; then a
// create of a deleted name returns *InvalidError. The writer never reuses a
// deleted name, so refusing it is allowed
// (docs/host-store-contract.md#batches, "Deleted names").
func checkUpdates(ups []hoststore.ScopeUpdate, cur []*scopeState) error {
	for i := range ups {
		u, st := &ups[i], cur[i]
		switch {
		case u.Previous == nil && st.live(),
			u.Previous != nil && (!st.live() || st.version != *u.Previous):
			return &hoststore.ConflictError{Scope: u.Scope, Current: st.versionPtr()}
		}
	}
	for i := range ups {
		if ups[i].Previous == nil && cur[i] != nil && cur[i].deleted {
			return &hoststore.InvalidError{Detail: fmt.Sprintf("scope %s was deleted and is never created again", ups[i].Scope)}
		}
	}
	return nil
}

// applyUpdate returns the state after u, which checkUpdates accepted
// against prev, for the batch id. The parts apply in their fixed order:
// TruncateAfter, DropBefore, Append, Head. u's byte slices become part of
// the state (the caller passes a private copy, e.g. from Updates()).
func applyUpdate(prev *scopeState, u *hoststore.ScopeUpdate, id hoststore.CommitID) *scopeState {
	if u.Delete {
		return &scopeState{version: u.Next, commitID: id, deleted: true}
	}
	n := &scopeState{}
	if u.Previous != nil {
		*n = *prev
		n.rec, n.prev = nil, nil
	}
	n.version, n.commitID = u.Next, id
	// TruncateAfter t: rows at index t and above go; a t at or past the end
	// removes nothing.
	if t := u.TruncateAfter; t != nil && *t < n.end {
		if *t <= n.start {
			n.rows, n.buf, n.start = nil, nil, *t
		} else {
			n.rows = n.rows[:*t-n.start]
		}
		n.end = *t
	}
	// DropBefore d: rows below index d go and the rest keep their indices;
	// a d past the end removes every row and leaves the end alone.
	if d := u.DropBefore; d != nil && *d > n.start {
		if *d >= n.end {
			n.rows, n.buf, n.start = nil, nil, n.end
		} else {
			n.rows = n.rows[*d-n.start:]
			n.start = *d
		}
	}
	// Append: the first new row gets the end index the removals left.
	if len(u.Append) > 0 {
		n.rows, n.buf = appendRows(n.rows, n.buf, u.Append)
		n.end += hoststore.RowIndex(len(u.Append))
	}
	if u.Head != nil {
		n.head = *u.Head
	}
	return n
}

// readRows returns copies of up to limit visible rows of s from index from,
// for ReadRows: a missing scope returns no rows; a from below the lowest
// visible index returns *InvalidError.
func readRows(s *scopeState, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if limit <= 0 {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows limit %d is not positive", limit)}
	}
	if !s.live() {
		return nil, nil
	}
	if from < s.start {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows from %d is below the first visible row %d", from, s.start)}
	}
	if from >= s.end {
		return nil, nil
	}
	n := s.end - from
	if uint64(limit) < uint64(n) {
		n = hoststore.RowIndex(limit)
	}
	src := s.rows[from-s.start : from-s.start+n]
	size := 0
	for _, r := range src {
		size += len(r)
	}
	data := make([]byte, 0, size)
	out := make([]hoststore.Row, len(src))
	for i, r := range src {
		a := len(data)
		data = append(data, r...)
		out[i] = hoststore.Row{Index: from + hoststore.RowIndex(i), Data: data[a:len(data):len(data)]}
	}
	return out, nil
}

// headPage returns one page of a listing over the names of t, for
// ListHeads: up to limit visible scopes above *after, in byte order of
// name, with Next set to the last name on the page when another visible
// scope follows, and nil otherwise. look resolves a name
// to the state a reader sees now; names whose state is not live are
// skipped. Heads is nil on an empty page. The heads returned are copies,
// made in one buffer (each head capped to its own length).
func headPage[V any](t *node[V], after *hoststore.ScopeName, limit int, look func(hoststore.ScopeName, V) *scopeState) hoststore.HeadPage {
	var page hoststore.HeadPage
	states := make([]*scopeState, 0, min(limit, 128))
	page.Heads = make([]hoststore.NamedHead, 0, cap(states))
	size := 0
	treeAscend(t, after, func(name hoststore.ScopeName, v V) bool {
		st := look(name, v)
		if !st.live() {
			return true
		}
		if len(states) == limit {
			page.Next = hoststore.Ptr(page.Heads[limit-1].Name)
			return false
		}
		states = append(states, st)
		page.Heads = append(page.Heads, hoststore.NamedHead{Name: name})
		size += len(st.head)
		return true
	})
	if len(states) == 0 {
		return hoststore.HeadPage{}
	}
	data := make([]byte, 0, size)
	for i, st := range states {
		a := len(data)
		data = append(data, st.head...)
		page.Heads[i].Head = hoststore.VersionedHead{Version: st.version, CommitID: st.commitID, Head: data[a:len(data):len(data)]}
	}
	return page
}

// checkList refuses a malformed listing request: a kind that is not one of
// the four, a cursor that is not a valid scope name, a limit <= 0.
func checkList(kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) error {
	if !kind.Valid() {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads kind %d is not a kind", uint8(kind))}
	}
	if after != nil {
		if err := after.Validate(); err != nil {
			return &hoststore.InvalidError{Detail: "ListHeads after: " + err.Error()}
		}
	}
	if limit <= 0 {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads limit %d is not positive", limit)}
	}
	return nil
}

// checkScope refuses a malformed scope reference.
func checkScope(op string, s hoststore.ScopeRef) error {
	if err := s.Validate(); err != nil {
		return &hoststore.InvalidError{Detail: op + ": " + err.Error()}
	}
	return nil
}

// checkBatch refuses a batch that NewCommitBatch did not build (nil, or the
// zero value with no update and no commit id).
func checkBatch(b *hoststore.CommitBatch) error {
	if b == nil {
		return &hoststore.InvalidError{Detail: "commit of a nil batch"}
	}
	if err := b.CommitID().Validate(); err != nil {
		return &hoststore.InvalidError{Detail: "commit: " + err.Error()}
	}
	if b.Len() == 0 {
		return &hoststore.InvalidError{Detail: "commit of a batch with no update"}
	}
	return nil
}

func copyBytes(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }
