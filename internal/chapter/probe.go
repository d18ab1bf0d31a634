package chapter

import (
	"context"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// ProbeInStore tells whether the store calls the in-store failpoint at site
// from its commit path, by committing a probe batch with a hold at site
// that is released before it arrives. The answer is kept for the run.
func (e *Env) ProbeInStore(ctx context.Context, site instore.Site) bool {
	spec.Helper()
	e.mu.Lock()
	if e.probed {
		ok := e.inStore[site]
		e.mu.Unlock()
		return ok
	}
	e.mu.Unlock()
	w := e.Writer(ctx)
	s := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "conform/probe"}
	saved := e.rowID
	e.rowID = "probe"
	b := e.Batch(w, "probe", e.Up(s, WithHead([]byte("probe"))))
	e.rowID = saved
	holds := map[instore.Site]*faults.Hold{}
	for _, st := range instore.Sites {
		id := b.CommitID()
		h := e.inj.HoldAt(st, func(c hoststore.CommitID) bool { return c == id })
		h.Release()
		holds[st] = h
	}
	e.Commit(ctx, w, b, ObOperations)
	found := map[instore.Site]bool{}
	for st, h := range holds {
		select {
		case <-h.Arrived():
			found[st] = true
		default:
		}
		h.Disarm()
	}
	e.mu.Lock()
	e.inStore, e.probed = found, true
	e.mu.Unlock()
	e.Note("in-store failpoints the store calls: %v", found)
	return found[site]
}
