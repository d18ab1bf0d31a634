package writer

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Writer is a realm's writer over one HostStore handle: the realm's only writer
// while it holds the fence. It keeps every rule of
// docs/host-store-contract.md#writer-rules (see the package doc). Its methods
// are safe for concurrent use; writes are serialised.
type Writer struct {
	st     hoststore.HostStore
	opts   Options
	clock  Clock
	timing hoststore.FenceTiming
	ctx    context.Context // Open's: the background work's life

	cmu sync.Mutex // serialises writes: commits, sweeps, refences

	mu        sync.Mutex
	token     hoststore.FenceToken
	base      time.Time // when the last successful acquire or renew started
	fenced    bool      // stopped writing and dispatching until a fresh acquire
	stopErr   error     // the realm stopped
	closed    bool
	waitUntil time.Time // the takeover wait ends here
	renewT    Timer
	sweepT    Timer
	heads     map[hoststore.ScopeRef]hoststore.VersionedHead
	refs      map[hoststore.ScopeName]int  // chunk scope -> heads that refer to it
	pending   map[hoststore.ScopeName]bool // chunks of a change in progress
	unknown   []*hoststore.CommitBatch     // batches whose outcome is unknown
	seq       uint64
}

// Open starts a writer over st, as a process opens a realm: it acquires the
// fence (exclusively, or by an explicit takeover when opts.Takeover), loads
// every head with ListHeads (the bulk load, after the acquire and before
// any commit), deletes the chunks no head refers to, and starts its
// renewer (and sweep) on its clock. An exclusive acquire that finds a live
// holder returns the store's *hoststore.HeldError (wrapped): the caller
// waits its lease out or takes over explicitly.
//
// ctx bounds the writer's life as well as Open: the renewer and the sweep
// send their requests with it and stop when it ends.
func Open(ctx context.Context, st hoststore.HostStore, opts Options) (*Writer, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	t := st.FenceTiming()
	if !t.Valid() {
		return nil, fmt.Errorf("writer: the store's fence timing is not valid")
	}
	w := &Writer{st: st, opts: o, clock: o.Clock, timing: t, ctx: ctx, pending: map[hoststore.ScopeName]bool{}}
	mode := hoststore.Exclusive
	if o.Takeover {
		mode = hoststore.Takeover
	}
	if err := w.acquire(ctx, mode); err != nil {
		return nil, fmt.Errorf("writer: open: %w", err)
	}
	heads, err := w.bulkLoad(ctx)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("writer: open: bulk load: %w", err)
	}
	w.mu.Lock()
	w.setHeadsLocked(heads)
	w.mu.Unlock()
	if err := w.Sweep(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("writer: open: deleting unreferenced chunks: %w", err)
	}
	w.mu.Lock()
	w.scheduleSweepLocked()
	w.mu.Unlock()
	return w, nil
}

// Close stops the renewer and the sweep. It sends no request: the fence
// lapses with its lease. Every later call returns ErrClosed.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.renewT != nil {
		w.renewT.Stop()
	}
	if w.sweepT != nil {
		w.sweepT.Stop()
	}
}

// Token is the fence token of the writer's last successful acquire.
func (w *Writer) Token() hoststore.FenceToken {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.token
}

// Timing is the store's fence timing, which the writer keeps.
func (w *Writer) Timing() hoststore.FenceTiming { return w.timing }

// Err returns why the writer cannot go on without help: ErrClosed, an
// error wrapping ErrStopped (open the realm again), one wrapping
// ErrSelfFenced (Refence, or the next write, goes on), or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stateErrLocked()
}

func (w *Writer) stateErrLocked() error {
	switch {
	case w.closed:
		return ErrClosed
	case w.stopErr != nil:
		return w.stopErr
	case w.fenced:
		return ErrSelfFenced
	}
	return nil
}

// Head returns the scope's visible head as the writer holds it (an
// envelope, see Decode), and whether the scope exists.
func (w *Writer) Head(s hoststore.ScopeRef) (hoststore.VersionedHead, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.heads[s]
	return h.Clone(), ok
}

