package chapter

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"
)

// UpOpt sets one part of a scope update.
type UpOpt func(*hoststore.ScopeUpdate)

// WithHead sets the update's head.
func WithHead(h []byte) UpOpt {
	return func(u *hoststore.ScopeUpdate) { c := append([]byte{}, h...); u.Head = &c }
}

// WithAppend appends rows.
func WithAppend(rows ...[]byte) UpOpt {
	return func(u *hoststore.ScopeUpdate) { u.Append = append(u.Append, rows...) }
}

// WithTruncate sets truncate_after.
func WithTruncate(i hoststore.RowIndex) UpOpt {
	return func(u *hoststore.ScopeUpdate) { u.TruncateAfter = hoststore.Ptr(i) }
}

// WithDrop sets drop_before.
func WithDrop(i hoststore.RowIndex) UpOpt {
	return func(u *hoststore.ScopeUpdate) { u.DropBefore = hoststore.Ptr(i) }
}

// WithDelete deletes the scope.
func WithDelete() UpOpt { return func(u *hoststore.ScopeUpdate) { u.Delete = true } }

// Up builds the next update of s from the model: a create (at the first
// version, with an empty head unless an option sets one) when the model has
// no such scope, otherwise an update from its current version.
func (e *Env) Up(s hoststore.ScopeRef, opts ...UpOpt) hoststore.ScopeUpdate {
	u := hoststore.ScopeUpdate{Scope: s}
	if h := e.Model.Head(s); h != nil {
		u.Previous = hoststore.Ptr(h.Version)
		u.Next = h.Version + 1
	} else {
		u.Next = hoststore.FirstVersion
	}
	for _, o := range opts {
		o(&u)
	}
	if u.Previous == nil && u.Head == nil {
		u.Head = &[]byte{}
	}
	return u
}

// UpFrom builds an update of s from an explicit previous version (nil: a
// create), for rows that write versions the model does not have yet.
func UpFrom(s hoststore.ScopeRef, prev *hoststore.ScopeVersion, opts ...UpOpt) hoststore.ScopeUpdate {
	u := hoststore.ScopeUpdate{Scope: s, Next: hoststore.FirstVersion}
	if prev != nil {
		u.Previous = hoststore.Ptr(*prev)
		u.Next = *prev + 1
	}
	for _, o := range opts {
		o(&u)
	}
	if u.Previous == nil && u.Head == nil {
		u.Head = &[]byte{}
	}
	return u
}

// Batch builds a batch with a fresh commit id and p's token. A batch the
// SPI refuses is a bug of the row, reported as such.
func (e *Env) Batch(p *Proc, tag string, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
	spec.Helper()
	return e.BatchWith(e.newID(tag), p.Token, ups...)
}

// BatchWith builds a batch with an explicit id and token.
func (e *Env) BatchWith(id hoststore.CommitID, token hoststore.FenceToken, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
	spec.Helper()
	b, err := hoststore.NewCommitBatch(id, token, ups)
	if err != nil {
		spec.Fail("harness bug: the row built a malformed batch: " + err.Error())
	}
	return b
}

// Commit sends a batch that the model accepts and expects it to land, the
// way the writer does: Ok lands it; Indeterminate and Unavailable are retried
// with the same batch (a bounded number of times), as the writer settles an
// unknown outcome; anything else fails the spec under ob. The model
// applies the batch once it landed.
func (e *Env) Commit(ctx context.Context, p *Proc, b *hoststore.CommitBatch, ob reports.ObligationID) {
	spec.Helper()
	if err := e.Model.Check(b); err != nil {
		spec.Fail(fmt.Sprintf("harness bug: the row committed a batch the model refuses (%v): %s", err, BatchText(b)))
	}
	const tries = 4
	var err error
	for i := 0; i < tries; i++ {
		err = p.Commit(ctx, b)
		k := hoststore.KindOf(err)
		if err == nil {
			break
		}
		if k == hoststore.ErrKindUnavailable && !p.Dead() {
			e.Note("Unavailable says nothing was applied: the batch must not show")
			if shows, _ := e.Shows(ctx, p, b); len(shows) > 0 {
				e.Fail(ObErrors, fmt.Sprintf("commit of %q answered Unavailable, yet the batch was applied", b.CommitID()),
					"nothing applied (Unavailable), or Indeterminate when the outcome is unknown", fmt.Sprintf("the batch shows in %v", shows))
			}
		}
		if k != hoststore.ErrKindIndeterminate && k != hoststore.ErrKindUnavailable {
			break
		}
	}
	if err != nil {
		e.Fail(ob, "a valid batch from the current fence holder did not land", "Ok", ErrText(err))
	}
	e.Landed(b)
}

// Landed applies a batch that landed to the model.
func (e *Env) Landed(b *hoststore.CommitBatch) {
	spec.Helper()
	if err := e.Model.Apply(b); err != nil {
		spec.Fail(fmt.Sprintf("harness bug: the model refused a batch that landed (%v): %s", err, BatchText(b)))
	}
}

// Payload draws n random bytes from the spec's source, prefixed by tag so a
// trail shows where it came from.
func (e *Env) Payload(tag string, n int) []byte {
	b := []byte(tag)
	for len(b) < n {
		b = append(b, byte('a'+e.rng.IntN(26)))
	}
	return b[:max(n, len(tag))]
}
