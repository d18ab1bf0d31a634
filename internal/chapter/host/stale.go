package host

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// rowStaleFence is row 4: "The current holder's first renew succeeds, even
// if its lease lapsed during the rows before; a superseded writer can
// neither keep the fence nor make a batch visible; an exclusive acquire
// waits out a live holder's lease and no longer."
func rowStaleFence() *chapter.Row {
	r := &chapter.Row{
		ID:          "stale-fence",
		Name:        "Stale fence",
		Obligations: []reports.ObligationID{chapter.ObFenceLease, chapter.ObFencing, chapter.ObListing, chapter.ObVersionChain},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, "lets the current holder renew, even after its lease lapsed", []reports.ObligationID{chapter.ObFenceLease}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			e.Lapse(ctx)
			if err := w.Renew(ctx, w.Token); err != nil {
				e.Fail(chapter.ObFenceLease, "the current holder's renew after its lease lapsed was refused", "Ok: a renew of the current token records a new lease from now, also when the last one lapsed", chapter.ErrText(err))
			}
			e.Note("the renew recorded a live lease again: an exclusive acquire answers Held")
			q := e.MustOpen(ctx)
			_, err := q.Acquire(ctx, hoststore.Exclusive)
			var held *hoststore.HeldError
			if !asErr(err, &held) {
				e.Fail(chapter.ObFenceLease, "after the holder renewed, another process's exclusive acquire did not answer Held", "Held", chapter.OkOr(err))
			}
			if held.Holder != w.Token {
				e.Fail(chapter.ObFenceLease, "Held names a holder other than the one that renewed", fmt.Sprintf("holder %d", w.Token), fmt.Sprintf("holder %d", held.Holder))
			}
			q.Kill()
		})
		it(re, "answers Held to an exclusive acquire while the holder is live, and grants it once the lease lapsed", []reports.ObligationID{chapter.ObFenceLease}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			if err := w.Renew(ctx, w.Token); err != nil {
				e.Fail(chapter.ObFenceLease, "the current holder's renew was refused", "Ok", chapter.ErrText(err))
			}
			timing, _ := w.Timing(ctx)
			q := e.MustOpen(ctx)
			_, err := q.Acquire(ctx, hoststore.Exclusive)
			var held *hoststore.HeldError
			if !asErr(err, &held) {
				e.Fail(chapter.ObFenceLease, "an exclusive acquire while the holder's lease is live did not answer Held", "Held", chapter.OkOr(err))
			}
			if held.Holder != w.Token || held.Remaining <= 0 || held.Remaining > timing.Lease() {
				e.Fail(chapter.ObFenceLease, "Held does not name the live holder and what remains of its lease", fmt.Sprintf("holder %d, 0 < remaining <= %s", w.Token, timing.Lease()), fmt.Sprintf("holder %d, remaining %s", held.Holder, held.Remaining))
			}
			e.Lapse(ctx)
			g, err := q.Acquire(ctx, hoststore.Exclusive)
			if err != nil {
				e.Fail(chapter.ObFenceLease, "an exclusive acquire after the holder's lease lapsed did not succeed", "a token: an exclusive acquire waits out a live holder's lease and no longer", chapter.ErrText(err))
			}
			if g.Token <= w.Token {
				e.Fail(chapter.ObFenceLease, "the new token is not higher than every token acquired before", fmt.Sprintf("above %d", w.Token), fmt.Sprint(g.Token))
			}
			if g.SupersededLease != 0 {
				e.Fail(chapter.ObFenceLease, "an exclusive acquire over a lapsed lease reported a superseded lease", "0", g.SupersededLease.String())
			}
			e.SetWriter(q)
			e.Note("the superseded holder can no longer keep the fence")
			err = w.Renew(ctx, w.Token)
			var fo *hoststore.FencedOutError
			if !asErr(err, &fo) {
				e.Fail(chapter.ObFenceLease, "a superseded holder's renew did not answer FencedOut", "FencedOut", chapter.OkOr(err))
			}
			if fo.Current <= w.Token {
				e.Fail(chapter.ObFenceLease, "FencedOut does not name a token higher than the caller's", fmt.Sprintf("above %d", w.Token), fmt.Sprint(fo.Current))
			}
			if err := q.Renew(ctx, q.Token); err != nil {
				e.Fail(chapter.ObFenceLease, "the new holder's renew failed after the old holder's refused renew", "Ok", chapter.ErrText(err))
			}
		})
		it(re, "supersedes a live holder on takeover and reports what remained of its lease", []reports.ObligationID{chapter.ObFenceLease}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			if err := w.Renew(ctx, w.Token); err != nil {
				e.Fail(chapter.ObFenceLease, "the current holder's renew was refused", "Ok", chapter.ErrText(err))
			}
			timing, _ := w.Timing(ctx)
			q := e.MustOpen(ctx)
			g, err := q.Acquire(ctx, hoststore.Takeover)
			if err != nil {
				e.Fail(chapter.ObFenceLease, "a takeover failed", "a token", chapter.ErrText(err))
			}
			if g.Token <= w.Token {
				e.Fail(chapter.ObFenceLease, "a takeover's token is not higher than the holder's", fmt.Sprintf("above %d", w.Token), fmt.Sprint(g.Token))
			}
			if g.SupersededLease <= 0 || g.SupersededLease > timing.Lease() {
				e.Fail(chapter.ObFenceLease, "a takeover of a live holder did not report what remained of its lease", fmt.Sprintf("0 < superseded lease <= %s", timing.Lease()), g.SupersededLease.String())
			}
			e.SetWriter(q)
			if err := w.Renew(ctx, w.Token); hoststore.KindOf(err) != hoststore.ErrKindFencedOut {
				e.Fail(chapter.ObFenceLease, "the holder superseded by a takeover could still renew", "FencedOut", chapter.OkOr(err))
			}
			e.Note("a takeover with no live holder reports zero")
			e.Lapse(ctx)
			r := e.MustOpen(ctx)
			g2, err := r.Acquire(ctx, hoststore.Takeover)
			if err != nil {
				e.Fail(chapter.ObFenceLease, "a takeover with no live holder failed", "a token", chapter.ErrText(err))
			}
			if g2.SupersededLease != 0 || g2.Token <= g.Token {
				e.Fail(chapter.ObFenceLease, "a takeover with no live holder reported a superseded lease, or a token not above every earlier one", fmt.Sprintf("superseded 0, token above %d", g.Token), fmt.Sprintf("superseded %s, token %d", g2.SupersededLease, g2.Token))
			}
			e.SetWriter(r)
			q.Kill()
			w.Kill()
		})
		it(re, "refuses to renew a token it never issued", []reports.ObligationID{chapter.ObFenceLease}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			bogus := w.Token + 1000
			q := e.MustOpen(ctx)
			if err := q.Renew(ctx, bogus); err == nil {
				e.Fail(chapter.ObFenceLease, fmt.Sprintf("a renew of token %d, which the store never issued, succeeded", bogus), "a refusal: the store refuses a token that was superseded or that it never issued", "Ok")
			}
			if err := w.Renew(ctx, w.Token); err != nil {
				e.Fail(chapter.ObFenceLease, "after a refused renew of a token never issued, the real holder could not renew", "Ok", chapter.ErrText(err))
			}
			q.Kill()
		})
		it(re, "hides a superseded writer's batch in every scope, from every later load and listing", []reports.ObligationID{chapter.ObFencing, chapter.ObListing, chapter.ObVersionChain}, func(ctx context.Context, e *env) {
			old := e.Writer(ctx)
			a := e.Scope(hoststore.KindMob, "a")
			b := e.Scope(hoststore.KindIdentity, "b")
			e.Commit(ctx, old, e.Batch(old, "setup", e.Up(a, chapter.WithHead([]byte("a1")), chapter.WithAppend([]byte("a-row0"))), e.Up(b, chapter.WithHead([]byte("b1")))), chapter.ObDurable)
			e.Note("a new holder takes over; the old one does not know yet")
			cur := e.MustOpen(ctx)
			if _, err := cur.Acquire(ctx, hoststore.Takeover); err != nil {
				e.Fail(chapter.ObFenceLease, "a takeover failed", "a token", chapter.ErrText(err))
			}
			e.SetWriter(cur)
			e.Note("what the old writer committed before the takeover stays")
			e.CheckScopes(ctx, cur, chapter.ObDurable, a, b)
			fresh := e.Scope(hoststore.KindMob, "created-by-stale")
			stale := e.Batch(old, "stale",
				e.Up(a, chapter.WithHead([]byte("stale")), chapter.WithAppend([]byte("stale-row"))),
				e.Up(b, chapter.WithDelete()),
				e.Up(fresh, chapter.WithHead([]byte("stale"))))
			err := old.Commit(ctx, stale)
			if err != nil && !retryRefusal(err) && hoststore.KindOf(err) != hoststore.ErrKindIndeterminate {
				e.Fail(chapter.ObErrors, "a superseded writer's commit answered an error that is neither FencedOut nor a refusal", "Ok (hidden at load) or FencedOut", chapter.ErrText(err))
			}
			r := e.MustOpen(ctx)
			for _, p := range []*chapter.Proc{old, cur, r} {
				if shows, _ := e.Shows(ctx, p, stale); len(shows) > 0 {
					e.Fail(chapter.ObFencing, fmt.Sprintf("a batch with token %d, committed after token %d was acquired, is visible to %s", old.Token, cur.Token, p.Name()),
						"the batch in no scope", fmt.Sprintf("shows in %v", shows))
				}
				e.CheckScopes(ctx, p, chapter.ObFencing, a, b, fresh)
				e.CheckOwnListing(ctx, p, hoststore.KindMob, 7)
			}
			e.Note("the current holder writes the versions the stale batch aimed at")
			e.Commit(ctx, cur, e.Batch(cur, "current", e.Up(a, chapter.WithHead([]byte("a2")), chapter.WithAppend([]byte("a-row1"))), e.Up(b, chapter.WithHead([]byte("b2")))), chapter.ObVersionChain)
			for _, p := range []*chapter.Proc{cur, r} {
				e.CheckScopes(ctx, p, chapter.ObFencing, a, b, fresh)
			}
			r.Kill()
			old.Kill()
		})
	}
	return r
}
