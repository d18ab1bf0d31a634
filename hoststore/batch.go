package hoststore

import (
	"fmt"
)

// ScopeUpdate says what a batch does to one scope. Its parts apply in the
// order TruncateAfter, DropBefore, Append, Head.
type ScopeUpdate struct {
	// Scope is the scope the update writes.
	Scope ScopeRef
	// Previous is the version the update applies to; nil creates the scope.
	Previous *ScopeVersion
	// Next is the version after the batch: *Previous+1, or FirstVersion when creating.
	Next ScopeVersion
	// Head is the new head; nil keeps the current one. A creating update must
	// set it. An empty non-nil head is a head.
	Head *[]byte
	// Append holds rows appended in order; the first takes the end index left
	// after any truncation.
	Append [][]byte
	// TruncateAfter removes every row whose index is at least it, so the next
	// appended row takes it. At or past the end nothing is removed.
	TruncateAfter *RowIndex
	// DropBefore removes every row whose index is below it, without
	// renumbering the rest. Past the end every row is removed and the end
	// index stays where it was.
	DropBefore *RowIndex
	// Delete deletes the scope with its head and rows. Nothing else may be set.
	Delete bool
}

// Creates reports whether u creates its scope.
func (u ScopeUpdate) Creates() bool { return u.Previous == nil }

// Bytes counts the head and row bytes of u, as the batch limit counts them.
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

// Validate reports the first rule of "Batches" and "Limits" that u breaks on
// its own, or nil. The error names the rule.
func (u ScopeUpdate) Validate() error {
	if err := u.Scope.Validate(); err != nil {
		return fmt.Errorf("update of %s: %w", u.Scope, err)
	}
	if u.Delete {
		if u.Previous == nil {
			return fmt.Errorf("update of %s: a creating update cannot delete", u.Scope)
		}
		if u.Head != nil || len(u.Append) > 0 || u.TruncateAfter != nil || u.DropBefore != nil {
			return fmt.Errorf("update of %s: a delete sets nothing else (head, append, truncate_after, drop_before)", u.Scope)
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
			return fmt.Errorf("update of %s: a creating update removes no rows (truncate_after, drop_before)", u.Scope)
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

// CommitBatch is one atomic multi-scope batch: a commit id, the fence token
// of its writer and one update per scope it writes. Build it with
// NewCommitBatch; a batch is immutable once built.
type CommitBatch struct {
	id      CommitID
	token   FenceToken
	updates []ScopeUpdate
	bytes   int
}

// NewCommitBatch builds a batch, refusing with an error that names the rule:
// no update; two updates of one scope; a bad kind, name or commit id; a
// creating update without a head, or with TruncateAfter, DropBefore or
// Delete; an update whose Next is not the one after Previous; a Delete with
// anything else set; a row over MaxRowBytes; more than MaxBatchBytes of
// heads and rows in all. The batch keeps its own copy of updates.
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

// CommitID is the batch's commit id.
func (b *CommitBatch) CommitID() CommitID { return b.id }

// Token is the fence token of the batch's writer.
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

// Len is the number of updates, without copying them.
func (b *CommitBatch) Len() int { return len(b.updates) }

// Scopes lists the scopes the batch writes, in the order of its updates.
func (b *CommitBatch) Scopes() []ScopeRef {
	out := make([]ScopeRef, len(b.updates))
	for i, u := range b.updates {
		out[i] = u.Scope
	}
	return out
}

// Bytes counts the batch's heads plus rows.
func (b *CommitBatch) Bytes() int { return b.bytes }

// String summarises the batch for traces: id, token and scopes.
func (b *CommitBatch) String() string {
	return fmt.Sprintf("batch %q token %d scopes %v (%d bytes)", b.id, b.token, b.Scopes(), b.bytes)
}
