package hoststore

import (
	"fmt"
)

// ScopeUpdate is one scope's part of a batch. A store applies its parts in
// a fixed order: TruncateAfter, DropBefore, Append, then Head. See
// docs/host-store-contract.md#batches.
type ScopeUpdate struct {
	// Scope is the scope the update writes.
	Scope ScopeRef
	// Previous is the version the writer believes the scope is at. nil
	// means the update creates the scope.
	Previous *ScopeVersion
	// Next is the scope's version once the batch lands: *Previous+1, or
	// FirstVersion for a create.
	Next ScopeVersion
	// Head, when non-nil, replaces the head; nil leaves it as it is. A
	// create must set it. A non-nil empty slice is a head.
	Head *[]byte
	// Append holds new rows, in order. The first of them gets the end
	// index that TruncateAfter and DropBefore leave.
	Append [][]byte
	// TruncateAfter, set to t, removes the rows at index t and above, and
	// the next appended row gets index t. A t at or past the end removes
	// nothing.
	TruncateAfter *RowIndex
	// DropBefore, set to d, removes the rows below index d; the rows that
	// stay keep their indices. A d past the end removes every row and
	// leaves the end where it was, so the next append keeps its index.
	DropBefore *RowIndex
	// Delete removes the scope, head and rows. An update that deletes sets
	// no other part.
	Delete bool
}

// Creates reports whether u creates its scope (Previous is nil).
func (u ScopeUpdate) Creates() bool { return u.Previous == nil }

// Bytes returns the number of head and row bytes in u, as MaxBatchBytes
// counts them.
func (u ScopeUpdate) Bytes() int {
	n := 0
	if u.Head != nil {
		n += len(*u.Head)
	}
	for _, r := range u.Append {
		n += len(r)
	}
	return n
}

// Clone returns a deep copy of u: no slice or pointer is shared with it.
func (u ScopeUpdate) Clone() ScopeUpdate {
	c := u
	if u.Previous != nil {
		c.Previous = Ptr(*u.Previous)
	}
	if u.Head != nil {
		h := cloneBytes(*u.Head)
		if h == nil {
			h = []byte{}
		}
		c.Head = &h
	}
	if u.Append != nil {
		c.Append = make([][]byte, len(u.Append))
		for i, r := range u.Append {
			c.Append[i] = cloneBytes(r)
			if c.Append[i] == nil {
				c.Append[i] = []byte{}
			}
		}
	}
	if u.TruncateAfter != nil {
		c.TruncateAfter = Ptr(*u.TruncateAfter)
	}
	if u.DropBefore != nil {
		c.DropBefore = Ptr(*u.DropBefore)
	}
	return c
}

// Validate returns an error naming the first rule that u breaks by itself,
// or nil. The rules are those of docs/host-store-contract.md#batches and
// #limits that need no other update to check.
func (u ScopeUpdate) Validate() error {
	if err := u.Scope.Validate(); err != nil {
		return fmt.Errorf("update of %s: %w", u.Scope, err)
	}
	if u.Delete {
		if u.Previous == nil {
			return fmt.Errorf("update of %s: a creating update cannot delete", u.Scope)
		}
		if u.Head != nil || len(u.Append) > 0 || u.TruncateAfter != nil || u.DropBefore != nil {
			return fmt.Errorf("update of %s: a delete sets nothing else (Head, Append, TruncateAfter, DropBefore)", u.Scope)
		}
	}
	if u.Previous == nil {
		if u.Next != FirstVersion {
			return fmt.Errorf("update of %s: a creating update's next is %d, not the first version %d", u.Scope, u.Next, FirstVersion)
		}
		if u.Head == nil {
			return fmt.Errorf("update of %s: a creating update must set a head", u.Scope)
		}
		if u.TruncateAfter != nil || u.DropBefore != nil {
			return fmt.Errorf("update of %s: a creating update removes no rows (TruncateAfter, DropBefore)", u.Scope)
		}
	} else {
		p := *u.Previous
		if p < FirstVersion {
			return fmt.Errorf("update of %s: previous version %d is below the first version %d", u.Scope, p, FirstVersion)
		}
		if p == ^ScopeVersion(0) || u.Next != p+1 {
			return fmt.Errorf("update of %s: next is %d, not the one after previous %d", u.Scope, u.Next, p)
		}
	}
	for i, r := range u.Append {
		if len(r) > MaxRowBytes {
			return fmt.Errorf("update of %s: appended row %d is %d bytes, over the row limit of %d", u.Scope, i, len(r), MaxRowBytes)
		}
	}
	return nil
}

