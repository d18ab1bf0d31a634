package chapters

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// independenceScopes is how many scopes the independence row commits at once.
const independenceScopes = 256

// independenceWorkers is how many goroutines send them.
const independenceWorkers = 32

// rowIndependence is row 9: "Over 200 scopes commit concurrently without a
// stall."
func rowIndependence() *Row {
	r := &Row{
		ID:          "independence",
		Name:        "Independence",
		Obligations: []string{ObIndependence, ObDurable, ObListing},
		DependsOn:   "nothing: it takes the fence itself and creates its own scopes",
	}
	r.register = func(re *rowEnv) {
		re.It(fmt.Sprintf("commits %d scopes concurrently, and every one lands as the reference says", independenceScopes), []string{ObIndependence, ObDurable, ObListing}, func(ctx context.Context, e *Env) {
			w := e.Writer(ctx)
			scopes := e.burst(ctx, w, "burst", nil)
			q := e.MustOpen(ctx)
			e.CheckScopes(ctx, q, ObDurable, scopes...)
			e.CheckOwnListing(ctx, q, hoststore.KindRecord, 100)
			q.Kill()
		})
		re.It(fmt.Sprintf("finishes those commits while one commit is held in flight inside the store"), []string{ObIndependence}, func(ctx context.Context, e *Env) {
			if !e.ProbeInStore(ctx, instore.CommitLocked) {
				e.NothingExercised("the store does not call the in-store failpoint commit-locked, so no commit can be held in flight")
			}
			w := e.Writer(ctx)
			held := e.Scope(hoststore.KindSession, "held")
			e.Commit(ctx, w, e.Batch(w, "setup", e.Up(held, WithHead([]byte("h0")))), ObDurable)
			hb := e.Batch(w, "held", e.Up(held, WithHead([]byte("h1")), WithAppend([]byte("held-row"))))
			h, res := e.holdCommit(ctx, w, hb, instore.CommitLocked)
			e.burst(ctx, w, "beside-held", h)
			h.Release()
			if err := <-res; err != nil {
				e.Fail(ObDurable, "the held commit failed once released", "Ok", errText(err))
			}
			e.Landed(hb)
			e.CheckScope(ctx, w, held, ObDurable)
		})
	}
	return r
}

// independenceBound is how long the burst may take while a commit is held
// before the row calls it a stall. A store that commits independently
// finishes in a fraction of it; only the verdict of a store that queues
// every commit behind the held one depends on it.
func (e *Env) independenceBound() time.Duration {
	return min(10*e.Cfg.settle(), e.Cfg.rowTimeout()/3)
}

// burst creates independenceScopes Record scopes and then updates each,
// from independenceWorkers goroutines at once. With a hold, every commit
// must answer while the hold is still held. It answers the scopes.
func (e *Env) burst(ctx context.Context, w *Proc, tag string, hold *faults.Hold) []hoststore.ScopeRef {
	scopes := make([]hoststore.ScopeRef, independenceScopes)
	creates := make([]*hoststore.CommitBatch, independenceScopes)
	updates := make([]*hoststore.CommitBatch, independenceScopes)
	for i := range scopes {
		scopes[i] = e.Scope(hoststore.KindRecord, fmt.Sprintf("%s/%03d", tag, i))
		creates[i] = e.Batch(w, "create", UpFrom(scopes[i], nil, WithHead([]byte(fmt.Sprintf("c%d", i))), WithAppend([]byte("r0"))))
		updates[i] = e.Batch(w, "update", UpFrom(scopes[i], hoststore.Ptr(hoststore.FirstVersion), WithHead([]byte(fmt.Sprintf("u%d", i))), WithAppend([]byte("r1"))))
	}
	type outcome struct {
		i   int
		err error
	}
	out := make(chan outcome, 2*independenceScopes)
	var wg sync.WaitGroup
	next := make(chan int)
	for k := 0; k < independenceWorkers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := w.Commit(ctx, creates[i])
				if err == nil {
					err = w.Commit(ctx, updates[i])
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
		stalled := false
		select {
		case <-done:
		case <-time.After(e.independenceBound()):
			stalled = true
		case <-ctx.Done():
			stalled = true
		}
		if stalled {
			n := len(out)
			hold.Release()
			<-done
			e.Fail(ObIndependence, fmt.Sprintf("with one commit held in flight on another scope, only %d of %d concurrent commits on other scopes finished within %s", n, independenceScopes, e.independenceBound()),
				"every commit on another scope finishes while the held one waits", "the commits queued behind the held commit")
		}
	}
	<-done
	close(out)
	var failed []string
	for o := range out {
		if o.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %s", scopes[o.i], errText(o.err)))
			continue
		}
		e.Landed(creates[o.i])
		e.Landed(updates[o.i])
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		e.FailDiff(ObIndependence, fmt.Sprintf("%d of %d concurrent commits on distinct scopes failed", len(failed), independenceScopes), "every one Ok", failed[0], joinFirst(failed, 10))
	}
	e.CheckScopes(ctx, w, ObDurable, scopes...)
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
func rowStalledCommit() *Row {
	r := &Row{
		ID:          "stalled-commit",
		Name:        "Stalled commit",
		Obligations: []string{ObIndependence},
		DependsOn:   "nothing: it takes the fence itself and creates its own scopes; it needs the in-store failpoints",
	}
	r.register = func(re *rowEnv) {
		for _, site := range instore.Sites {
			site := site
			re.It(fmt.Sprintf("lets another scope commit, and the fence renew, while a commit is held at %s", site), []string{ObIndependence}, func(ctx context.Context, e *Env) {
				if !e.ProbeInStore(ctx, site) {
					e.NothingExercised(fmt.Sprintf("the store does not call the in-store failpoint %s, so no commit can be held there", site))
				}
				w := e.Writer(ctx)
				a := e.Scope(hoststore.KindSession, "stalled/"+string(site))
				b := e.Scope(hoststore.KindSession, "free/"+string(site))
				e.Commit(ctx, w, e.Batch(w, "setup", e.Up(a, WithHead([]byte("a0"))), e.Up(b, WithHead([]byte("b0")))), ObDurable)
				hb := e.Batch(w, "held", e.Up(a, WithHead([]byte("a1"))))
				h, res := e.holdCommit(ctx, w, hb, site)
				q := e.MustOpen(ctx)
				free := e.Batch(w, "free", e.Up(b, WithHead([]byte("b1")), WithAppend([]byte("free"))))
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
				select {
				case ferr = <-done:
					finished = true
				case <-time.After(e.independenceBound()):
				case <-ctx.Done():
				}
				if !finished {
					h.Release()
					<-res
					<-done
					e.Fail(ObIndependence, fmt.Sprintf("a commit on another scope did not finish within %s while a commit on %s was held at %s", e.independenceBound(), a, site),
						"the other scope commits while the held one waits", "it waited for the held commit")
				}
				if ferr != nil {
					h.Release()
					<-res
					e.Fail(ObIndependence, "a commit on another scope, or a renew, failed while a commit was held", "Ok", errText(ferr))
				}
				e.Landed(free)
				h.Release()
				if err := <-res; err != nil {
					e.Fail(ObDurable, "the held commit failed once released", "Ok", errText(err))
				}
				e.Landed(hb)
				e.CheckScopes(ctx, q, ObDurable, a, b)
				q.Kill()
			})
		}
	}
	return r
}
