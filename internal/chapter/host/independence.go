package host

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/reports"
)

// independenceScopes is how many scopes the independence row commits at once.
const independenceScopes = 256

// independenceWorkers is how many goroutines send them.
const independenceWorkers = 32

// rowIndependence is row 9: "Over 200 scopes commit concurrently without a
// stall."
func rowIndependence() *chapter.Row {
	r := &chapter.Row{
		ID:          "independence",
		Name:        "Independence",
		Obligations: []reports.ObligationID{chapter.ObIndependence, chapter.ObDurable, chapter.ObListing},
	}
	r.Specs = func(re *chapter.Specs) {
		it(re, fmt.Sprintf("commits %d scopes concurrently, and every one lands as the reference says", independenceScopes), []reports.ObligationID{chapter.ObIndependence, chapter.ObDurable, chapter.ObListing}, func(ctx context.Context, e *env) {
			w := e.Writer(ctx)
			scopes := e.burst(ctx, w, "burst", nil)
			q := e.MustOpen(ctx)
			e.CheckScopes(ctx, q, chapter.ObDurable, scopes...)
			e.CheckOwnListing(ctx, q, hoststore.KindRecord, 100)
			q.Kill()
		})
		it(re, fmt.Sprintf("finishes those commits while one commit is held in flight inside the store"), []reports.ObligationID{chapter.ObIndependence}, func(ctx context.Context, e *env) {
			if !e.ProbeInStore(ctx, instore.CommitLocked) {
				e.NothingExercisedInStore("the store does not call the in-store failpoint commit-locked, so no commit can be held in flight")
			}
			w := e.Writer(ctx)
			held := e.Scope(hoststore.KindSession, "held")
			e.Commit(ctx, w, e.Batch(w, "setup", e.Up(held, chapter.WithHead([]byte("h0")))), chapter.ObDurable)
			hb := e.Batch(w, "held", e.Up(held, chapter.WithHead([]byte("h1")), chapter.WithAppend([]byte("held-row"))))
			h, res := e.holdCommit(ctx, w, hb, instore.CommitLocked)
			e.burst(ctx, w, "beside-held", h)
			h.Release()
			if err := <-res; err != nil {
				e.Fail(chapter.ObDurable, "the held commit failed once released", "Ok", chapter.ErrText(err))
			}
			e.Landed(hb)
			e.CheckScope(ctx, w, held, chapter.ObDurable)
		})
	}
	return r
}

// singleWriterHint ends a stall finding: the usual cause in a store over an
// engine with one write lock is a site reached while holding that lock.
const singleWriterHint = "Every other commit waits for the held one, as behind a realm-wide lock. If your engine has one write lock for the whole database (SQLite, bbolt), the in-store sites must not be reached while it is held: see the instore package doc and docs/host-store-contract.md#in-store-failpoints"

// stallBound is how long a commit on another scope may keep the row
// waiting, while one commit is held, before the row calls a stall: the
// store's own commit latency times chapter.StallFactor, at least
// chapter.StallFloor (Timing.StallBound). A store that commits
// independently answers in about its usual latency; only the verdict of a
// store that queues commits behind the held one depends on it.
func (e *env) stallBound() (time.Duration, string) {
	return e.Timing().StallBound()
}

