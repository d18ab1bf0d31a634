package explore

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reports"
)

// ShrinkConfig bounds a shrink. The zero value takes the defaults named.
type ShrinkConfig struct {
	// Replays bounds the replays a shrink runs, the first one included
	// (default 1000). The budget counts replays, never wall time, so that
	// a shrink ends in the same place on any machine.
	Replays int
	// Run is the exploration's configuration: its HistoryTimeout bounds
	// each replay and its Check each check.
	Run Config
}

// ShrinkStats says what a shrink did.
type ShrinkStats struct {
	// From and To count the events of the history before and after.
	From int `json:"from"`
	To   int `json:"to"`
	// Obligation is the obligation every kept candidate failed: the
	// finding's headline.
	Obligation reports.ObligationID `json:"obligation"`
	// Replays counts the replays run; Kept counts the candidates kept.
	Replays int `json:"replays"`
	Kept    int `json:"kept"`
	// Reproduced reports whether a replay of the finding's history failed
	// the same obligation at all; when it did not, nothing was shrunk.
	Reproduced bool `json:"reproduced"`
	// Exhausted reports whether the budget ran out before the passes
	// found nothing more to remove.
	Exhausted bool `json:"exhausted"`
}

// Shrink makes a failing history smaller while it still fails the same
// obligation (the headline, f.Findings[0]). It replays f's history on a
// fresh realm from newRealm, then tries candidates, each a smaller or
// simpler copy of the current history, replayed on a fresh realm of its
// own and judged by Check; a candidate is kept when its first finding
// names the same obligation, and then the replay's recording becomes the
// current history. The passes, repeated until none keeps a candidate or
// the budget runs out:
//
//   - make the history sequential (each operation called after the one
//     before returned), which makes the replay deterministic for a
//     deterministic store;
//   - drop whole processes;
//   - drop chunks of operations, halving the chunk from half the history
//     down to one operation (dropping an open drops its handle's
//     operations with it);
//   - merge a handle into the one its process had before (dropping the
//     open, and the kill or close that ended the one before);
//   - drop every send of a batch that only updates, moving the versions
//     of its scopes' later updates down by one so the chain still holds;
//   - drop every operation on a scope and its updates from every batch;
//   - drop a commit's injected faults;
//   - drop updates from a batch, rows from an append, and a batch's
//     head, truncation and drop;
//   - lower limits and read indices, and drop listing cursors;
//   - rename commit ids, heads and rows to short ones.
//
// Shrink returns the smallest failing history found, as a HistoryFinding
// with the findings of its last check, and what it did. The result does
// not depend on wall time: given a store that answers the same sequential
// history the same way, the same finding shrinks to the same history. It
// returns an error only when a realm cannot be made or opened.
func Shrink(ctx context.Context, newRealm func() (hoststore.HostStoreFactory, error), f HistoryFinding, cfg ShrinkConfig) (HistoryFinding, ShrinkStats, error) {
	if cfg.Replays <= 0 {
		cfg.Replays = 1000
	}
	s := &shrinker{ctx: ctx, newRealm: newRealm, cfg: cfg, best: f}
	s.stats.From, s.stats.To = len(f.History.Events), len(f.History.Events)
	if len(f.Findings) == 0 {
		return f, s.stats, nil
	}
	s.target = f.Findings[0].Obligation
	s.stats.Obligation = s.target
	// The recording made sequential in call order, then in return order
	// (an operation that overlapped others may have taken effect early or
	// late in its interval), then as it ran: a sequential replay is
	// deterministic, a concurrent one need not interleave as the
	// recording did.
	for _, cand := range []*History{serial(f.History, byCall), serial(f.History, byReturn), f.History, f.History} {
		ok, err := s.try(cand)
		if err != nil {
			return f, s.stats, err
		}
		if ok {
			s.stats.Reproduced = true
			break
		}
	}
	if !s.stats.Reproduced {
		return f, s.stats, nil
	}
	passes := []func() (bool, error){s.sequential, s.dropProcs, s.dropChunks, s.mergeHandles, s.dropBatches, s.dropScopes, s.dropFaults, s.simplifyBatches, s.lowerLimits, s.rename}
	for {
		progress := false
		for _, pass := range passes {
			ok, err := pass()
			if err != nil {
				return s.best, s.stats, err
			}
			progress = progress || ok
		}
		if !progress || s.out() {
			break
		}
	}
	s.stats.To = len(s.best.History.Events)
	return s.best, s.stats, nil
}

