package procstore

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/hook"
	"github.com/conform-spi/conform/procstore/internal/wire"
)

// The wire carries kinds by name, names and ids as JSON strings and
// counts as non-negative numbers. A request it cannot carry is answered
// *hoststore.InvalidError here, as the contract asks of the store.

func checkRef(op string, r hoststore.ScopeRef) error {
	if !r.Kind.Valid() {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("%s: kind %d is not a kind", op, uint8(r.Kind))}
	}
	return checkText(op, "scope name", string(r.Name))
}

func checkText(op, what, s string) error {
	if !utf8.ValidString(s) {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("%s: %s %q is not valid UTF-8", op, what, s)}
	}
	return nil
}

// AcquireFence asks the process for a fence token (acquire_fence).
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	var m string
	switch mode {
	case hoststore.Exclusive:
		m = "exclusive"
	case hoststore.Takeover:
		m = "takeover"
	default:
		return hoststore.FenceGrant{}, &hoststore.InvalidError{Detail: fmt.Sprintf("AcquireFence: mode %d is not a mode", uint8(mode))}
	}
	var g wire.Grant
	if err := s.call(ctx, &wire.Message{Op: wire.OpAcquire, Mode: m}, &g); err != nil {
		return hoststore.FenceGrant{}, err
	}
	return hoststore.FenceGrant{Token: hoststore.FenceToken(*g.Token), SupersededLease: time.Duration(*g.SupersededLeaseN)}, nil
}

// RenewFence asks the process to renew token's lease (renew_fence).
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	return s.call(ctx, &wire.Message{Op: wire.OpRenew, Token: hoststore.Ptr(uint64(token))}, &wire.Empty{})
}

// FenceTiming returns the timing the process declared in the handshake.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.timing }

// LoadHead asks the process for scope's visible head (load_head).
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	if err := checkRef("LoadHead", scope); err != nil {
		return nil, err
	}
	var r wire.HeadResult
	sc := wire.ScopeOf(scope)
	if err := s.call(ctx, &wire.Message{Op: wire.OpLoadHead, Scope: &sc}, &r); err != nil {
		return nil, err
	}
	if r.Head == nil {
		return nil, nil
	}
	h, _ := r.Head.VersionedHead() // call's decodeResult refused a head it refuses
	return &h, nil
}

// ListHeads asks the process for one page of kind's scopes (list_heads).
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	if !kind.Valid() {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads: kind %d is not a kind", uint8(kind))}
	}
	if limit < 0 {
		return hoststore.HeadPage{}, &hoststore.InvalidError{Detail: fmt.Sprintf("ListHeads: limit %d is not positive", limit)}
	}
	m := &wire.Message{Op: wire.OpList, Kind: kind.String(), Limit: &limit}
	if after != nil {
		if err := checkText("ListHeads", "after", string(*after)); err != nil {
			return hoststore.HeadPage{}, err
		}
		m.After = hoststore.Ptr(string(*after))
	}
	var p wire.Page
	if err := s.call(ctx, m, &p); err != nil {
		return hoststore.HeadPage{}, err
	}
	page := hoststore.HeadPage{Heads: make([]hoststore.NamedHead, 0, len(*p.Heads))}
	for _, w := range *p.Heads {
		h, _ := w.VersionedHead() // call's decodeResult refused a head it refuses
		page.Heads = append(page.Heads, hoststore.NamedHead{Name: hoststore.ScopeName(w.Name), Head: h})
	}
	if p.Next != nil {
		page.Next = hoststore.Ptr(hoststore.ScopeName(*p.Next))
	}
	return page, nil
}

// ReadRows asks the process for scope's rows from index from (read_rows).
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	if err := checkRef("ReadRows", scope); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, &hoststore.InvalidError{Detail: fmt.Sprintf("ReadRows: limit %d is not positive", limit)}
	}
	sc := wire.ScopeOf(scope)
	var r wire.Rows
	if err := s.call(ctx, &wire.Message{Op: wire.OpReadRows, Scope: &sc, From: hoststore.Ptr(uint64(from)), Limit: &limit}, &r); err != nil {
		return nil, err
	}
	rows := make([]hoststore.Row, len(*r.Rows))
	for i, w := range *r.Rows {
		rows[i] = hoststore.Row{Index: hoststore.RowIndex(*w.Index), Data: *w.Data}
	}
	return rows, nil
}

// Commit sends batch to the process (commit). While the process commits
// it, its at calls run the harness's in-store failpoints; a crash there
// kills the process and Commit returns an error wrapping
// instore.ErrCrashed.
func (s *Store) Commit(ctx context.Context, batch *hoststore.CommitBatch) error {
	if batch == nil || batch.Len() == 0 {
		return &hoststore.InvalidError{Detail: "commit of a batch that NewCommitBatch did not build"}
	}
	if err := checkText("Commit", "commit id", string(batch.CommitID())); err != nil {
		return err
	}
	// With nothing armed for the commit's run, an at call would only be
	// answered go on: the process may skip them (sites false), which saves
	// their round trips.
	m := &wire.Message{Op: wire.OpCommit, Batch: wire.BatchOf(batch), Sites: hoststore.Ptr(s.sitesArmed(ctx))}
	return s.call(ctx, m, &wire.Empty{})
}

// sitesArmed reports whether an at call of a commit under ctx may meet
// anything armed: in the injector at calls reach (see at).
func (s *Store) sitesArmed(ctx context.Context) bool {
	if s.inj != nil && hook.From(ctx) == nil {
		return s.inj.Armed()
	}
	return hook.Armed(ctx)
}

// lapse asks the process to let every recorded lease of the realm run out.
func (s *Store) lapse(ctx context.Context) error {
	return s.call(ctx, &wire.Message{Op: wire.OpLapse}, &wire.Empty{})
}