// burst creates independenceScopes Record scopes and then updates each,
// from independenceWorkers goroutines at once. With a hold, every commit
// must answer while the hold is still held: the burst stalls when no
// commit answers for the stall bound. It returns the scopes.
func (e *env) burst(ctx context.Context, w *chapter.Proc, tag string, hold *faults.Hold) []hoststore.ScopeRef {
	scopes := make([]hoststore.ScopeRef, independenceScopes)
	creates := make([]*hoststore.CommitBatch, independenceScopes)
	updates := make([]*hoststore.CommitBatch, independenceScopes)
	for i := range scopes {
		scopes[i] = e.Scope(hoststore.KindRecord, fmt.Sprintf("%s/%03d", tag, i))
		creates[i] = e.Batch(w, "create", chapter.UpFrom(scopes[i], nil, chapter.WithHead([]byte(fmt.Sprintf("c%d", i))), chapter.WithAppend([]byte("r0"))))
		updates[i] = e.Batch(w, "update", chapter.UpFrom(scopes[i], hoststore.Ptr(hoststore.FirstVersion), chapter.WithHead([]byte(fmt.Sprintf("u%d", i))), chapter.WithAppend([]byte("r1"))))
	}
	type outcome struct {
		i   int
		err error
	}
	out := make(chan outcome, 2*independenceScopes)
	progress := make(chan struct{}, 1)
	tick := func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for k := 0; k < independenceWorkers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := w.Commit(ctx, creates[i])
				tick()
				if err == nil {
					err = w.Commit(ctx, updates[i])
					tick()
				}
				out <- outcome{i, err}
			}
		}()
	}
	order := e.Rand().Perm(independenceScopes)
	go func() {
		defer close(next)
		for _, i := range order {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if hold != nil {
		stall, rule := e.stallBound()
		t := time.NewTimer(stall)
		stalled := false
	watch:
		for {
			select {
			case <-done:
				break watch
			case <-progress:
				t.Reset(stall)
			case <-t.C:
				stalled = true
				break watch
			case <-ctx.Done():
				stalled = true
				break watch
			}
		}
		t.Stop()
		if stalled {
			n := len(out)
			hold.Release()
			<-done
			e.Fail(chapter.ObIndependence, fmt.Sprintf("with one commit held in flight on another scope, no commit on another scope answered for %s (the stall bound: %s); %d of %d concurrent commits had finished. %s", stall, rule, n, independenceScopes, singleWriterHint),
				"every commit on another scope finishes while the held one waits", "the commits queued behind the held commit")
		}
	}
	<-done
	close(out)
	var failed []string
	for o := range out {
		if o.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %s", scopes[o.i], chapter.ErrText(o.err)))
			continue
		}
		e.Landed(creates[o.i])
		e.Landed(updates[o.i])
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		e.FailDiff(chapter.ObIndependence, fmt.Sprintf("%d of %d concurrent commits on distinct scopes failed", len(failed), independenceScopes), "every one Ok", failed[0], joinFirst(failed, 10))
	}
	e.CheckScopes(ctx, w, chapter.ObDurable, scopes...)
	return scopes
}

func joinFirst(ss []string, n int) string {
	if len(ss) > n {
		ss = append(ss[:n:n], fmt.Sprintf("… and %d more", len(ss)-n))
	}
	out := ""
	for _, s := range ss {
		out += s + "\n"
	}
	return out
}

// rowStalledCommit is row 10: "A commit held in flight on one scope does
// not hold up a commit on another."
func rowStalledCommit() *chapter.Row {
	r := &chapter.Row{
		ID:          "stalled-commit",
		Name:        "Stalled commit",
		Obligations: []reports.ObligationID{chapter.ObIndependence},
	}
	r.Specs = func(re *chapter.Specs) {
		for _, site := range instore.Sites {
			site := site
			it(re, fmt.Sprintf("lets another scope commit, and the fence renew, while a commit is held at %s", site), []reports.ObligationID{chapter.ObIndependence}, func(ctx context.Context, e *env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercisedInStore(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", site))
				}
				w := e.Writer(ctx)
				a := e.Scope(hoststore.KindSession, "stalled/"+string(site))
				b := e.Scope(hoststore.KindSession, "free/"+string(site))
				e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, chapter.WithHead([]byte("a0"))), e.Up(b, chapter.WithHead([]byte("b0")))), chapter.ObDurable)
				hb := e.Batch(w, "held", e.Up(a, chapter.WithHead([]byte("a1"))))
				h, res := e.holdCommit(ctx, w, hb, site)
				q := e.MustOpen(ctx)
				free := e.Batch(w, "free", e.Up(b, chapter.WithHead([]byte("b1")), chapter.WithAppend([]byte("free"))))
				done := make(chan error, 1)
				go func() {
					err := q.Commit(ctx, free)
					if err == nil {
						err = w.Renew(ctx, w.Token)
					}
					done <- err
				}()
				var ferr error
				finished := false
				stall, rule := e.stallBound()
				select {
				case ferr = <-done:
					finished = true
				case <-time.After(stall):
				case <-ctx.Done():
				}
				if !finished {
					h.Release()
					<-res
					<-done
					e.Fail(chapter.ObIndependence, fmt.Sprintf("a commit on another scope did not finish within %s (the stall bound: %s) while a commit on %s was held at %s. %s", stall, rule, a, site, singleWriterHint),
						"the other scope commits while the held one waits", "it waited for the held commit")
				}
				if ferr != nil {
					h.Release()
					<-res
					e.Fail(chapter.ObIndependence, "a commit on another scope, or a renew, failed while a commit was held", "Ok", chapter.ErrText(ferr))
				}
				e.Landed(free)
				h.Release()
				if err := <-res; err != nil {
					e.Fail(chapter.ObDurable, "the held commit failed once released", "Ok", chapter.ErrText(err))
				}
				e.Landed(hb)
				e.CheckScopes(ctx, q, chapter.ObDurable, a, b)
				q.Kill()
			})
		}
	}
	return r
}
