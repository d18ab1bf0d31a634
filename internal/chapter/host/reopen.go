package host

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// rowReopen is row 2: "A new process loads what an earlier one committed:
// heads, versions, commit ids and rows."
func rowReopen() *chapter.Row {
	r := &chapter.Row{
		ID:          "reopen",
		Name:        "Reopen",
		Obligations: []reports.ObligationID{chapter.ObDurable, chapter.ObRemoval, chapter.ObOrder, chapter.ObListing, chapter.ObOperations},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, "loads in a new process what an earlier one committed, across all four kinds, with truncations, drops and deletes", []reports.ObligationID{chapter.ObDurable, chapter.ObRemoval, chapter.ObOrder, chapter.ObListing}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			scopes := e.randomHistory(ctx, w, 12, 40)
			e.Note("the writer itself shows what it committed, removals included")
			e.CheckScopes(ctx, w, chapter.ObRemoval, scopes...)

			e.Note("a new process, after the writer is killed, loads the same")
			w.Kill()
			q := e.NewWriter(ctx)
			e.CheckScopes(ctx, q, chapter.ObDurable, scopes...)
			for _, k := range hoststore.AllKinds {
				e.CheckOwnListing(ctx, q, k, 5)
			}
			e.Note("a process that never acquires loads the same")
			r := e.MustOpen(ctx)
			e.CheckScopes(ctx, r, chapter.ObDurable, scopes...)
			r.Kill()
		})
		it(re, "keeps what was committed across a graceful close and a kill, one after another", []reports.ObligationID{chapter.ObDurable}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			s := e.Scope(hoststore.KindSession, "closed")
			for i := 0; i < 3; i++ {
				e.Commit(ctx, w, e.Batch(w, "close", e.Up(s, chapter.WithHead(e.Payload(fmt.Sprintf("h%d-", i), 24)), chapter.WithAppend(e.Payload("row-", 40)))), chapter.ObDurable)
				if i%2 == 0 {
					w.CloseQuietly()
					w.Kill()
				} else {
					w.Kill()
				}
				w = e.NewWriter(ctx)
				e.CheckScope(ctx, w, s, chapter.ObDurable)
			}
		})
	}
	return r
}

// randomHistory commits a seeded random history of n batches over about
// nScopes scopes of every kind, with creates, appends, head changes,
// truncations, drops and deletes, and returns every scope it touched.
func (e *env) randomHistory(ctx context.Context, w *chapter.Proc, nScopes, n int) []hoststore.ScopeRef {
	rng := e.Rand()
	var pool []hoststore.ScopeRef
	for i := 0; i < nScopes; i++ {
		k := hoststore.AllKinds[i%len(hoststore.AllKinds)]
		pool = append(pool, e.Scope(k, fmt.Sprintf("s%02d", i)))
	}
	deleted := map[hoststore.ScopeRef]bool{}
	for i := 0; i < n; i++ {
		var ups []hoststore.ScopeUpdate
		used := map[hoststore.ScopeRef]bool{}
		width := 1 + rng.IntN(3)
		for j := 0; j < width; j++ {
			s := pool[rng.IntN(len(pool))]
			if used[s] || deleted[s] {
				continue
			}
			used[s] = true
			ups = append(ups, e.randomUpdate(s, &deleted))
		}
		if len(ups) == 0 {
			continue
		}
		e.Commit(ctx, w, e.Batch(w, "hist", ups...), chapter.ObDurable)
	}
	e.removals(ctx, w, pool, deleted)
	return pool
}

// removals ends a history with one batch that surely deletes a scope,
// truncates one and drops rows from another, whatever the seed drew.
func (e *env) removals(ctx context.Context, w *chapter.Proc, pool []hoststore.ScopeRef, deleted map[hoststore.ScopeRef]bool) {
	var live []hoststore.ScopeRef
	for _, s := range pool {
		if _, _, ok := e.Model.Bounds(s); ok && !deleted[s] {
			live = append(live, s)
		}
	}
	var ups []hoststore.ScopeUpdate
	for i, s := range live {
		start, end, _ := e.Model.Bounds(s)
		switch i {
		case 0:
			ups = append(ups, e.Up(s, chapter.WithDelete()))
			deleted[s] = true
		case 1:
			ups = append(ups, e.Up(s, chapter.WithTruncate(start+(end-start)/2), chapter.WithAppend([]byte("after-truncate"))))
		case 2:
			ups = append(ups, e.Up(s, chapter.WithAppend([]byte("x"), []byte("y")), chapter.WithDrop(start+1)))
		}
	}
	if len(ups) > 0 {
		e.Commit(ctx, w, e.Batch(w, "removals", ups...), chapter.ObRemoval)
	}
}

func (e *env) randomUpdate(s hoststore.ScopeRef, deleted *map[hoststore.ScopeRef]bool) hoststore.ScopeUpdate {
	rng := e.Rand()
	start, end, exists := e.Model.Bounds(s)
	var opts []chapter.UpOpt
	if !exists {
		rows := rng.IntN(4)
		for i := 0; i < rows; i++ {
			opts = append(opts, chapter.WithAppend(e.Payload("r", 1+rng.IntN(60))))
		}
		return e.Up(s, append(opts, chapter.WithHead(e.Payload("head-", rng.IntN(80))))...)
	}
	if rng.IntN(14) == 0 {
		(*deleted)[s] = true
		return e.Up(s, chapter.WithDelete())
	}
	switch rng.IntN(5) {
	case 0:
		t := start + hoststore.RowIndex(rng.IntN(int(end-start)+2))
		opts = append(opts, chapter.WithTruncate(t))
	case 1:
		d := start + hoststore.RowIndex(rng.IntN(int(end-start)+3))
		opts = append(opts, chapter.WithDrop(d))
	}
	for i := rng.IntN(4); i > 0; i-- {
		opts = append(opts, chapter.WithAppend(e.Payload("r", rng.IntN(90))))
	}
	if rng.IntN(2) == 0 {
		opts = append(opts, chapter.WithHead(e.Payload("head-", rng.IntN(80))))
	}
	return e.Up(s, opts...)
}
