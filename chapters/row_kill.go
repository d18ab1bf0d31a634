package chapters

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// rowKill is row 3: "A writer dies before, during or after a batch over two
// scopes; the next writer sees it in both or neither, and settles an
// unknown batch the way Core does."
func rowKill() *Row {
	r := &Row{
		ID:          "kill",
		Name:        "Kill",
		Obligations: []string{ObAllOrNothing, ObDurable, ObFencing, ObRetry, ObErrors},
		DependsOn:   "nothing: each spec takes the fence itself and creates its own two scopes",
	}
	r.register = func(re *rowEnv) {
		obs := []string{ObAllOrNothing, ObDurable}
		re.It("before the request reaches the store: the next writer sees the batch in both scopes or neither", obs, func(ctx context.Context, e *Env) {
			w, b := e.killSetup(ctx, "before-send")
			w.Wrapped().Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.BeforeSend, Effect: faults.EffectKill})
			_ = w.Commit(ctx, b)
			e.killAftermath(ctx, b, false)
		})
		re.It("with the request in flight: the next writer sees the batch in both scopes or neither", obs, func(ctx context.Context, e *Env) {
			w, b := e.killSetup(ctx, "in-flight")
			w.Wrapped().Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.InFlight, Effect: faults.EffectKill})
			_ = w.Commit(ctx, b)
			e.killAftermath(ctx, b, false)
		})
		re.It("after the store answered Ok, the answer lost: the next writer sees the batch in both scopes", []string{ObAllOrNothing, ObDurable, ObFencing}, func(ctx context.Context, e *Env) {
			w, b := e.killSetup(ctx, "answer-lost")
			err := w.Commit(ctx, b)
			w.Kill()
			e.killAftermath(ctx, b, err == nil)
		})
		for _, site := range instore.Sites {
			site := site
			re.It(fmt.Sprintf("with the commit held inside the store at %s, then dropped: the next writer sees it in both scopes or neither", site), obs, func(ctx context.Context, e *Env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercised(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", site))
				}
				w, b := e.killSetup(ctx, "held-"+string(site))
				h, res := e.holdCommit(ctx, w, b, site)
				e.Note("while the commit is held, another process loads its scopes")
				r := e.MustOpen(ctx)
				shownHeld, hidden := e.Shows(ctx, r, b)
				r.Kill()
				if len(shownHeld) > 0 && len(hidden) > 0 {
					h.Release()
					e.Fail(ObAllOrNothing, fmt.Sprintf("batch %q, held at %s, shows in some of its scopes and not in others", b.CommitID(), site),
						"the batch in every scope or in none", fmt.Sprintf("shows in %v; not in %v", shownHeld, hidden))
				}
				w.Kill()
				h.Release()
				<-res
				landed := e.killAftermath(ctx, b, site == instore.CommitAfterPoint)
				if len(shownHeld) > 0 && !landed {
					e.Fail(ObAllOrNothing, fmt.Sprintf("a load showed batch %q while it was held at %s, and the batch then never landed", b.CommitID(), site),
						"a load shows a batch once it landed, never one that does not land", "shown, then gone")
				}
			})
			re.It(fmt.Sprintf("with a crash inside the store at %s: the next writer sees it in both scopes or neither", site), obs, func(ctx context.Context, e *Env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercised(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can crash there", site))
				}
				w, b := e.killSetup(ctx, "crash-"+string(site))
				h := faults.HoldAt(site, matchID(b.CommitID()))
				defer h.Disarm()
				h.Crash()
				_ = w.Commit(ctx, b)
				w.Kill()
				e.killAftermath(ctx, b, site == instore.CommitAfterPoint)
			})
		}
		re.It("with the answer lost to a transport fault: the writer settles by retrying the same batch, which acts once", []string{ObAllOrNothing, ObRetry, ObErrors}, func(ctx context.Context, e *Env) {
			w, b := e.killSetup(ctx, "indeterminate")
			w.Wrapped().Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.AfterAnswer, Effect: faults.EffectIndeterminate})
			err := w.Commit(ctx, b)
			if hoststore.KindOf(err) != hoststore.ErrKindIndeterminate {
				e.Fail(ObErrors, "harness: the injected transport fault did not reach the row", "Indeterminate", okOr(err))
			}
			e.Note("Core settles an Indeterminate commit by retrying the same batch")
			err = w.Commit(ctx, b)
			if err != nil && !retryRefusal(err) {
				e.Fail(ObRetry, "a retry of a batch that landed answered neither Ok nor a refusal of the duplicate", "Ok (or the duplicate refused)", errText(err))
			}
			landed := e.Settle(ctx, w, b)
			if !landed {
				e.Fail(ObDurable, "a batch the store had answered Ok to is not visible after the retry", "the batch in both scopes", "in neither")
			}
			e.CheckScopes(ctx, w, ObRetry, b.Scopes()...)
			e.killContinue(ctx, w, b.Scopes())
		})
	}
	return r
}

