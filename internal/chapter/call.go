package chapter

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
)

// awaited is how a store call that await ran ended.
type awaited struct {
	val      any           // what the store answered, when it answered
	err      error         // the store's error, when it answered
	panicked string        // the panic and its stack, when it panicked
	hung     bool          // it did not answer within its bound
	gone     bool          // the caller's context ended first
	took     time.Duration // the store's time: wall time less the harness's (Injector.HarnessTime)
	clean    bool          // the harness held or delayed no commit meanwhile
}

// minRecheck is the shortest wait between two looks at a call's clock
// while the harness holds a commit.
const minRecheck = 20 * time.Millisecond

// await runs f on its own goroutine and waits until it answers, until it
// spent bound of the store's time (a hang), or until ctx ends. The store's
// time is the wall time of the call less the time in which the harness
// held or delayed a commit inside the store (the run's HarnessTime): a store
// may rightly wait on such a commit, and the harness's own bookkeeping
// runs outside the call. f's context ends when await returns without an
// answer, so a store that heeds it can let go. What f answers reaches the
// caller only in the awaited it returns: an answer that comes after await
// returned is dropped, never written where the caller reads. f runs under
// a context bound to the run's injector.
func (e *Env) await(ctx context.Context, bound time.Duration, f func(ctx context.Context) (any, error)) awaited {
	cctx, cancel := context.WithCancel(e.inj.Bind(ctx))
	defer cancel()
	end := e.enterCall()
	defer end()
	done := make(chan awaited, 1)
	start, h0 := time.Now(), e.inj.HarnessTime()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- awaited{panicked: fmt.Sprintf("%v\n%s", r, clipStack(debug.Stack()))}
			}
		}()
		v, err := f(cctx)
		done <- awaited{val: v, err: err}
	}()
	took := func() (time.Duration, bool) {
		h := e.inj.HarnessTime() - h0
		return time.Since(start) - h, h == 0
	}
	answered := func(a awaited) awaited {
		a.took, a.clean = took()
		return a
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		select {
		case a := <-done:
			return answered(a)
		case <-ctx.Done():
			select { // an answer that races the end gets a last chance
			case a := <-done:
				return answered(a)
			default:
			}
			return awaited{gone: true}
		case <-timer.C:
			spent, _ := took()
			if spent < bound {
				timer.Reset(max(bound-spent, minRecheck))
				continue
			}
			select {
			case a := <-done:
				return answered(a)
			default:
			}
			return awaited{hung: true, took: spent}
		}
	}
}

// enterCall counts a store call in flight until the function it returns
// is called.
func (e *Env) enterCall() func() {
	e.mu.Lock()
	if e.busy == 0 {
		e.busySince = time.Now()
	}
	e.busy++
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.busy--
			if e.busy == 0 {
				e.busyFor += time.Since(e.busySince)
			}
			e.mu.Unlock()
		})
	}
}

// busyTime returns the time in which at least one store call of the Env
// was in flight, up to now.
func (e *Env) busyTime() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.busyFor
	if e.busy > 0 {
		d += time.Since(e.busySince)
	}
	return d
}

// errSpecBound ends a spec's context when the spec spent its bound of the
// harness's own time.
var errSpecBound = errors.New("the spec spent its bound of the harness's own time")

// specClock returns ctx with an end when the spec spent bound of the
// harness's own time: wall time in which none of its store calls was in
// flight. The function it returns stops the clock and reports whether the
// bound was spent; it may be called more than once.
func (e *Env) specClock(ctx context.Context, bound time.Duration) (context.Context, func() bool) {
	sctx, cancel := context.WithCancelCause(ctx)
	start, b0 := time.Now(), e.busyTime()
	stop := make(chan struct{})
	over := make(chan bool, 1)
	go func() {
		t := time.NewTimer(bound)
		defer t.Stop()
		for {
			select {
			case <-stop:
				over <- false
				return
			case <-t.C:
				own := time.Since(start) - (e.busyTime() - b0)
				if own < bound {
					t.Reset(max(bound-own, minRecheck))
					continue
				}
				cancel(errSpecBound)
				<-stop
				over <- true
				return
			}
		}
	}()
	var once sync.Once
	var spent bool
	return sctx, func() bool {
		once.Do(func() {
			close(stop)
			spent = <-over
			cancel(nil)
		})
		return spent
	}
}

