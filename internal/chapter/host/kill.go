package host

import (
	"context"
	"fmt"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/reports"
)

// rowKill is row 3: "A writer dies before, during or after a batch over two
// scopes; the next writer sees it in both or neither, and settles an
// unknown batch the way the writer does."
func rowKill() *chapter.Row {
	r := &chapter.Row{
		ID:          "kill",
		Name:        "Kill",
		Obligations: []reports.ObligationID{chapter.ObAllOrNothing, chapter.ObDurable, chapter.ObFencing, chapter.ObRetry, chapter.ObErrors},
	}
	r.Specs = func(re *chapter.Specs) {
		obs := []reports.ObligationID{chapter.ObAllOrNothing, chapter.ObDurable}
		it(re, "before the request reaches the store: the next writer sees the batch in both scopes or neither", obs, func(ctx context.Context, e *env) {
			w, b := e.killSetup(ctx, "before-send")
			w.Wrapped().Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.BeforeSend, Effect: faults.EffectKill})
			_ = w.Commit(ctx, b)
			e.killAftermath(ctx, b, false)
		})
		it(re, "with the request in flight: the next writer sees the batch in both scopes or neither", obs, func(ctx context.Context, e *env) {
			w, b := e.killSetup(ctx, "in-flight")
			w.Wrapped().Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.InFlight, Effect: faults.EffectKill})
			_ = w.Commit(ctx, b)
			e.killAftermath(ctx, b, false)
		})
		it(re, "after the store answered Ok, the answer lost: the next writer sees the batch in both scopes", []reports.ObligationID{chapter.ObAllOrNothing, chapter.ObDurable, chapter.ObFencing}, func(ctx context.Context, e *env) {
			w, b := e.killSetup(ctx, "answer-lost")
			err := w.Commit(ctx, b)
			w.Kill()
			e.killAftermath(ctx, b, err == nil)
		})
		for _, site := range instore.Sites {
			site := site
			it(re, fmt.Sprintf("with the commit held inside the store at %s, then dropped: the next writer sees it in both scopes or neither", site), obs, func(ctx context.Context, e *env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercisedInStore(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", site))
				}
				w, b := e.killSetup(ctx, "held-"+string(site))
				h, res := e.holdCommit(ctx, w, b, site)
				e.Note("while the commit is held, another process loads its scopes")
				r := e.MustOpen(ctx)
				shownHeld, hidden := e.Shows(ctx, r, b)
				r.Kill()
				if len(shownHeld) > 0 && len(hidden) > 0 {
					h.Release()
					e.Fail(chapter.ObAllOrNothing, fmt.Sprintf("batch %q, held at %s, shows in some of its scopes and not in others", b.CommitID(), site),
						"the batch in every scope or in none", fmt.Sprintf("shows in %v; not in %v", shownHeld, hidden))
				}
				w.Kill()
				h.Release()
				<-res
				landed := e.killAftermath(ctx, b, site == instore.CommitAfterPoint)
				if len(shownHeld) > 0 && !landed {
					e.Fail(chapter.ObAllOrNothing, fmt.Sprintf("a load showed batch %q while it was held at %s, and the batch then never landed", b.CommitID(), site),
						"a load shows a batch once it landed, never one that does not land", "shown, then gone")
				}
			})
			it(re, fmt.Sprintf("with a crash inside the store at %s: the next writer sees it in both scopes or neither", site), obs, func(ctx context.Context, e *env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercisedInStore(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can crash there", site))
				}
				w, b := e.killSetup(ctx, "crash-"+string(site))
				h := e.Injector().HoldAt(site, chapter.MatchID(b.CommitID()))
				defer h.Disarm()
				h.Crash()
				_ = w.Commit(ctx, b)
				w.Kill()
				e.killAftermath(ctx, b, site == instore.CommitAfterPoint)
			})
		}
		ctxObs := []reports.ObligationID{chapter.ObAllOrNothing, chapter.ObDurable, chapter.ObErrors}
		it(re, "with its caller's context ended before the call: an Ok answer means the next writer sees the batch in both scopes; any other, in both or neither", ctxObs, func(ctx context.Context, e *env) {
			w, b := e.killSetup(ctx, "ctx-ended")
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			err := w.CommitUnder(ctx, cctx, b)
			e.ctxAftermath(ctx, w, b, err, "though its context had ended before the call")
		})
		for _, site := range instore.Sites {
			it(re, fmt.Sprintf("with its caller's context ended while the commit is held inside the store at %s: an Ok answer means the next writer sees the batch in both scopes; any other, in both or neither", site), ctxObs, func(ctx context.Context, e *env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercisedInStore(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", site))
				}
				w, b := e.killSetup(ctx, "ctx-"+string(site))
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				h, res := e.holdCommitUnder(ctx, cctx, w, b, site)
				cancel()
				select {
				case <-h.Left(): // the site saw the context end
				case <-time.After(e.Cfg.Settings.SettleBound()):
					e.Note("the held commit did not leave %s when its context ended: the store passes instore.At another context; the commit is released", site)
				case <-ctx.Done():
				}
				h.Release()
				e.ctxAftermath(ctx, w, b, <-res, fmt.Sprintf("though its context ended while it was held at %s", site))
			})
		}
		it(re, "with the answer lost to a transport fault: the writer settles by retrying the same batch, which acts once", []reports.ObligationID{chapter.ObAllOrNothing, chapter.ObRetry, chapter.ObErrors}, func(ctx context.Context, e *env) {
			w, b := e.killSetup(ctx, "indeterminate")
			w.Wrapped().Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.AfterAnswer, Effect: faults.EffectIndeterminate})
			err := w.Commit(ctx, b)
			if hoststore.KindOf(err) != hoststore.ErrKindIndeterminate {
				e.Fail(chapter.ObErrors, "harness: the injected transport fault did not reach the row", "Indeterminate", chapter.OkOr(err))
			}
			e.Note("Core settles an Indeterminate commit by retrying the same batch")
			err = w.Commit(ctx, b)
			if err != nil && !retryRefusal(err) {
				e.Fail(chapter.ObRetry, "a retry of a batch that landed answered neither Ok nor a refusal of the duplicate", "Ok (or the duplicate refused)", chapter.ErrText(err))
			}
			landed := e.Settle(ctx, w, b)
			if !landed {
				e.Fail(chapter.ObDurable, "a batch the store had answered Ok to is not visible after the retry", "the batch in both scopes", "in neither")
			}
			e.CheckScopes(ctx, w, chapter.ObRetry, b.Scopes()...)
			e.killContinue(ctx, w, b.Scopes())
		})
	}
	return r
}