// retryRefusal tells whether err is a way a store may refuse a duplicate
// commit id: any contract error that says nothing was applied.
func retryRefusal(err error) bool {
	switch hoststore.KindOf(err) {
	case hoststore.ErrKindConflict, hoststore.ErrKindInvalid, hoststore.ErrKindFencedOut:
		return true
	}
	return false
}

func matchID(id hoststore.CommitID) func(hoststore.CommitID) bool {
	return func(c hoststore.CommitID) bool { return c == id }
}

// goCommit commits on its own goroutine and answers the error on a channel.
func goCommit(ctx context.Context, p *Proc, b *hoststore.CommitBatch) <-chan error {
	res := make(chan error, 1)
	go func() { res <- p.Commit(ctx, b) }()
	return res
}

// waitArrived waits until the held commit arrives at its site. A commit that
// answers without arriving means the store skipped the site for it: the
// spec ends as not exercised. A commit that does neither fails the spec.
func (e *Env) waitArrived(ctx context.Context, h *faults.Hold, res <-chan error) {
	GinkgoHelper()
	select {
	case <-h.Arrived():
	case err := <-res:
		e.NothingExercised(fmt.Sprintf("the commit answered (%s) without reaching the in-store failpoint %s", okOr(err), h.Site()))
	case <-ctx.Done():
		e.Fail(ObErrors, fmt.Sprintf("the commit neither reached the in-store failpoint %s nor answered", h.Site()), "the commit at the failpoint", "a hang")
	}
}

// holdCommit holds b at site, commits it from p on its own goroutine and
// waits until it arrives there; the commit's answer comes on the channel
// once the hold is released. The hold is disarmed when the spec ends.
func (e *Env) holdCommit(ctx context.Context, p *Proc, b *hoststore.CommitBatch, site instore.Site) (*faults.Hold, <-chan error) {
	GinkgoHelper()
	h := faults.HoldAt(site, matchID(b.CommitID()))
	DeferCleanup(h.Disarm)
	res := goCommit(ctx, p, b)
	e.waitArrived(ctx, h, res)
	return h, res
}

// killSetup takes the fence, creates two scopes and builds the next batch
// over both (the one the row kills around).
func (e *Env) killSetup(ctx context.Context, tag string) (*Proc, *hoststore.CommitBatch) {
	w := e.Writer(ctx)
	a := e.Scope(hoststore.KindSession, tag+"/a")
	c := e.Scope(hoststore.KindRecord, tag+"/b")
	e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, WithHead([]byte("a0")), WithAppend([]byte("a-row0"))), e.Up(c, WithHead([]byte("b0")))), ObDurable)
	b := e.Batch(w, tag, e.Up(a, WithHead([]byte("a1")), WithAppend([]byte("a-row1"), []byte("a-row2"))), e.Up(c, WithHead([]byte("b1")), WithAppend([]byte("b-row0"))))
	e.Note("the batch the row kills around: %s", batchText(b))
	return w, b
}

// killAftermath is the next process's side of a kill: it takes the fence the
// way Core does, settles the batch by loading its heads, checks both scopes
// against the model from two processes, and commits the scopes' next
// versions. mustLand says the store had reached its commit point (it
// answered Ok, or the crash was after its commit point).
func (e *Env) killAftermath(ctx context.Context, b *hoststore.CommitBatch, mustLand bool) bool {
	q := e.NewWriter(ctx)
	landed := e.Settle(ctx, q, b)
	if mustLand && !landed {
		e.Fail(ObDurable, fmt.Sprintf("batch %q passed its commit point before its writer died, yet the next writer does not see it", b.CommitID()),
			"the batch in both scopes (its commit point came before the next acquire)", "in neither")
	}
	e.CheckScopes(ctx, q, ObAllOrNothing, b.Scopes()...)
	r := e.MustOpen(ctx)
	e.CheckScopes(ctx, r, ObAllOrNothing, b.Scopes()...)
	r.Kill()
	e.killContinue(ctx, q, b.Scopes())
	return landed
}

// killContinue commits the next version of each scope, so the chain goes on
// from what the settle found.
func (e *Env) killContinue(ctx context.Context, w *Proc, scopes []hoststore.ScopeRef) {
	var ups []hoststore.ScopeUpdate
	for _, s := range scopes {
		ups = append(ups, e.Up(s, WithAppend([]byte("after"))))
	}
	e.Commit(ctx, w, e.Batch(w, "after-kill", ups...), ObDurable)
	e.CheckScopes(ctx, w, ObDurable, scopes...)
}
