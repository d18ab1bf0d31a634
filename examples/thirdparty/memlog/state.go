package memlog

import (
	"fmt"

	"github.com/conform-spi/conform/hoststore"
)

// scopeState is one version of one scope, immutable once it is in the
// realm. The visible rows are the indices [start, end): rows[i] has index
// start+i ("Rows have stable indices"). A state with deleted set is a
// tombstone: the scope does not exist, and its name is not created again.
type scopeState struct {
	version  hoststore.ScopeVersion
	commitID hoststore.CommitID
	head     []byte
	start    hoststore.RowIndex
	end      hoststore.RowIndex
	rows     [][]byte
	deleted  bool
}

// live reports whether s is a visible scope.
func (s *scopeState) live() bool { return s != nil && !s.deleted }

// current is the scope's version for a ConflictError: nil when it does not
// exist.
func (s *scopeState) current() *hoststore.ScopeVersion {
	if !s.live() {
		return nil
	}
	return hoststore.Ptr(s.version)
}

// check returns why u cannot apply to the scope's state s, or nil:
// *ConflictError when u's Previous is not the scope's current version, and
// *InvalidError for a create of a deleted name, a refusal the contract
// allows.
func check(u *hoststore.ScopeUpdate, s *scopeState) error {
	switch {
	case u.Previous == nil && s != nil && s.deleted:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("scope %s was deleted; its name is not created again", u.Scope)}
	case u.Previous == nil && s.live(),
		u.Previous != nil && (!s.live() || s.version != *u.Previous):
		return &hoststore.ConflictError{Scope: u.Scope, Current: s.current()}
	}
	return nil
}

// next returns the state after u, which check accepted against s, written
// by the batch id. The parts apply in their fixed order: TruncateAfter,
// DropBefore, Append, Head. s is not changed; the new
// state shares its row bytes, which nobody changes.
func next(s *scopeState, u *hoststore.ScopeUpdate, id hoststore.CommitID) *scopeState {
	if u.Delete {
		return &scopeState{version: u.Next, commitID: id, deleted: true}
	}
	n := &scopeState{}
	if u.Previous != nil {
		*n = *s
	}
	n.version, n.commitID = u.Next, id
	// TruncateAfter t: the rows at index t and above go, and the next new
	// row gets index t. A t at or past the end changes nothing.
	if t := u.TruncateAfter; t != nil && *t < n.end {
		if *t <= n.start {
			n.rows, n.start = nil, *t
		} else {
			n.rows = n.rows[:*t-n.start]
		}
		n.end = *t
	}
	// DropBefore d: the rows below index d go; the others keep their
	// indices. A d past the end empties the scope but keeps its end.
	if d := u.DropBefore; d != nil && *d > n.start {
		if *d >= n.end {
			n.rows, n.start = nil, n.end
		} else {
			n.rows = n.rows[*d-n.start:]
			n.start = *d
		}
	}
	// Append: new rows start at the end index the removals left. A fresh
	// array, so that no two states ever write one backing array.
	if len(u.Append) > 0 {
		rows := make([][]byte, 0, len(n.rows)+len(u.Append))
		rows = append(rows, n.rows...)
		n.rows = append(rows, u.Append...)
		n.end += hoststore.RowIndex(len(u.Append))
	}
	if u.Head != nil {
		n.head = *u.Head
	}
	return n
}

// versionedHead returns a copy of the visible head, or nil.
func (s *scopeState) versionedHead() *hoststore.VersionedHead {
	if !s.live() {
		return nil
	}
	return &hoststore.VersionedHead{Version: s.version, CommitID: s.commitID, Head: clone(s.head)}
}

// read returns copies of up to limit visible rows from index from. A from
// below the lowest visible index is *InvalidError; a missing scope has no
// rows.
func (s *scopeState) read(from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if !s.live() {
		return []hoststore.Row{}, nil
	}
	if from < s.start {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows from %d is below the first visible row %d", from, s.start)}
	}
	if from >= s.end {
		return []hoststore.Row{}, nil
	}
	n := uint64(s.end - from)
	if uint64(limit) < n {
		n = uint64(limit)
	}
	out := make([]hoststore.Row, n)
	for i := range out {
		idx := from + hoststore.RowIndex(i)
		out[i] = hoststore.Row{Index: idx, Data: clone(s.rows[idx-s.start])}
	}
	return out, nil
}

// clone copies b; an empty row or head stays non-nil and empty.
func clone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }
