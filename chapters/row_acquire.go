package chapters

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
)

// rowAcquireEmpty is row 1: "Acquire on an empty realm: An exclusive acquire
// supersedes no lease."
func rowAcquireEmpty() *Row {
	r := &Row{
		ID:          "acquire-empty",
		Name:        "Acquire on an empty realm",
		Obligations: []string{ObFenceLease, ObListing, ObOperations},
		DependsOn:   "an empty realm: it runs first, on the fresh realm the chapter starts with",
	}
	r.register = func(re *rowEnv) {
		re.It("answers a token and supersedes no lease", []string{ObFenceLease}, func(ctx context.Context, e *Env) {
			p := e.MustOpen(ctx)
			t, err := p.Timing(ctx)
			if err != nil {
				e.Fail(ObErrors, "FenceTiming() broke", "a fence timing", errText(err))
			}
			if !t.Valid() {
				e.Fail(ObFenceLease, "FenceTiming() answered a timing no constructor builds", "a timing within the Fence Leases bounds", t.String())
			}
			g, err := p.Acquire(ctx, hoststore.Exclusive)
			if err != nil {
				e.Fail(ObFenceLease, "an exclusive acquire on an empty realm failed", "a token", errText(err))
			}
			if g.Token < 1 {
				e.Fail(ObFenceLease, "an exclusive acquire answered token 0", "a token of at least 1", fmt.Sprint(g.Token))
			}
			if g.SupersededLease != 0 {
				e.Fail(ObFenceLease, "an exclusive acquire on an empty realm reported a superseded lease", "superseded lease 0", g.SupersededLease.String())
			}
			e.SetWriter(p)

			e.Note("the acquire is durable and records a live lease: a new process's exclusive acquire answers Held by that token")
			q := e.MustOpen(ctx)
			_, err = q.Acquire(ctx, hoststore.Exclusive)
			var held *hoststore.HeldError
			if !asErr(err, &held) {
				e.Fail(ObFenceLease, "a second process's exclusive acquire, while the first holder's lease is live, did not answer Held", "Held", okOr(err))
			}
			if held.Holder != g.Token {
				e.Fail(ObFenceLease, "Held names a holder other than the live one", fmt.Sprintf("holder %d", g.Token), fmt.Sprintf("holder %d", held.Holder))
			}
			if held.Remaining <= 0 || held.Remaining > t.Lease() {
				e.Fail(ObFenceLease, "Held reports a remaining lease outside (0, lease]", fmt.Sprintf("0 < remaining <= %s", t.Lease()), held.Remaining.String())
			}
			q.Kill()
		})
		re.It("shows an empty realm: no scope listed, none loaded, no rows", []string{ObListing, ObOperations}, func(ctx context.Context, e *Env) {
			p := e.MustOpen(ctx)
			for _, k := range hoststore.AllKinds {
				pg, err := p.List(ctx, k, nil, 10)
				if err != nil {
					e.Fail(ObOperations, fmt.Sprintf("ListHeads(%s) on an empty realm failed", k), "an empty page", errText(err))
				}
				if len(pg.Heads) != 0 || pg.Next != nil {
					e.Fail(ObListing, fmt.Sprintf("ListHeads(%s) on an empty realm listed something", k), "no heads, next nil", fmt.Sprintf("%d heads, next %s", len(pg.Heads), nameText(pg.Next)))
				}
			}
			e.CheckScope(ctx, p, e.Scope(hoststore.KindSession, "never-created"), ObOperations)
			p.Kill()
		})
	}
	return r
}
