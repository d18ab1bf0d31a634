package host

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// rowAcquireEmpty is row 1: "Acquire on an empty realm: An exclusive acquire
// supersedes no lease."
func rowAcquireEmpty() *chapter.Row {
	r := &chapter.Row{
		ID:          "acquire-empty",
		Name:        "Acquire on an empty realm",
		Obligations: []reports.ObligationID{chapter.ObFenceLease, chapter.ObListing, chapter.ObOperations},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, "answers a token and supersedes no lease", []reports.ObligationID{chapter.ObFenceLease}, func(ctx context.Context, e *env) {
			p := e.MustOpen(ctx)
			t, err := p.Timing(ctx)
			if err != nil {
				e.Fail(chapter.ObErrors, "FenceTiming() broke", "a fence timing", chapter.ErrText(err))
			}
			if !t.Valid() {
				e.Fail(chapter.ObFenceLease, "FenceTiming() answered a timing no constructor builds", "a timing within the Fence Leases bounds", t.String())
			}
			g, err := p.Acquire(ctx, hoststore.Exclusive)
			if err != nil {
				e.Fail(chapter.ObFenceLease, "an exclusive acquire on an empty realm failed", "a token", chapter.ErrText(err))
			}
			if g.Token < 1 {
				e.Fail(chapter.ObFenceLease, "an exclusive acquire answered token 0", "a token of at least 1", fmt.Sprint(g.Token))
			}
			if g.SupersededLease != 0 {
				e.Fail(chapter.ObFenceLease, "an exclusive acquire on an empty realm reported a superseded lease", "superseded lease 0", g.SupersededLease.String())
			}
			e.SetWriter(p)

			e.Note("the acquire is durable and records a live lease: a new process's exclusive acquire answers Held by that token")
			q := e.MustOpen(ctx)
			_, err = q.Acquire(ctx, hoststore.Exclusive)
			var held *hoststore.HeldError
			if !asErr(err, &held) {
				e.Fail(chapter.ObFenceLease, "a second process's exclusive acquire, while the first holder's lease is live, did not answer Held", "Held", chapter.OkOr(err))
			}
			if held.Holder != g.Token {
				e.Fail(chapter.ObFenceLease, "Held names a holder other than the live one", fmt.Sprintf("holder %d", g.Token), fmt.Sprintf("holder %d", held.Holder))
			}
			if held.Remaining <= 0 || held.Remaining > t.Lease() {
				e.Fail(chapter.ObFenceLease, "Held reports a remaining lease outside (0, lease]", fmt.Sprintf("0 < remaining <= %s", t.Lease()), held.Remaining.String())
			}
			q.Kill()
		})
		it(re, "shows an empty realm: no scope listed, none loaded, no rows", []reports.ObligationID{chapter.ObListing, chapter.ObOperations}, func(ctx context.Context, e *env) {
			p := e.MustOpen(ctx)
			for _, k := range hoststore.AllKinds {
				pg, err := p.List(ctx, k, nil, 10)
				if err != nil {
					e.Fail(chapter.ObOperations, fmt.Sprintf("ListHeads(%s) on an empty realm failed", k), "an empty page", chapter.ErrText(err))
				}
				if len(pg.Heads) != 0 || pg.Next != nil {
					e.Fail(chapter.ObListing, fmt.Sprintf("ListHeads(%s) on an empty realm listed something", k), "no heads, next nil", fmt.Sprintf("%d heads, next %s", len(pg.Heads), chapter.NameText(pg.Next)))
				}
			}
			e.CheckScope(ctx, p, e.Scope(hoststore.KindSession, "never-created"), chapter.ObOperations)
			p.Kill()
		})
	}
	return r
}
