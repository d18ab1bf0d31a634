package hoststore

import "context"

// HostStore is one handle on a realm: the six operations a host store
// implements, plus the fence timing it declares. The contract of each
// operation is in docs/host-store-contract.md#operations.
//
// Every method that takes a context stops when the context ends and then
// returns ctx.Err(). Any other error it returns is one of the six error
// types of this package (docs/host-store-contract.md#errors); the harness
// counts anything else as a breach. The harness calls the methods from many
// goroutines at once.
type HostStore interface {
	// AcquireFence issues a fence token above every token the realm has
	// issued, makes it durable, and starts a lease for the caller on the
	// store's own clock. With Exclusive, it returns *HeldError while
	// another holder is live. With Takeover it always issues a token, and
	// FenceGrant.SupersededLease tells how much of the live holder's lease
	// was left, or zero if nobody was live. See
	// docs/host-store-contract.md#op-acquire-fence.
	AcquireFence(ctx context.Context, mode AcquireMode) (FenceGrant, error)
	// RenewFence starts a fresh lease for the holder of token when token is
	// the highest issued, even after the holder's lease ran out. While a
	// higher token exists it returns *FencedOutError naming that token. See
	// docs/host-store-contract.md#op-renew-fence.
	RenewFence(ctx context.Context, token FenceToken) error
	// FenceTiming returns the renew interval, lease, self-fence margin and
	// longest commit the store declares. It does no I/O. See
	// docs/host-store-contract.md#fence-timing.
	FenceTiming() FenceTiming
	// LoadHead returns the visible head of scope with its version and
	// commit id. For a scope that does not exist, never created or
	// deleted, it returns nil and a nil error. See
	// docs/host-store-contract.md#op-load-head.
	LoadHead(ctx context.Context, scope ScopeRef) (*VersionedHead, error)
	// ListHeads returns one page of the visible scopes of kind, with their
	// heads, in byte order of name: at most limit entries, starting above
	// *after, or at the first name when after is nil. The page's Next is
	// the cursor for the following page, nil at the end. See
	// docs/host-store-contract.md#op-list-heads.
	ListHeads(ctx context.Context, kind ScopeKind, after *ScopeName, limit int) (HeadPage, error)
	// ReadRows returns up to limit visible rows of scope in index order,
	// starting at index from; it returns fewer only when the scope ends
	// first. A from below the lowest visible index returns *InvalidError. A scope
	// that does not exist returns no rows and a nil error. See
	// docs/host-store-contract.md#op-read-rows.
	ReadRows(ctx context.Context, scope ScopeRef, from RowIndex, limit int) ([]Row, error)
	// Commit applies batch to all its scopes as one step. A nil error
	// means the batch is durable and visible. A batch whose commit id has
	// landed before returns nil and changes nothing. *IndeterminateError
	// means the store cannot tell whether the batch landed; any other error
	// means nothing was applied. See docs/host-store-contract.md#op-commit.
	Commit(ctx context.Context, batch *CommitBatch) error
}

// HostStoreFactory is one realm, which starts empty: no scope and no fence
// token. See docs/host-store-contract.md#handles.
type HostStoreFactory interface {
	// Open returns a new handle on the realm. The handle stands for a
	// process that has just started: it shares the realm's durable data
	// with earlier handles and nothing else, no cache and no token.
	Open(ctx context.Context) (HostStore, error)
	// LapseFenceLeases ends every recorded lease, by moving the store's
	// clock forward or by waiting until the leases expire.
	LapseFenceLeases(ctx context.Context) error
}

// Killer is implemented by a handle that can die as a process dies. A
// handle without it is killed by dropping it. See
// docs/host-store-contract.md#edge-closing.
type Killer interface {
	// Kill drops the handle's connections and abandons its calls in
	// flight, with no graceful step; later calls fail. Kill does not
	// block, may follow Close, and may be called more than once.
	Kill()
}
