package writer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"

	"github.com/conform-spi/conform/hoststore"
)

// plan is a change laid out within the limits: the heads to store, the
// chunks of the large ones and the chunk batches that write them.
type plan struct {
	items  []item
	chunks []*chunkValue
	steps  [][]chunkPart
}

// item is one update of the change with the head it stores.
type item struct {
	u    Update
	head []byte // the envelope to store; nil keeps the head
}

// chunkValue is one large value and the chunk scope it goes to.
type chunkValue struct {
	name   hoststore.ScopeName
	digest [sha256.Size]byte
	n      int
	pieces [][]byte
}

// chunkPart is what one chunk batch writes to one chunk scope.
type chunkPart struct {
	c      *chunkValue
	create bool
	rows   [][]byte
}

func (p *plan) commitBytes() int {
	n := 0
	for _, it := range p.items {
		n += len(it.head)
		for _, r := range it.u.Append {
			n += len(r)
		}
	}
	return n
}

// plan validates a change and lays it out. It writes nothing: a change
// that cannot be written fails here, as a whole.
func (w *Writer) plan(ups []Update) (*plan, error) {
	if len(ups) == 0 {
		return nil, fmt.Errorf("writer: a change needs at least one update")
	}
	lim := w.opts.Limits
	p := &plan{}
	seen := map[hoststore.ScopeRef]bool{}
	w.mu.Lock()
	for _, u := range ups {
		_, exists := w.heads[u.Scope]
		if err := w.validate(u, exists, seen); err != nil {
			w.mu.Unlock()
			return nil, err
		}
		for i, r := range u.Append {
			if len(r) > lim.RowBytes {
				w.mu.Unlock()
				return nil, &SizeError{Detail: fmt.Sprintf("row %d appended to %s is over the row limit", i, u.Scope), Bytes: len(r), Limit: lim.RowBytes}
			}
		}
		it := item{u: u}
		if u.Head != nil {
			it.head = encodeInline(u.Head)
		}
		p.items = append(p.items, it)
	}
	w.mu.Unlock()
	chunked := make([]bool, len(p.items))
	for i, it := range p.items {
		if it.u.Head != nil && len(it.u.Head) > w.opts.ChunkThreshold {
			w.chunk(p, i)
			chunked[i] = true
		}
	}
	for p.commitBytes() > lim.BatchBytes {
		// Chunk the largest inline head left that chunking makes smaller.
		best := -1
		for i, it := range p.items {
			if !chunked[i] && it.u.Head != nil && len(it.head) > refLen+200 && (best < 0 || len(it.head) > len(p.items[best].head)) {
				best = i
			}
		}
		if best < 0 {
			return nil, &SizeError{Detail: "the change's commit batch is over the batch limit even with its heads in chunks", Bytes: p.commitBytes(), Limit: lim.BatchBytes}
		}
		w.chunk(p, best)
		chunked[best] = true
	}
	p.steps = layoutChunks(p.chunks, lim)
	return p, nil
}

// validate checks one update against the heads the writer holds.
func (w *Writer) validate(u Update, exists bool, seen map[hoststore.ScopeRef]bool) error {
	s := u.Scope
	switch err := s.Validate(); {
	case err != nil:
		return fmt.Errorf("writer: update: %w", err)
	case IsChunk(w.opts.ChunkPrefix, s):
		return fmt.Errorf("writer: update of %s: a chunk scope of the writer's own", s)
	case seen[s]:
		return fmt.Errorf("writer: two updates of %s in one change", s)
	case u.Delete && (u.Head != nil || len(u.Append) > 0 || u.TruncateAfter != nil || u.DropBefore != nil):
		return fmt.Errorf("writer: update of %s: a delete sets nothing else", s)
	case u.Delete && !exists:
		return fmt.Errorf("writer: update of %s: deletes a scope that does not exist", s)
	case !exists && u.Head == nil:
		return fmt.Errorf("writer: update of %s: a create must set a head", s)
	case !exists && (u.TruncateAfter != nil || u.DropBefore != nil):
		return fmt.Errorf("writer: update of %s: a create removes no rows", s)
	}
	seen[s] = true
	return nil
}

// chunk moves item i's head to a chunk scope of its own.
func (w *Writer) chunk(p *plan, i int) {
	v := p.items[i].u.Head
	d := digest(v)
	w.mu.Lock()
	name := chunkName(w.opts.ChunkPrefix, d, string(w.nextIDLocked()))
	w.mu.Unlock()
	c := &chunkValue{name: name, digest: d, n: len(v)}
	piece := min(w.opts.Limits.RowBytes, w.opts.Limits.BatchBytes-chunkHeaderLen)
	for off := 0; off < len(v); off += piece {
		c.pieces = append(c.pieces, v[off:min(off+piece, len(v))])
	}
	p.items[i].head = encodeRef(d, len(v), name)
	p.chunks = append(p.chunks, c)
}

