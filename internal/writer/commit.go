package writer

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	"github.com/conform-spi/conform/hoststore"
)

// Update is what a change does to one scope. The writer fills in the
// versions from the heads it holds: a scope it does not hold is created.
type Update struct {
	// Scope is the scope the update writes. The writer's own chunk scopes
	// (Options.ChunkPrefix) cannot be written.
	Scope hoststore.ScopeRef
	// Head is the new value; nil keeps the current one, any non-nil slice
	// (an empty one too) sets it. A create must set it. A value of any
	// size is written: a large one as chunks.
	Head []byte
	// Append holds rows appended in order, each within the row limit.
	Append [][]byte
	// TruncateAfter, set to t, removes the rows at index t and above.
	TruncateAfter *hoststore.RowIndex
	// DropBefore, set to d, removes the rows below index d.
	DropBefore *hoststore.RowIndex
	// Delete removes the scope; an update that deletes sets nothing else.
	Delete bool
}

// Commit commits one change outside any round (a round of its own).
func (w *Writer) Commit(ctx context.Context, ups ...Update) error {
	return w.Round().Commit(ctx, ups...)
}

// Commit commits the round's change: all of it becomes visible at one
// batch's commit point, or none of it does. Its large values go first into
// chunk scopes, over as many batches as they take; one more batch, within
// the limits, then makes the change visible and deletes the chunks it
// replaces. Each batch is sent only after the
// self-fence check passed; a fenced writer first makes its fresh acquire.
// A batch whose outcome is unknown is sent again, the same batch, up to
// Options.SettleTries times.
//
// Errors: ErrRoundRefused when a check of the round refused a call; a
// *SizeError when the change cannot be written within the limits (nothing was
// written) or the store refused a batch of it as Invalid; ErrStopped when
// another process holds the fence or wrote meanwhile; ErrSelfFenced or the
// store's error when the fresh acquire failed; an error wrapping the store's
// last answer when the outcome stayed unknown (the writer settles that batch
// before any later commit touching its scopes). After any error the change may
// be retried as a whole.
func (r *Round) Commit(ctx context.Context, ups ...Update) error {
	if r.refused != nil {
		return fmt.Errorf("%w: %v", ErrRoundRefused, r.refused)
	}
	w := r.w
	w.cmu.Lock()
	defer w.cmu.Unlock()
	p, err := w.plan(ups)
	if err != nil {
		return err
	}
	if err := w.settleUnknown(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	for _, c := range p.chunks {
		w.pending[c.name] = true
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		for _, c := range p.chunks {
			delete(w.pending, c.name)
		}
		w.mu.Unlock()
	}()
	for i, step := range p.steps {
		if err := w.send(ctx, func() ([]hoststore.ScopeUpdate, error) { return w.chunkUpdates(step) }); err != nil {
			return fmt.Errorf("writer: chunk batch %d of %d: %w", i+1, len(p.steps), err)
		}
	}
	return w.send(ctx, func() ([]hoststore.ScopeUpdate, error) { return w.commitUpdates(p) })
}

// send builds a batch once the self-fence check passed (after a fresh
// acquire when the writer was fenced), sends it, and settles an unknown
// outcome by sending the same batch again.
func (w *Writer) send(ctx context.Context, build func() ([]hoststore.ScopeUpdate, error)) error {
	if err := w.gate(ctx); err != nil {
		return err
	}
	ups, err := build()
	if err != nil || len(ups) == 0 {
		return err
	}
	w.mu.Lock()
	id := w.nextIDLocked()
	tok := w.token
	w.mu.Unlock()
	b, err := hoststore.NewCommitBatch(id, tok, ups)
	if err != nil {
		return fmt.Errorf("writer: building a batch: %w", err)
	}
	_, err = w.sendBatch(ctx, b, false)
	return err
}

// gate is the self-fence check before a commit; a fenced writer makes its
// fresh acquire here.
func (w *Writer) gate(ctx context.Context) error {
	w.mu.Lock()
	var err error
	if w.opts.Unsafe.SkipSelfFence {
		if w.closed || w.stopErr != nil {
			err = w.stateErrLocked()
		}
	} else {
		err = w.selfFenceLocked()
	}
	w.mu.Unlock()
	if errors.Is(err, ErrSelfFenced) {
		return w.refenceLocked(ctx)
	}
	return err
}

// nextIDLocked returns a commit id never used in the realm: the fence
// token (unique to this acquire) and a sequence number.
func (w *Writer) nextIDLocked() hoststore.CommitID {
	w.seq++
	if w.opts.Unsafe.ReuseCommitIDs {
		return hoststore.CommitID(fmt.Sprintf("c%d", w.seq))
	}
	return hoststore.CommitID(fmt.Sprintf("t%d-%d", w.token, w.seq))
}

// sendBatch sends b until its outcome is known, at most SettleTries times.
// wasUnknown says an earlier send's outcome is unknown already. It returns
// whether b landed; a batch that landed is applied to the heads.
func (w *Writer) sendBatch(ctx context.Context, b *hoststore.CommitBatch, wasUnknown bool) (bool, error) {
	var last error
	for try := 0; try < w.opts.SettleTries; try++ {
		if try > 0 && !w.mayResend() {
			break
		}
		err := w.st.Commit(ctx, b)
		switch hoststore.KindOf(err) {
		case hoststore.ErrKindNone:
			w.landed(b)
			return true, nil
		case hoststore.ErrKindUnavailable:
			if !wasUnknown {
				return false, fmt.Errorf("writer: commit %q: %w", b.CommitID(), err)
			}
		case hoststore.ErrKindConflict, hoststore.ErrKindFencedOut, hoststore.ErrKindInvalid:
			if wasUnknown {
				landed, lerr := w.shows(ctx, b)
				if lerr != nil {
					last = lerr
					continue
				}
				if landed {
					w.landed(b)
					return true, nil
				}
			}
			return false, w.refusal(b, err)
		default: // Indeterminate, a context error, or an error outside the contract
			wasUnknown = true
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		w.logf("commit %q: %v; sending the same batch again", b.CommitID(), err)
	}
	w.mu.Lock()
	if !slices.Contains(w.unknown, b) {
		w.unknown = append(w.unknown, b)
	}
	w.mu.Unlock()
	return false, fmt.Errorf("writer: the outcome of commit %q is unknown: %w", b.CommitID(), last)
}

// mayResend is the self-fence check before a batch is sent again (no
// fresh acquire: a batch with an older token is settled by loading).
func (w *Writer) mayResend() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.opts.Unsafe.SkipSelfFence {
		return !w.closed && w.stopErr == nil
	}
	return w.selfFenceLocked() == nil
}

func (w *Writer) landed(b *hoststore.CommitBatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.applyLocked(b)
	w.unknown = slices.DeleteFunc(w.unknown, func(x *hoststore.CommitBatch) bool { return x == b })
}

// refusal turns a store error that says nothing was applied into the writer's
// error: a superseded token or a conflict stops the realm (another process
// holds the fence or wrote meanwhile); *hoststore.InvalidError is a size
// error.
func (w *Writer) refusal(b *hoststore.CommitBatch, err error) error {
	var fo *hoststore.FencedOutError
	var cf *hoststore.ConflictError
	switch {
	case errors.As(err, &fo):
		return w.stop("commit %q: token %d took the fence", b.CommitID(), fo.Current)
	case errors.As(err, &cf):
		return w.stop("commit %q: %v: another process committed", b.CommitID(), cf)
	}
	return &SizeError{Detail: fmt.Sprintf("the store refused batch %q of the change (%d bytes)", b.CommitID(), b.Bytes()), Cause: err}
}

// shows settles a batch by loading its scopes' heads: it landed when every
// scope shows it, and not when none does.
func (w *Writer) shows(ctx context.Context, b *hoststore.CommitBatch) (bool, error) {
	seen, missed := 0, 0
	for _, u := range b.Updates() {
		h, err := w.st.LoadHead(ctx, u.Scope)
		if err != nil {
			return false, err
		}
		if (u.Delete && h == nil) || (!u.Delete && h != nil && h.CommitID == b.CommitID()) {
			seen++
		} else {
			missed++
		}
	}
	if seen > 0 && missed > 0 {
		return false, w.stop("batch %q shows in %d of its scopes and not in %d", b.CommitID(), seen, missed)
	}
	return seen > 0, nil
}

// settleUnknown settles every batch whose outcome is unknown by sending the
// same batch again.
func (w *Writer) settleUnknown(ctx context.Context) error {
	w.mu.Lock()
	todo := slices.Clone(w.unknown)
	w.mu.Unlock()
	for _, b := range todo {
		if err := w.gate(ctx); err != nil {
			return err
		}
		w.mu.Lock()
		still := slices.Contains(w.unknown, b) // a fresh acquire settles them all
		w.mu.Unlock()
		if !still {
			continue
		}
		landed, err := w.sendBatch(ctx, b, true)
		if err != nil {
			return fmt.Errorf("writer: settling an earlier commit first: %w", err)
		}
		w.mu.Lock()
		w.unknown = slices.DeleteFunc(w.unknown, func(x *hoststore.CommitBatch) bool { return x == b })
		w.mu.Unlock()
		w.logf("settled commit %q: landed %v", b.CommitID(), landed)
	}
	return nil
}

// settleFromLocked settles every unknown batch from heads loaded after a
// fresh acquire: a batch with an older token that had not landed by then
// never will, since fencing hides it (docs/host-store-contract.md#ob-5).
func (w *Writer) settleFromLocked(loaded map[hoststore.ScopeRef]hoststore.VersionedHead) error {
	for _, b := range w.unknown {
		seen, missed := 0, 0
		for _, u := range b.Updates() {
			h, ok := loaded[u.Scope]
			if (u.Delete && !ok) || (!u.Delete && ok && h.CommitID == b.CommitID()) {
				seen++
			} else {
				missed++
			}
		}
		if seen > 0 && missed > 0 {
			w.stopErr = stopped("batch %q shows in %d of its scopes and not in %d", b.CommitID(), seen, missed)
			return w.stopErr
		}
		if seen > 0 {
			w.applyLocked(b)
		}
		w.logf("settled commit %q after a fresh acquire: landed %v", b.CommitID(), seen > 0)
	}
	w.unknown = nil
	return nil
}

// digest is a value's SHA-256.
func digest(v []byte) [sha256.Size]byte { return sha256.Sum256(v) }