// Names returns the visible scopes of kind the writer holds, in byte order,
// without its chunk scopes.
func (w *Writer) Names(kind hoststore.ScopeKind) []hoststore.ScopeName {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []hoststore.ScopeName
	for s := range w.heads {
		if s.Kind == kind && !IsChunk(w.opts.ChunkPrefix, s) {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Value returns the scope's value (its head, read from its chunks when it
// has them) and whether the scope exists.
func (w *Writer) Value(ctx context.Context, s hoststore.ScopeRef) ([]byte, bool, error) {
	h, ok := w.Head(s)
	if !ok {
		return nil, false, nil
	}
	v, err := ReadValue(ctx, w.st, h.Head)
	return v, true, err
}

// ReadRows returns the scope's rows, read from the store with ReadRows.
func (w *Writer) ReadRows(ctx context.Context, s hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	return w.st.ReadRows(ctx, s, from, limit)
}

// bulkLoad lists every head of every kind: the bulk load that follows the
// acquire and comes before the first commit.
func (w *Writer) bulkLoad(ctx context.Context) (map[hoststore.ScopeRef]hoststore.VersionedHead, error) {
	heads := map[hoststore.ScopeRef]hoststore.VersionedHead{}
	for _, k := range hoststore.AllKinds {
		var after *hoststore.ScopeName
		for {
			pg, err := w.st.ListHeads(ctx, k, after, w.opts.ListPage)
			if err != nil {
				return nil, err
			}
			for _, h := range pg.Heads {
				heads[hoststore.ScopeRef{Kind: k, Name: h.Name}] = h.Head.Clone()
			}
			if pg.Next == nil {
				break
			}
			if after != nil && *pg.Next <= *after {
				return nil, fmt.Errorf("ListHeads(%s) returned a next cursor %q that does not move past %q", k, *pg.Next, *after)
			}
			n := *pg.Next
			after = &n
		}
	}
	return heads, nil
}

// setHeadsLocked replaces what the writer holds and recounts the chunk
// references.
func (w *Writer) setHeadsLocked(heads map[hoststore.ScopeRef]hoststore.VersionedHead) {
	w.heads = heads
	w.refs = map[hoststore.ScopeName]int{}
	for s, h := range heads {
		if IsChunk(w.opts.ChunkPrefix, s) {
			continue
		}
		if n, ok := Refs(h.Head); ok {
			w.refs[n]++
		}
	}
}

// applyLocked applies a batch that landed to what the writer holds.
func (w *Writer) applyLocked(b *hoststore.CommitBatch) {
	for _, u := range b.Updates() {
		old, had := w.heads[u.Scope]
		chunk := IsChunk(w.opts.ChunkPrefix, u.Scope)
		if u.Delete {
			delete(w.heads, u.Scope)
			if had && !chunk {
				w.unref(old.Head)
			}
			continue
		}
		h := hoststore.VersionedHead{Version: u.Next, CommitID: b.CommitID(), Head: old.Head}
		if u.Head != nil {
			h.Head = *u.Head
			if had && !chunk {
				w.unref(old.Head)
			}
			if !chunk {
				if n, ok := Refs(h.Head); ok {
					w.refs[n]++
				}
			}
		}
		w.heads[u.Scope] = h
	}
}

func (w *Writer) unref(head []byte) {
	if n, ok := Refs(head); ok {
		if w.refs[n]--; w.refs[n] <= 0 {
			delete(w.refs, n)
		}
	}
}

// sameHeads tells whether two views of the realm agree on every scope's
// version and commit id, and returns the first scope where they differ.
func sameHeads(a, b map[hoststore.ScopeRef]hoststore.VersionedHead) (hoststore.ScopeRef, bool) {
	for s, h := range a {
		g, ok := b[s]
		if !ok || g.Version != h.Version || g.CommitID != h.CommitID || !bytes.Equal(g.Head, h.Head) {
			return s, false
		}
	}
	for s := range b {
		if _, ok := a[s]; !ok {
			return s, false
		}
	}
	return hoststore.ScopeRef{}, true
}

func (w *Writer) logf(format string, args ...any) {
	if w.opts.Logf != nil {
		w.opts.Logf(format, args...)
	}
}