type shrinker struct {
	ctx      context.Context
	newRealm func() (hoststore.HostStoreFactory, error)
	cfg      ShrinkConfig
	target   reports.ObligationID
	best     HistoryFinding
	stats    ShrinkStats
}

func (s *shrinker) cur() *History { return s.best.History }

// out reports whether the budget is spent, and notes it.
func (s *shrinker) out() bool {
	if s.stats.Replays >= s.cfg.Replays || s.ctx.Err() != nil {
		s.stats.Exhausted = true
		return true
	}
	return false
}

// try replays cand and keeps it when it fails the target obligation.
func (s *shrinker) try(cand *History) (bool, error) {
	if cand == nil || s.out() || len(cand.Events) == 0 {
		return false, nil
	}
	realm, err := s.newRealm()
	if err != nil {
		return false, fmt.Errorf("explore: shrink: new realm: %w", err)
	}
	s.stats.Replays++
	h, err := Replay(s.ctx, realm, cand, s.cfg.Run)
	if err != nil {
		return false, fmt.Errorf("explore: shrink: replay: %w", err)
	}
	v := Check(h, s.cfg.Run.Check)
	if len(v.Findings) == 0 || v.Findings[0].Obligation != s.target {
		return false, nil
	}
	s.best.History, s.best.Findings = h, v.Findings
	s.stats.Kept++
	return true, nil
}

// clone returns a deep enough copy of h to edit: events and batches are
// copied, answers shared.
func clone(h *History) *History {
	c := *h
	c.Events = slices.Clone(h.Events)
	for i := range c.Events {
		if b := c.Events[i].Batch; b != nil {
			c.Events[i].Batch = &Batch{ID: b.ID, Token: b.Token, Updates: cloneUpdates(b.Updates)}
		}
	}
	return &c
}

// without returns h without the events drop marks; dropping an open
// drops every event of its handle.
func without(h *History, drop []bool) *History {
	type hk struct{ proc, handle int }
	gone := map[hk]bool{}
	for i := range h.Events {
		if drop[i] && h.Events[i].Op == OpOpen {
			gone[hk{h.Events[i].Proc, h.Events[i].Handle}] = true
		}
	}
	c := &History{Seed: h.Seed, Procs: h.Procs, Lease: h.Lease}
	for i, e := range h.Events {
		if !drop[i] && !gone[hk{e.Proc, e.Handle}] {
			c.Events = append(c.Events, e)
		}
	}
	return c
}

// Orders to make a history sequential in.
const (
	byCall   = iota // the order the calls began
	byReturn        // the order they returned, calls that never returned last
)

// serial returns h made sequential, or nil when it is already: every
// event returns before the next is called, in the order given, which
// keeps each process's own order.
func serial(h *History, order int) *History {
	seq := true
	for i := 1; i < len(h.Events); i++ {
		if !h.Events[i-1].Returned() || h.Events[i-1].Return > h.Events[i].Call {
			seq = false
		}
	}
	if seq {
		return nil
	}
	c := clone(h)
	if order == byReturn {
		end := func(e *Event) int64 {
			if e.Returned() {
				return e.Return
			}
			return math.MaxInt64
		}
		slices.SortStableFunc(c.Events, func(a, b Event) int { return cmpInt64(end(&a), end(&b)) })
	}
	for i := range c.Events {
		c.Events[i].Inside = "" // one after the other, nothing is inside
		c.Events[i].Call = int64(2*i + 1)
		if c.Events[i].Returned() {
			c.Events[i].Return = int64(2*i + 2)
		}
	}
	return c
}

