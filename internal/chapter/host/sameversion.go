package host

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
)

// rowSameVersion is row 6: "Every load resolves two batches for one version
// the same way, and the loser is invisible in all its scopes."
func rowSameVersion() *chapter.Row {
	r := &chapter.Row{
		ID:          "same-version",
		Name:        "Same version twice",
		Obligations: []reports.ObligationID{chapter.ObVersionChain, chapter.ObFencing, chapter.ObAllOrNothing},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, "resolves two batches of one writer for one version the same way everywhere; the loser is invisible in all its scopes", []reports.ObligationID{chapter.ObVersionChain, chapter.ObAllOrNothing}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			a := e.Scope(hoststore.KindSession, "a")
			b := e.Scope(hoststore.KindRecord, "b")
			c := e.Scope(hoststore.KindRecord, "c")
			e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, chapter.WithHead([]byte("a1"))), e.Up(b, chapter.WithHead([]byte("b1"))), e.Up(c, chapter.WithHead([]byte("c1")))), chapter.ObDurable)
			x := e.Batch(w, "x", e.Up(a, chapter.WithHead([]byte("a-by-x")), chapter.WithAppend([]byte("x"))), e.Up(b, chapter.WithHead([]byte("b-by-x"))))
			y := e.Batch(w, "y", e.Up(a, chapter.WithHead([]byte("a-by-y")), chapter.WithAppend([]byte("y"))), e.Up(c, chapter.WithHead([]byte("c-by-y"))))
			ex, ey := w.Commit(ctx, x), w.Commit(ctx, y)
			e.judgeTwins(ctx, x, y, ex, ey, nil)
		})
		it(re, "refuses or hides wholly a second batch whose shared version is its last update, not its first", []reports.ObligationID{chapter.ObVersionChain, chapter.ObAllOrNothing}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			a := e.Scope(hoststore.KindSession, "last/a")
			b := e.Scope(hoststore.KindRecord, "last/b")
			c := e.Scope(hoststore.KindRecord, "last/c")
			e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, chapter.WithHead([]byte("a1"))), e.Up(b, chapter.WithHead([]byte("b1"))), e.Up(c, chapter.WithHead([]byte("c1")))), chapter.ObDurable)
			x := e.Batch(w, "x", e.Up(a, chapter.WithHead([]byte("a-by-x"))), e.Up(b, chapter.WithHead([]byte("b-by-x"))))
			e.Note("y writes c first and the version x already took in a last: a store that applies as it checks leaves c written")
			y := e.Batch(w, "y", e.Up(c, chapter.WithHead([]byte("c-by-y")), chapter.WithAppend([]byte("y"))), e.Up(a, chapter.WithHead([]byte("a-by-y"))))
			ex := w.Commit(ctx, x)
			ey := w.Commit(ctx, y)
			e.judgeTwins(ctx, x, y, ex, ey, nil)
		})
		it(re, "refuses, or hides wholly, a create of a name that exists, at its first version and at a later one", []reports.ObligationID{chapter.ObVersionChain, chapter.ObAllOrNothing, chapter.ObOperations}, func(ctx context.Context, e *env) {
			e.createOverExisting(ctx)
		})
		it(re, "refuses a create of a name that was deleted with Invalid, or shows it wholly as a new scope", []reports.ObligationID{chapter.ObVersionChain, chapter.ObAllOrNothing, chapter.ObOperations}, func(ctx context.Context, e *env) {
			e.createOverDeleted(ctx)
		})
		it(re, "never lets a lower token beat a higher one at the same version, whichever commits first", []reports.ObligationID{chapter.ObVersionChain, chapter.ObFencing}, func(ctx context.Context, e *env) {
			for _, lowFirst := range []bool{false, true} {
				low := e.Writer(ctx)
				tag := "high-first"
				if lowFirst {
					tag = "low-first"
				}
				a := e.Scope(hoststore.KindMob, tag+"/a")
				b := e.Scope(hoststore.KindMob, tag+"/b")
				c := e.Scope(hoststore.KindMob, tag+"/c")
				e.Commit(ctx, low, e.Batch(low, "setup", e.Up(a, chapter.WithHead([]byte("a1"))), e.Up(b, chapter.WithHead([]byte("b1"))), e.Up(c, chapter.WithHead([]byte("c1")))), chapter.ObDurable)
				lo := e.Batch(low, "low", e.Up(a, chapter.WithHead([]byte("a-low")), chapter.WithAppend([]byte("low"))), e.Up(b, chapter.WithHead([]byte("b-low"))))
				high := e.MustOpen(ctx)
				if _, err := high.Acquire(ctx, hoststore.Takeover); err != nil {
					e.Fail(chapter.ObFenceLease, "a takeover failed", "a token", chapter.ErrText(err))
				}
				e.SetWriter(high)
				e.Note("what the low writer committed before the takeover shows to the new holder")
				e.CheckScopes(ctx, high, chapter.ObDurable, a, b, c)
				hi := e.Batch(high, "high", e.Up(a, chapter.WithHead([]byte("a-high")), chapter.WithAppend([]byte("high"))), e.Up(c, chapter.WithHead([]byte("c-high"))))
				var elo, ehi error
				if lowFirst {
					elo = low.Commit(ctx, lo)
					ehi = high.Commit(ctx, hi)
				} else {
					ehi = high.Commit(ctx, hi)
					elo = low.Commit(ctx, lo)
				}
				win := e.judgeTwins(ctx, hi, lo, ehi, elo, high)
				if win != hi {
					e.Fail(chapter.ObVersionChain, fmt.Sprintf("batch %q with token %d beat batch %q with token %d at the same version", lo.CommitID(), lo.Token(), hi.CommitID(), hi.Token()),
						"the higher token's batch wins (or the lower one is fenced out)", fmt.Sprintf("%q visible", lo.CommitID()))
				}
				low.Kill()
			}
		})
	}
	return r
}