// noteTrouble records the running spec's first call that hung or answered
// Unavailable: the sign that the store may have become unavailable.
func (e *Env) noteTrouble(op, what string, hung bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.trouble == "" {
		e.trouble, e.troubleH, e.troubleOp = what, hung, op
	}
}

// healthScope is the scope the probe of a store's health loads.
var healthScope = hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "conform/health"}

// available probes the store once with a fresh handle: Open, then
// LoadHead and ListHeads, each within the per-call bound. With hungCommit
// (the call that failed was a Commit that hung), the probe also takes the
// fence (Takeover) and commits two new scopes: a realm that still reads
// but whose commits all wait (a lock never let go) cannot serve a spec
// either.
// It returns "" when the store served the probe, else what failed, in
// words.
func (e *Env) available(hungCommit bool) string {
	ctx := context.Background()
	e.mu.Lock()
	e.suspect = false
	e.mu.Unlock()
	p, err := e.Open(ctx)
	what := "Open"
	if err == nil {
		what = "LoadHead"
		_, err = p.Load(ctx, healthScope)
		if err == nil {
			what = "ListHeads"
			_, err = p.List(ctx, hoststore.KindRecord, nil, 1)
		}
		if err == nil && hungCommit {
			what, err = e.probeCommit(ctx, p)
		}
		e.mu.Lock()
		writer := e.writer == p
		e.mu.Unlock()
		if !writer {
			p.Kill()
		}
	}
	e.mu.Lock()
	e.suspect = false
	e.mu.Unlock()
	if err != nil {
		return fmt.Sprintf("a fresh handle's %s answered %s", what, ErrText(err))
	}
	return ""
}

// probeCommit takes the fence for p (Takeover, so that a lease left live
// by a dead writer does not stand in the way) and commits two batches
// with it: one that creates two new scopes of two kinds, the shape most
// specs commit, and one that updates both, as a spec's next commit does
// (a store that never lets go of a scope's lock hangs there). It returns
// the operation and its error when one hung. Any other answer shows a
// store that still serves (a wrong one is for the rows to judge), so it
// returns a nil error. Once both committed, p is the writer.
func (e *Env) probeCommit(ctx context.Context, p *Proc) (string, error) {
	if _, err := p.Acquire(ctx, hoststore.Takeover); err != nil {
		if IsHang(err) {
			return "AcquireFence", err
		}
		return "", nil
	}
	name := hoststore.ScopeName("conform/health/" + string(e.newID("health")))
	scopes := []hoststore.ScopeRef{{Kind: hoststore.KindRecord, Name: name}, {Kind: hoststore.KindSession, Name: name}}
	for v := range 2 {
		var prev *hoststore.ScopeVersion // a create, then an update of version 1
		if v > 0 {
			prev = hoststore.Ptr(hoststore.FirstVersion)
		}
		var ups []hoststore.ScopeUpdate
		for _, s := range scopes {
			ups = append(ups, UpFrom(s, prev, WithHead([]byte("health"))))
		}
		b, err := hoststore.NewCommitBatch(e.newID("health"), p.Token, ups)
		if err != nil {
			return "", nil // a row id that makes no valid commit id: nothing to probe with
		}
		err = p.Commit(ctx, b)
		switch {
		case IsHang(err):
			return "Commit", err
		case err != nil || e.Model.Apply(b) != nil:
			return "", nil
		}
	}
	e.SetWriter(p)
	return "", nil
}

// outage runs when the running spec is about to fail. If one of its store
// calls hung or answered Unavailable, the store is probed once
// (available); when a fresh handle cannot serve either, the store became
// unavailable: the run records why, and every later spec is not run. The
// spec itself is not run either, unless its first sign was a hang, which
// stays its failure (a breach of the error contract on its own). It
// returns what the failure should add ("" for nothing).
func (e *Env) outage() string {
	spec.Helper()
	e.mu.Lock()
	trouble, hung, op := e.trouble, e.troubleH, e.troubleOp
	e.trouble = ""
	e.mu.Unlock()
	if trouble == "" || e.timing.Down() != "" {
		return ""
	}
	why := e.available(hung && op == "Commit")
	if why == "" {
		return ""
	}
	down := fmt.Sprintf("the store became unavailable in row %s: %s; then %s", e.rowID, trouble, why)
	e.timing.setDown(down)
	if hung {
		return "; " + down + ", so the rows after it are not run"
	}
	e.Spec().NotRun(down)
	return ""
}