// layoutChunks packs the chunks' rows into batches within the limit: each
// chunk scope is created (with its header) by the first batch that writes
// it and appended to by the later ones.
func layoutChunks(chunks []*chunkValue, lim Limits) [][]chunkPart {
	var steps [][]chunkPart
	var cur []chunkPart
	bytes := 0
	for _, c := range chunks {
		created := false
		for _, piece := range c.pieces {
			need := len(piece)
			if !created {
				need += chunkHeaderLen
			}
			if bytes+need > lim.BatchBytes && len(cur) > 0 {
				steps = append(steps, cur)
				cur, bytes = nil, 0
			}
			if n := len(cur); n > 0 && cur[n-1].c == c {
				cur[n-1].rows = append(cur[n-1].rows, piece)
			} else {
				cur = append(cur, chunkPart{c: c, create: !created, rows: [][]byte{piece}})
			}
			created = true
			bytes += need
		}
	}
	if len(cur) > 0 {
		steps = append(steps, cur)
	}
	return steps
}

// chunkUpdates builds one chunk batch's updates from the heads held now.
func (w *Writer) chunkUpdates(step []chunkPart) ([]hoststore.ScopeUpdate, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ups := make([]hoststore.ScopeUpdate, 0, len(step))
	for _, part := range step {
		s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: part.c.name}
		u := hoststore.ScopeUpdate{Scope: s, Append: part.rows}
		if part.create {
			u.Next = hoststore.FirstVersion
			h := chunkHeader(part.c.digest, part.c.n)
			u.Head = &h
		} else {
			h, ok := w.heads[s]
			if !ok {
				return nil, fmt.Errorf("writer: chunk scope %s vanished while its value was written", s)
			}
			u.Previous, u.Next = hoststore.Ptr(h.Version), h.Version+1
		}
		ups = append(ups, u)
	}
	return ups, nil
}

// commitUpdates builds the change's commit batch from the heads held now:
// its updates, and deletes of the chunks it supersedes ("drops the chunks
// it supersedes").
func (w *Writer) commitUpdates(p *plan) ([]hoststore.ScopeUpdate, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ups := make([]hoststore.ScopeUpdate, 0, len(p.items))
	drops := map[hoststore.ScopeName]int{}
	for _, it := range p.items {
		u := hoststore.ScopeUpdate{Scope: it.u.Scope, Next: hoststore.FirstVersion, Append: it.u.Append,
			TruncateAfter: it.u.TruncateAfter, DropBefore: it.u.DropBefore, Delete: it.u.Delete}
		if h, ok := w.heads[it.u.Scope]; ok {
			u.Previous, u.Next = hoststore.Ptr(h.Version), h.Version+1
			if n, ok := Refs(h.Head); ok && (it.head != nil || it.u.Delete) {
				drops[n]++
			}
		}
		if it.head != nil {
			h := it.head
			u.Head = &h
		}
		ups = append(ups, u)
	}
	names := make([]hoststore.ScopeName, 0, len(drops))
	for n := range drops {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: n}
		h, ok := w.heads[s]
		if !ok || w.refs[n] > drops[n] || w.pending[n] || !IsChunk(w.opts.ChunkPrefix, s) {
			continue
		}
		ups = append(ups, hoststore.ScopeUpdate{Scope: s, Previous: hoststore.Ptr(h.Version), Next: h.Version + 1, Delete: true})
	}
	return ups, nil
}

// sweepBatch bounds how many chunk scopes one sweep batch deletes.
const sweepBatch = 256

// Sweep deletes every chunk scope that no head refers to and no change in
// progress is writing, in batches, each after the self-fence check, once every
// batch whose outcome is unknown is settled. Open runs it; Options.SweepEvery
// runs it in the background.
func (w *Writer) Sweep(ctx context.Context) error {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if err := w.settleUnknown(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	var garbage []hoststore.ScopeRef
	for s := range w.heads {
		if IsChunk(w.opts.ChunkPrefix, s) && w.refs[s.Name] == 0 && !w.pending[s.Name] {
			garbage = append(garbage, s)
		}
	}
	w.mu.Unlock()
	sort.Slice(garbage, func(i, j int) bool { return garbage[i].Name < garbage[j].Name })
	for len(garbage) > 0 {
		n := min(len(garbage), sweepBatch)
		part := garbage[:n]
		garbage = garbage[n:]
		err := w.send(ctx, func() ([]hoststore.ScopeUpdate, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			var ups []hoststore.ScopeUpdate
			for _, s := range part {
				if h, ok := w.heads[s]; ok && w.refs[s.Name] == 0 {
					ups = append(ups, hoststore.ScopeUpdate{Scope: s, Previous: hoststore.Ptr(h.Version), Next: h.Version + 1, Delete: true})
				}
			}
			return ups, nil
		})
		if err != nil {
			return err
		}
		w.logf("sweep: deleted %d unreferenced chunk scopes", n)
	}
	return nil
}

// scheduleSweepLocked sets the background sweep.
func (w *Writer) scheduleSweepLocked() {
	if w.opts.SweepEvery <= 0 || w.closed {
		return
	}
	w.sweepT = w.clock.AfterFunc(w.opts.SweepEvery, func() {
		if w.Err() == nil {
			if err := w.Sweep(w.ctx); err != nil {
				w.logf("background sweep: %v", err)
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.scheduleSweepLocked()
	})
}
