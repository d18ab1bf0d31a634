package hoststore

import "context"

// HostStore is the six operations a host store implements, plus its fence
// timing. Every method takes the caller's context and honours its end; a
// store returns one of the six error types of this package, or ctx.Err()
// when the context ended. Any other error breaches the error contract.
type HostStore interface {
	// AcquireFence returns a token higher than any acquired before in the
	// realm, durably, and records the new holder's lease. Exclusive with a
	// live holder returns *HeldError; Takeover supersedes any holder and
	// reports what remained of its lease (zero when none was live).
	AcquireFence(ctx context.Context, mode AcquireMode) (FenceGrant, error)
	// RenewFence confirms that no higher token exists and records a new
	// lease for its holder from now, also when the last lease lapsed. It
	// returns *FencedOutError when a higher token exists.
	RenewFence(ctx context.Context, token FenceToken) error
	// FenceTiming is the renew interval and lease the store records.
	FenceTiming() FenceTiming
	// LoadHead returns the scope's visible head, or nil, nil when the scope
	// was never created or was deleted.
	LoadHead(ctx context.Context, scope ScopeRef) (*VersionedHead, error)
	// ListHeads returns the visible scopes of kind whose names sort after
	// after (from the first when nil), in byte order of names, each with its
	// visible head, at most limit. Next is nil when the listing has ended.
	ListHeads(ctx context.Context, kind ScopeKind, after *ScopeName, limit int) (HeadPage, error)
	// ReadRows returns the scope's visible rows from index from, in index
	// order, at most limit, ending early at the scope's end. A from below
	// the first visible row is *InvalidError; a scope that does not exist
	// has no rows.
	ReadRows(ctx context.Context, scope ScopeRef, from RowIndex, limit int) ([]Row, error)
	// Commit applies one batch atomically. nil means durable. A commit id
	// that already landed returns nil without acting again.
	// *IndeterminateError means the outcome is unknown.
	Commit(ctx context.Context, batch *CommitBatch) error
}

// HostStoreFactory stands for one realm, which starts empty.
type HostStoreFactory interface {
	// Open is a new process: a new handle over the same realm that holds
	// nothing of the handles before it.
	Open(ctx context.Context) (HostStore, error)
	// LapseFenceLeases lets every recorded lease run out, by advancing the
	// store's clock or by waiting.
	LapseFenceLeases(ctx context.Context) error
}

// Killer is implemented by a handle that can be killed: drop connections
// and abandon work in flight without any graceful step. A handle without it
// is killed by dropping it.
type Killer interface {
	Kill()
}
