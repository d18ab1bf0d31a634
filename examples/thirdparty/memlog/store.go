package memlog

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/conform-spi/conform/hoststore"
)

// Store is one handle ("process") over a realm. It implements
// hoststore.HostStore and hoststore.Killer. Reads never wait for a commit:
// they take the realm's mutex only to look a state up.
type Store struct {
	realm    *Factory
	killOnce sync.Once
	dead     chan struct{} // closed by Kill
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
)

// Kill kills the handle as a process dies: every later call returns
// *UnavailableError, and a commit in flight abandons at its next step
// (before its commit point nothing of it is applied). Kill is idempotent.
func (s *Store) Kill() { s.killOnce.Do(func() { close(s.dead) }) }

// killed reports whether Kill ran.
func (s *Store) killed() bool {
	select {
	case <-s.dead:
		return true
	default:
		return false
	}
}

// usable returns why the handle cannot serve a call now, or nil.
func (s *Store) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.killed() {
		return &hoststore.UnavailableError{Detail: "the handle was killed"}
	}
	return nil
}

// FenceTiming returns the realm's timing: the default 10 s renew interval and
// 30 s lease.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.realm.timing }

// LoadHead returns the scope's visible head, or nil, nil when the scope
// does not exist (never created, or deleted). A malformed scope is *InvalidError.
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := scope.Validate(); err != nil {
		return nil, &hoststore.InvalidError{Detail: "LoadHead: " + err.Error()}
	}
	return s.realm.state(scope).versionedHead(), nil
}

// ListHeads returns up to limit visible scopes of kind with names above
// *after (from the first name when after is nil), in byte order of name,
// each with its head. Next is the last name on the page when more follow,
// and nil otherwise. A limit <= 0 or a kind that is not a kind is
// *InvalidError.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if err := s.usable(ctx); err != nil {
		return hoststore.HeadPage{}, err
	}
	if !kind.Valid() {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads: kind %d is not a kind", uint8(kind))}
	}
	if limit <= 0 {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads: limit %d is not positive", limit)}
	}
	f := s.realm
	f.mu.Lock()
	names := f.names[kind]
	i := 0
	if after != nil {
		// The first name strictly after the cursor, by bytes.
		var found bool
		if i, found = slices.BinarySearch(names, *after); found {
			i++
		}
	}
	page := names[i:min(len(names), i+limit)]
	states := make([]*scopeState, len(page))
	for j, n := range page {
		states[j] = f.scopes[hoststore.ScopeRef{Kind: kind, Name: n}]
	}
	page = append([]hoststore.ScopeName(nil), page...)
	more := i+len(page) < len(names)
	f.mu.Unlock()

	out := hoststore.HeadPage{Heads: make([]hoststore.NamedHead, len(page))}
	for j, n := range page {
		out.Heads[j] = hoststore.NamedHead{Name: n, Head: *states[j].versionedHead()}
	}
	if more {
		out.Next = hoststore.Ptr(page[len(page)-1])
	}
	return out, nil
}

// ReadRows returns up to limit visible rows of the scope in index order,
// from index from. A from below the lowest visible index, a limit <= 0 or
// a malformed scope returns *InvalidError; a missing scope returns no rows.
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := scope.Validate(); err != nil {
		return nil, &hoststore.InvalidError{Detail: "ReadRows: " + err.Error()}
	}
	if limit <= 0 {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows: limit %d is not positive", limit)}
	}
	return s.realm.state(scope).read(from, limit)
}

// AcquireFence issues the realm's next token and starts its lease now.
// Exclusive returns *HeldError while the holder's lease lasts; Takeover
// always issues a token and returns what was left of that lease.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	if err := s.usable(ctx); err != nil {
		return hoststore.FenceGrant{}, err
	}
	if mode != hoststore.Exclusive && mode != hoststore.Takeover {
		return hoststore.FenceGrant{}, &hoststore.InvalidError{Detail: "AcquireFence: unknown mode " + mode.String()}
	}
	f := s.realm
	f.mu.Lock()
	defer f.mu.Unlock()
	var remaining = max(0, f.expiry-f.now)
	if f.token == 0 {
		remaining = 0
	}
	if mode == hoststore.Exclusive && remaining > 0 {
		return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: f.token, Remaining: remaining}
	}
	f.token++
	f.expiry = f.now + f.timing.Lease()
	return hoststore.FenceGrant{Token: f.token, SupersededLease: remaining}, nil
}

// RenewFence starts a fresh lease now for the holder of token, also after
// its lease ran out. A superseded token is *FencedOutError; a
// token the realm never issued is *InvalidError.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	f := s.realm
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case token < f.token:
		return &hoststore.FencedOutError{Current: f.token}
	case token == 0 || token > f.token:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("RenewFence: token %d was never issued", token)}
	}
	f.expiry = f.now + f.timing.Lease()
	return nil
}