// ctxAftermath judges the answer err to a commit of b whose context ended
// (when says how) and goes on as killAftermath does: Ok means the batch
// landed, Unavailable that nothing was applied; the context's error, or
// Indeterminate, leaves the batch in both scopes or neither. An answer
// outside the error contract fails the spec, and so does no answer within
// the per-call bound: a store stops when its caller's context ends.
func (e *env) ctxAftermath(ctx context.Context, w *chapter.Proc, b *hoststore.CommitBatch, err error, when string) {
	var br *chapter.Breach
	if asErr(err, &br) {
		e.Fail(chapter.ObErrors, fmt.Sprintf("commit of %q answered outside the error contract %s", b.CommitID(), when), "Ok, the context's error, or one of the six error types", chapter.ErrText(err))
	}
	w.Kill()
	q := e.NewWriter(ctx)
	landed := e.Settle(ctx, q, b)
	switch {
	case err == nil && !landed:
		e.Fail(chapter.ObDurable, fmt.Sprintf("commit of %q answered Ok %s, yet the next writer does not see it", b.CommitID(), when),
			"the batch in both scopes (Ok means durable), or the context's error", "in neither")
	case hoststore.KindOf(err) == hoststore.ErrKindUnavailable && landed:
		e.Fail(chapter.ObErrors, fmt.Sprintf("commit of %q answered Unavailable %s, yet the batch was applied", b.CommitID(), when),
			"nothing applied (Unavailable), or the context's error when the outcome is unknown", "the batch in both scopes")
	}
	e.killCheck(ctx, q, b)
}

// killSetup takes the fence, creates two scopes and builds the next batch
// over both (the one the row kills around).
func (e *env) killSetup(ctx context.Context, tag string) (*chapter.Proc, *hoststore.CommitBatch) {
	w := e.Writer(ctx)
	a := e.Scope(hoststore.KindSession, tag+"/a")
	c := e.Scope(hoststore.KindRecord, tag+"/b")
	e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, chapter.WithHead([]byte("a0")), chapter.WithAppend([]byte("a-row0"))), e.Up(c, chapter.WithHead([]byte("b0")))), chapter.ObDurable)
	b := e.Batch(w, tag, e.Up(a, chapter.WithHead([]byte("a1")), chapter.WithAppend([]byte("a-row1"), []byte("a-row2"))), e.Up(c, chapter.WithHead([]byte("b1")), chapter.WithAppend([]byte("b-row0"))))
	e.Note("the batch the row kills around: %s", chapter.BatchText(b))
	return w, b
}

// killAftermath is the next process's side of a kill: it takes the fence the
// way the writer does, settles the batch by loading its heads, checks both scopes
// against the model from two processes, and commits the scopes' next
// versions. mustLand says the store had reached its commit point (it
// returned nil, or the crash was after its commit point).
func (e *env) killAftermath(ctx context.Context, b *hoststore.CommitBatch, mustLand bool) bool {
	q := e.NewWriter(ctx)
	landed := e.Settle(ctx, q, b)
	if mustLand && !landed {
		e.Fail(chapter.ObDurable, fmt.Sprintf("batch %q passed its commit point before its writer died, yet the next writer does not see it", b.CommitID()),
			"the batch in both scopes (its commit point came before the next acquire)", "in neither")
	}
	e.killCheck(ctx, q, b)
	return landed
}

// killCheck checks b's scopes against the model from q, the next writer,
// and from one more process, then commits the scopes' next versions.
func (e *env) killCheck(ctx context.Context, q *chapter.Proc, b *hoststore.CommitBatch) {
	e.CheckScopes(ctx, q, chapter.ObAllOrNothing, b.Scopes()...)
	r := e.MustOpen(ctx)
	e.CheckScopes(ctx, r, chapter.ObAllOrNothing, b.Scopes()...)
	r.Kill()
	e.killContinue(ctx, q, b.Scopes())
}

// killContinue commits the next version of each scope, so the chain goes on
// from what the settle found.
func (e *env) killContinue(ctx context.Context, w *chapter.Proc, scopes []hoststore.ScopeRef) {
	var ups []hoststore.ScopeUpdate
	for _, s := range scopes {
		ups = append(ups, e.Up(s, chapter.WithAppend([]byte("after"))))
	}
	e.Commit(ctx, w, e.Batch(w, "after-kill", ups...), chapter.ObDurable)
	e.CheckScopes(ctx, w, chapter.ObDurable, scopes...)
}
