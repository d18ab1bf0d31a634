package postgres

import (
	"fmt"

	"github.com/conform-spi/conform/hoststore"
)

// scopeRow is a scope's stored state as a commit reads it under its lock.
// Visible rows are exactly the indices [start, end): removed rows are
// deleted in the batch that removes them.
type scopeRow struct {
	exists  bool // a row exists, live or a tombstone
	deleted bool // the row is a tombstone
	version int64
	start   int64
	end     int64
}

// live reports whether the scope is visible.
func (r scopeRow) live() bool { return r.exists && !r.deleted }

// current is the version a *ConflictError reports: nil when the scope does not
// exist or was deleted.
func (r scopeRow) current() *hoststore.ScopeVersion {
	if !r.live() {
		return nil
	}
	return hoststore.Ptr(hoststore.ScopeVersion(r.version))
}

// step is what one update writes: its scope's state after the update, the
// rows it removes (idx < dropBelow or idx >= dropFrom, when remove is set)
// and the index its first appended row takes.
type step struct {
	u         hoststore.ScopeUpdate
	before    scopeRow
	after     scopeRow
	remove    bool
	dropBelow int64
	dropFrom  int64
	appendAt  int64
}

// checkUpdates is what a batch whose commit id has not landed returns
// against the scopes' states cur (aligned with ups): first, in update
// order, an update whose Previous is not the scope's version (nil: absent
// or deleted) is *ConflictError{Scope, Current}; then a create of a deleted
// name is *InvalidError, a refusal the contract allows
// (docs/host-store-contract.md#edges).
func checkUpdates(ups []hoststore.ScopeUpdate, cur []scopeRow) error {
	for i, u := range ups {
		st := cur[i]
		if (u.Previous == nil && st.live()) || (u.Previous != nil && (!st.live() || hoststore.ScopeVersion(st.version) != *u.Previous)) {
			return &hoststore.ConflictError{Scope: u.Scope, Current: st.current()}
		}
	}
	for i, u := range ups {
		if u.Previous == nil && cur[i].deleted {
			return &hoststore.InvalidError{Detail: fmt.Sprintf("scope %s was deleted and is never created again", u.Scope)}
		}
	}
	return nil
}

// plan returns what u does to a scope in state cur, which checkUpdates
// accepted. The parts apply in their fixed order: TruncateAfter,
// DropBefore, Append, Head (docs/host-store-contract.md#batches).
func plan(cur scopeRow, u hoststore.ScopeUpdate) step {
	st := step{u: u, before: cur}
	n := scopeRow{exists: true, version: int64(u.Next)}
	if u.Previous != nil {
		n.start, n.end = cur.start, cur.end
	}
	if u.Delete {
		n.deleted = true
		n.start = n.end
	}
	// TruncateAfter t: rows at index t and above go; a t at or past the end
	// removes nothing.
	if u.TruncateAfter != nil {
		if t := clampIndex(*u.TruncateAfter); t < n.end {
			n.end = t
			n.start = min(n.start, t)
		}
	}
	// DropBefore d: rows below index d go and the rest keep their indices;
	// a d past the end removes every row and leaves the end alone.
	if u.DropBefore != nil {
		if d := clampIndex(*u.DropBefore); d > n.start {
			n.start = min(d, n.end)
		}
	}
	if cur.exists && (n.start > cur.start || n.end < cur.end) && cur.end > cur.start {
		st.remove, st.dropBelow, st.dropFrom = true, n.start, n.end
	}
	// Append: the first new row gets the end index the removals left.
	st.appendAt = n.end
	n.end += int64(len(u.Append))
	st.after = n
	return st
}
