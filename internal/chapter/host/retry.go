package host

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/reports"
)

// rowRetry is row 7: "A commit id sent again acts once, from the same
// handle or a new one."
func rowRetry() *chapter.Row {
	r := &chapter.Row{
		ID:          "retry",
		Name:        "Retry",
		Obligations: []reports.ObligationID{chapter.ObRetry, chapter.ObOrder},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, "acts once when a landed commit id is sent again from the same handle", []reports.ObligationID{chapter.ObRetry}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			b := e.retryBatch(ctx, w, "same")
			e.Commit(ctx, w, b, chapter.ObRetry)
			e.resend(ctx, w, b)
		})
		it(re, "acts once when a landed commit id is sent again from a new handle", []reports.ObligationID{chapter.ObRetry}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			b := e.retryBatch(ctx, w, "new-handle")
			e.Commit(ctx, w, b, chapter.ObRetry)
			q := e.MustOpen(ctx)
			e.resend(ctx, q, b)
			q.Kill()
		})
		it(re, "acts once when a landed commit id is sent again after its scopes moved on, from a new process", []reports.ObligationID{chapter.ObRetry}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			b := e.retryBatch(ctx, w, "moved-on")
			e.Commit(ctx, w, b, chapter.ObRetry)
			var ups []hoststore.ScopeUpdate
			for _, s := range b.Scopes() {
				ups = append(ups, e.Up(s, chapter.WithAppend([]byte("later")), chapter.WithHead([]byte("later"))))
			}
			e.Commit(ctx, w, e.Batch(w, "later", ups...), chapter.ObRetry)
			w.Kill()
			q := e.NewWriter(ctx)
			e.resend(ctx, q, b)
		})
		it(re, "acts once when the same commit id is sent twice at once, from two handles", []reports.ObligationID{chapter.ObRetry}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			b := e.retryBatch(ctx, w, "concurrent")
			q := e.MustOpen(ctx)
			var h *faults.Hold
			if e.ProbeInStore(ctx, instore.CommitLocked) {
				h = e.Injector().HoldAt(instore.CommitLocked, chapter.MatchID(b.CommitID()))
				defer h.Disarm()
			} else {
				e.NotExercisedInStore("holding the first send inside the store while the second arrives", "the store does not call the in-store failpoint commit-locked; both sends race instead")
			}
			first := goCommit(ctx, w, b)
			if h != nil {
				e.waitArrived(ctx, h, first)
			}
			second := goCommit(ctx, q, b)
			if h != nil {
				h.Release()
			}
			e1, e2 := <-first, <-second
			for _, err := range []error{e1, e2} {
				if err != nil && !retryRefusal(err) && hoststore.KindOf(err) != hoststore.ErrKindIndeterminate && hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
					e.Fail(chapter.ObRetry, "a duplicate send answered an error that is neither Ok nor a refusal", "Ok or a refusal of the duplicate", chapter.ErrText(err))
				}
			}
			if !e.Settle(ctx, w, b) {
				if e1 == nil || e2 == nil {
					e.Fail(chapter.ObDurable, "a batch answered Ok is not visible", "visible", "not visible")
				}
				e.Fail(chapter.ObRetry, "neither of two sends of one batch landed", "one of them lands", fmt.Sprintf("%s; %s", chapter.ErrText(e1), chapter.ErrText(e2)))
			}
			e.CheckScopes(ctx, w, chapter.ObRetry, b.Scopes()...)
			r := e.MustOpen(ctx)
			e.CheckScopes(ctx, r, chapter.ObRetry, b.Scopes()...)
			r.Kill()
			q.Kill()
		})
	}
	return r
}

// retryBatch creates two scopes and builds a batch over both that appends
// rows, so a batch applied twice shows twice the rows.
func (e *env) retryBatch(ctx context.Context, w *chapter.Proc, tag string) *hoststore.CommitBatch {
	a := e.Scope(hoststore.KindSession, tag+"/a")
	c := e.Scope(hoststore.KindIdentity, tag+"/b")
	e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, chapter.WithHead([]byte("a0"))), e.Up(c, chapter.WithHead([]byte("b0")), chapter.WithAppend([]byte("b-row0")))), chapter.ObDurable)
	return e.Batch(w, tag, e.Up(a, chapter.WithHead([]byte("a1")), chapter.WithAppend([]byte("a-row0"), []byte("a-row1"))), e.Up(c, chapter.WithAppend([]byte("b-row1"))))
}

// resend sends a landed batch again from p and checks it acted once: an Ok
// or a refusal of the duplicate, and the realm exactly as the model (which
// has the batch once).
func (e *env) resend(ctx context.Context, p *chapter.Proc, b *hoststore.CommitBatch) {
	e.Note("the landed batch shows before it is sent again")
	e.CheckScopes(ctx, p, chapter.ObDurable, b.Scopes()...)
	err := p.Commit(ctx, b)
	if err != nil && !retryRefusal(err) && hoststore.KindOf(err) != hoststore.ErrKindIndeterminate {
		e.Fail(chapter.ObRetry, fmt.Sprintf("a second send of landed batch %q answered neither Ok nor a refusal of the duplicate", b.CommitID()), "Ok (or the duplicate refused)", chapter.ErrText(err))
	}
	e.CheckScopes(ctx, p, chapter.ObRetry, b.Scopes()...)
	r := e.MustOpen(ctx)
	e.CheckScopes(ctx, r, chapter.ObRetry, b.Scopes()...)
	r.Kill()
	e.Note("the chain goes on after the retry")
	e.killContinue(ctx, e.Writer(ctx), b.Scopes())
}