// sequential makes the history sequential, in call order or else in
// return order.
func (s *shrinker) sequential() (bool, error) {
	for _, order := range []int{byCall, byReturn} {
		c := serial(s.cur(), order)
		if c == nil {
			return false, nil
		}
		ok, err := s.try(c)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

func (s *shrinker) dropProcs() (bool, error) {
	any := false
	for p := 0; ; p++ {
		h := s.cur()
		procs := procsOf(h)
		if len(procs) < 2 || p >= len(procs) {
			return any, nil
		}
		drop := make([]bool, len(h.Events))
		for i := range h.Events {
			drop[i] = h.Events[i].Proc == procs[p]
		}
		ok, err := s.try(without(h, drop))
		if err != nil {
			return any, err
		}
		if ok {
			any = true
			p--
		}
	}
}

func procsOf(h *History) []int {
	var out []int
	for _, e := range h.Events {
		if !slices.Contains(out, e.Proc) {
			out = append(out, e.Proc)
		}
	}
	slices.Sort(out)
	return out
}

// dropChunks drops chunks of events, from the end of the history back,
// halving the chunk each round.
func (s *shrinker) dropChunks() (bool, error) {
	any := false
	for size := max(len(s.cur().Events)/2, 1); size >= 1; size /= 2 {
		for end := len(s.cur().Events); end > 0; {
			h := s.cur()
			end = min(end, len(h.Events))
			start := max(end-size, 0)
			drop := make([]bool, len(h.Events))
			for i := start; i < end; i++ {
				drop[i] = true
			}
			ok, err := s.try(without(h, drop))
			if err != nil {
				return any, err
			}
			// The events from end on were tried already; those before
			// start are where they were, unless a handle went with the chunk.
			any = any || ok
			end = start
			if s.out() {
				return any, nil
			}
		}
	}
	return any, nil
}

// mergeHandles merges each handle into the one its process opened
// before: the open goes, and so do the kills and closes between the two.
func (s *shrinker) mergeHandles() (bool, error) {
	any := false
	for i := 0; i < len(s.cur().Events); i++ {
		h := s.cur()
		e := h.Events[i]
		if e.Op != OpOpen {
			continue
		}
		prev := -1
		for j := i - 1; j >= 0; j-- {
			if h.Events[j].Proc == e.Proc && h.Events[j].Op == OpOpen {
				prev = j
				break
			}
		}
		if prev < 0 {
			continue
		}
		c := clone(h)
		drop := make([]bool, len(c.Events))
		drop[i] = true
		for j := prev + 1; j < i; j++ {
			x := &c.Events[j]
			drop[j] = x.Proc == e.Proc && (x.Op == OpKill || x.Op == OpClose)
		}
		for j := i + 1; j < len(c.Events); j++ {
			if x := &c.Events[j]; x.Proc == e.Proc && x.Handle == e.Handle {
				x.Handle = h.Events[prev].Handle
			}
		}
		c.Events[i].Op = OpLapse // not dropped with its handle by without
		ok, err := s.try(without(c, drop))
		if err != nil {
			return any, err
		}
		if ok {
			any = true
			i--
		}
	}
	return any, nil
}

// dropBatches drops every send of a batch whose updates all move a live
// scope on, and moves down by one the versions of the updates of those
// scopes that the history's other batches make from there on.
func (s *shrinker) dropBatches() (bool, error) {
	any := false
	for _, id := range batchIDs(s.cur()) {
		b := batchOf(s.cur(), id)
		if b == nil || slices.ContainsFunc(b.Updates, func(u hoststore.ScopeUpdate) bool { return u.Previous == nil || u.Delete }) {
			continue
		}
		c := clone(s.cur())
		drop := make([]bool, len(c.Events))
		for i := range c.Events {
			x := c.Events[i].Batch
			if x == nil {
				continue
			}
			if x.ID == id {
				drop[i] = true
				continue
			}
			for k := range x.Updates {
				u := &x.Updates[k]
				if w, ok := b.Update(u.Scope); ok && u.Previous != nil && *u.Previous >= w.Next {
					u.Previous, u.Next = hoststore.Ptr(*u.Previous-1), u.Next-1
				}
			}
		}
		ok, err := s.try(without(c, drop))
		if err != nil {
			return any, err
		}
		any = any || ok
	}
	return any, nil
}

// dropScopes drops every load and read of a scope and its updates from
// every batch (a batch left with no update is not sent).
func (s *shrinker) dropScopes() (bool, error) {
	any := false
	var scopes []hoststore.ScopeRef
	for _, e := range s.cur().Events {
		for _, r := range eventScopes(&e) {
			if !slices.Contains(scopes, r) {
				scopes = append(scopes, r)
			}
		}
	}
	for _, sc := range scopes {
		c := clone(s.cur())
		drop := make([]bool, len(c.Events))
		for i := range c.Events {
			e := &c.Events[i]
			switch {
			case e.Scope != nil && *e.Scope == sc:
				drop[i] = true
			case e.Batch != nil:
				e.Batch.Updates = slices.DeleteFunc(e.Batch.Updates, func(u hoststore.ScopeUpdate) bool { return u.Scope == sc })
				drop[i] = len(e.Batch.Updates) == 0
			}
		}
		ok, err := s.try(without(c, drop))
		if err != nil {
			return any, err
		}
		any = any || ok
	}
	return any, nil
}

func eventScopes(e *Event) []hoststore.ScopeRef {
	var out []hoststore.ScopeRef
	if e.Scope != nil {
		out = append(out, *e.Scope)
	}
	if e.Batch != nil {
		out = append(out, e.Batch.Scopes()...)
	}
	return out
}

func (s *shrinker) dropFaults() (bool, error) {
	any := false
	for i := 0; i < len(s.cur().Events); i++ {
		if len(s.cur().Events[i].Faults) == 0 {
			continue
		}
		c := clone(s.cur())
		c.Events[i].Faults = nil
		ok, err := s.try(c)
		if err != nil {
			return any, err
		}
		any = any || ok
	}
	return any, nil
}

// editBatch returns a copy of h in which every send of batch id is
// edited by edit, or nil when edit changes nothing or leaves a batch
// NewCommitBatch refuses.
func editBatch(h *History, id hoststore.CommitID, edit func(b *Batch) bool) *History {
	c := clone(h)
	changed := false
	for i := range c.Events {
		b := c.Events[i].Batch
		if b == nil || b.ID != id {
			continue
		}
		if !edit(b) {
			return nil
		}
		if _, err := b.Build(); err != nil {
			return nil
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return c
}

func batchIDs(h *History) []hoststore.CommitID {
	var ids []hoststore.CommitID
	for _, e := range h.Events {
		if e.Batch != nil && !slices.Contains(ids, e.Batch.ID) {
			ids = append(ids, e.Batch.ID)
		}
	}
	return ids
}

func batchOf(h *History, id hoststore.CommitID) *Batch {
	for _, e := range h.Events {
		if e.Batch != nil && e.Batch.ID == id {
			return e.Batch
		}
	}
	return nil
}

// simplifyBatches drops updates from batches, rows from appends, and
// the optional parts of updates.
func (s *shrinker) simplifyBatches() (bool, error) {
	any := false
	attempt := func(id hoststore.CommitID, edit func(b *Batch) bool) (bool, error) {
		c := editBatch(s.cur(), id, edit)
		if c == nil {
			return false, nil
		}
		ok, err := s.try(c)
		any = any || ok
		return ok, err
	}
	for _, id := range batchIDs(s.cur()) {
		for u := 0; ; u++ {
			b := batchOf(s.cur(), id)
			if b == nil || u >= len(b.Updates) {
				break
			}
			if len(b.Updates) > 1 {
				ok, err := attempt(id, func(b *Batch) bool { b.Updates = slices.Delete(b.Updates, u, u+1); return true })
				if err != nil {
					return any, err
				}
				if ok {
					u--
					continue
				}
			}
			parts := []func(x *hoststore.ScopeUpdate) bool{
				func(x *hoststore.ScopeUpdate) bool {
					if len(x.Append) < 2 {
						return false
					}
					x.Append = x.Append[:1]
					return true
				},
				func(x *hoststore.ScopeUpdate) bool { ok := len(x.Append) > 0; x.Append = nil; return ok },
				func(x *hoststore.ScopeUpdate) bool { ok := x.TruncateAfter != nil; x.TruncateAfter = nil; return ok },
				func(x *hoststore.ScopeUpdate) bool { ok := x.DropBefore != nil; x.DropBefore = nil; return ok },
				func(x *hoststore.ScopeUpdate) bool { ok := x.Head != nil && x.Previous != nil; x.Head = nil; return ok },
			}
			for _, part := range parts {
				_, err := attempt(id, func(b *Batch) bool { return part(&b.Updates[u]) })
				if err != nil {
					return any, err
				}
			}
		}
	}
	return any, nil
}

// lowerLimits lowers the limits of reads and listings, the index reads
// start from, and drops listing cursors.
func (s *shrinker) lowerLimits() (bool, error) {
	any := false
	for i := 0; i < len(s.cur().Events); i++ {
		e := s.cur().Events[i]
		var edits []func(e *Event)
		if e.Op == OpRead || e.Op == OpList {
			for _, l := range []int{1, e.Limit / 2, e.Limit - 1} {
				if l >= 1 && l < e.Limit {
					edits = append(edits, func(e *Event) { e.Limit = l })
				}
			}
		}
		if e.Op == OpRead && e.From > 0 {
			edits = append(edits, func(e *Event) { e.From = 0 }, func(e *Event) { e.From-- })
		}
		if e.Op == OpList && e.After != nil {
			edits = append(edits, func(e *Event) { e.After = nil })
		}
		for _, edit := range edits {
			c := clone(s.cur())
			edit(&c.Events[i])
			ok, err := s.try(c)
			if err != nil {
				return any, err
			}
			if ok {
				any = true
				break
			}
		}
	}
	return any, nil
}

// rename gives batches the ids c1, c2, … in the order they are first
// sent, heads the names h1, h2, …, rows the payloads 1.0, 1.1, … (batch
// and row), and processes the numbers 0, 1, … in the order they first
// act.
func (s *shrinker) rename() (bool, error) {
	h := s.cur()
	c := renamed(h)
	if Script(c).Text() == Script(h).Text() {
		return false, nil
	}
	return s.try(c)
}

// renamed returns a copy of h with the names rename gives: a peek's
// Inside follows its commit's new id.
func renamed(h *History) *History {
	c := clone(h)
	ids := map[hoststore.CommitID]int{}
	for _, id := range batchIDs(h) {
		ids[id] = len(ids) + 1
	}
	procs := map[int]int{}
	for i := range c.Events {
		e := &c.Events[i]
		if _, ok := procs[e.Proc]; !ok {
			procs[e.Proc] = len(procs)
		}
		e.Proc = procs[e.Proc]
		if n, ok := ids[e.Inside]; ok && e.Inside != "" {
			e.Inside = hoststore.CommitID(fmt.Sprintf("c%d", n))
		}
		if e.Batch == nil {
			continue
		}
		n := ids[e.Batch.ID]
		e.Batch.ID = hoststore.CommitID(fmt.Sprintf("c%d", n))
		for u := range e.Batch.Updates {
			x := &e.Batch.Updates[u]
			if x.Head != nil {
				x.Head = hoststore.Ptr(fmt.Appendf(nil, "h%d", n))
			}
			for r := range x.Append {
				x.Append[r] = fmt.Appendf(nil, "%d.%d.%d", n, u, r)
			}
		}
	}
	return c
}