// CommitBatch is what Commit applies as one unit: the writer's commit id,
// the token the writer holds, and at most one update for each scope it
// writes. Only NewCommitBatch builds one, and a built batch does not
// change. See docs/host-store-contract.md#batches.
type CommitBatch struct {
	id      CommitID
	token   FenceToken
	updates []ScopeUpdate
	bytes   int
}

// NewCommitBatch returns a batch with commit id id, token token and a copy
// of updates. It returns an error naming the rule broken when there is no
// update, two updates of one scope, a bad kind, name or commit id, a create
// without a head or with TruncateAfter, DropBefore or Delete, a Next that
// is not one past Previous, a Delete with anything else set, a row over
// MaxRowBytes, or more than MaxBatchBytes of heads and rows in all.
func NewCommitBatch(id CommitID, token FenceToken, updates []ScopeUpdate) (*CommitBatch, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	if len(updates) == 0 {
		return nil, fmt.Errorf("batch %q: a batch needs at least one update", id)
	}
	seen := make(map[ScopeRef]struct{}, len(updates))
	total := 0
	for _, u := range updates {
		if err := u.Validate(); err != nil {
			return nil, fmt.Errorf("batch %q: %w", id, err)
		}
		if _, dup := seen[u.Scope]; dup {
			return nil, fmt.Errorf("batch %q: two updates of one scope %s", id, u.Scope)
		}
		seen[u.Scope] = struct{}{}
		total += u.Bytes()
	}
	if total > MaxBatchBytes {
		return nil, fmt.Errorf("batch %q: %d bytes of heads and rows, over the batch limit of %d", id, total, MaxBatchBytes)
	}
	b := &CommitBatch{id: id, token: token, updates: make([]ScopeUpdate, len(updates)), bytes: total}
	for i, u := range updates {
		b.updates[i] = u.Clone()
	}
	return b, nil
}

// CommitID returns the batch's commit id.
func (b *CommitBatch) CommitID() CommitID { return b.id }

// Token returns the fence token the batch's writer holds.
func (b *CommitBatch) Token() FenceToken { return b.token }

// Updates returns a deep copy of the batch's updates; a store cannot change
// the batch through it.
func (b *CommitBatch) Updates() []ScopeUpdate {
	out := make([]ScopeUpdate, len(b.updates))
	for i, u := range b.updates {
		out[i] = u.Clone()
	}
	return out
}

// Len returns the number of updates, without copying them.
func (b *CommitBatch) Len() int { return len(b.updates) }

// Scopes returns the scopes the batch writes, in the order of its updates.
func (b *CommitBatch) Scopes() []ScopeRef {
	out := make([]ScopeRef, len(b.updates))
	for i, u := range b.updates {
		out[i] = u.Scope
	}
	return out
}

// Bytes returns the batch's head and row bytes, as MaxBatchBytes counts
// them.
func (b *CommitBatch) Bytes() int { return b.bytes }

// String returns a summary of the batch for traces: id, token, scopes and
// bytes.
func (b *CommitBatch) String() string {
	return fmt.Sprintf("batch %q token %d scopes %v (%d bytes)", b.id, b.token, b.Scopes(), b.bytes)
}