// judgeTwins checks two batches written for the same versions: each shows
// wholly or not at all, from every handle alike, exactly one of them wins
// the version they share, and a batch refused at commit is invisible. The
// winner is applied to the model, the realm is checked, and the winner
// answered.
func (e *env) judgeTwins(ctx context.Context, x, y *hoststore.CommitBatch, ex, ey error, next *chapter.Proc) *hoststore.CommitBatch {
	for _, pair := range []struct {
		b   *hoststore.CommitBatch
		err error
	}{{x, ex}, {y, ey}} {
		if pair.err != nil && !retryRefusal(pair.err) && hoststore.KindOf(pair.err) != hoststore.ErrKindIndeterminate {
			e.Fail(chapter.ObErrors, fmt.Sprintf("a commit of batch %q for a version already written answered neither Ok nor Conflict/FencedOut", pair.b.CommitID()), "Ok (resolved at load), Conflict or FencedOut", chapter.ErrText(pair.err))
		}
	}
	r := e.MustOpen(ctx)
	defer r.Kill()
	procs := []*chapter.Proc{e.Writer(ctx), r}
	var first [2]bool
	for i, p := range procs {
		sx, hx := e.Shows(ctx, p, x)
		sy, hy := e.Shows(ctx, p, y)
		for _, c := range []struct {
			b           *hoststore.CommitBatch
			err         error
			shows, hide []hoststore.ScopeRef
		}{{x, ex, sx, hx}, {y, ey, sy, hy}} {
			if len(c.shows) > 0 && len(c.hide) > 0 && retryRefusal(c.err) {
				e.Fail(chapter.ObAllOrNothing, fmt.Sprintf("batch %q was refused at commit (%s), yet %s shows it in some of its scopes", c.b.CommitID(), hoststore.KindOf(c.err), p.Name()),
					"a refused batch applies nothing", fmt.Sprintf("shows in %v; not in %v", c.shows, c.hide))
			}
			if len(c.shows) > 0 && len(c.hide) > 0 {
				e.Fail(chapter.ObVersionChain, fmt.Sprintf("batch %q shows to %s in some of its scopes and not in others: a batch that loses in one scope must be invisible in all of them", c.b.CommitID(), p.Name()),
					"the batch wholly or not at all", fmt.Sprintf("shows in %v; not in %v", c.shows, c.hide))
			}
		}
		vx, vy := len(sx) > 0, len(sy) > 0
		if !vx && !vy && (ex == nil || ey == nil) && hoststore.KindOf(ex) != hoststore.ErrKindIndeterminate && hoststore.KindOf(ey) != hoststore.ErrKindIndeterminate {
			e.Fail(chapter.ObDurable, fmt.Sprintf("two batches for one version, %q and %q, at least one answered Ok: %s sees neither", x.CommitID(), y.CommitID(), p.Name()),
				"one of them visible: a load resolves the two, it does not lose both", "neither visible")
		}
		if vx == vy {
			e.Fail(chapter.ObVersionChain, fmt.Sprintf("two batches for one version, %q and %q: %s sees %s", x.CommitID(), y.CommitID(), p.Name(), map[bool]string{true: "both", false: "neither"}[vx]),
				"exactly one of them visible", map[bool]string{true: "both visible", false: "neither visible"}[vx])
		}
		if i == 0 {
			first = [2]bool{vx, vy}
		} else if first != [2]bool{vx, vy} {
			e.Fail(chapter.ObVersionChain, "two processes resolve the same two batches differently", fmt.Sprintf("x visible %v, y visible %v (as the first load)", first[0], first[1]), fmt.Sprintf("x visible %v, y visible %v", vx, vy))
		}
	}
	win := x
	if first[1] {
		win = y
	}
	if (win == x && retryRefusal(ex)) || (win == y && retryRefusal(ey)) {
		e.Fail(chapter.ObVersionChain, fmt.Sprintf("batch %q was refused at commit, yet it is the one loads show", win.CommitID()), "a refused batch is not part of the realm", "visible")
	}
	e.Landed(win)
	e.CheckScopes(ctx, r, chapter.ObVersionChain, append(x.Scopes(), y.Scopes()...)...)
	w := next
	if w == nil {
		w = e.Writer(ctx)
	}
	e.Note("the chain goes on from the winner")
	e.killContinue(ctx, w, win.Scopes())
	return win
}
