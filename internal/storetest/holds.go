package storetest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

func matchID(id hoststore.CommitID) func(hoststore.CommitID) bool {
	return func(c hoststore.CommitID) bool { return c == id }
}

// holdCommit commits b on its own goroutine with a hold at site, and waits
// until the commit arrives there. The answer comes on the channel.
func (e *env) holdCommit(s hoststore.HostStore, b *hoststore.CommitBatch, site instore.Site) (*faults.Hold, <-chan error) {
	e.Helper()
	h := e.inj.HoldAt(site, matchID(b.CommitID()))
	e.Cleanup(h.Disarm)
	res := make(chan error, 1)
	go func() { res <- s.Commit(e.ctx, b) }()
	select {
	case <-h.Arrived():
	case err := <-res:
		e.Fatalf("Commit(%q) answered %v without reaching the failpoint %s", b.CommitID(), err, site)
	}
	return h, res
}

func testHeldIndependence(e *env) {
	for _, site := range instore.Sites {
		w, tok := e.writer()
		q := e.open()
		a := scope(hoststore.KindSession, "held-"+string(site))
		b := scope(hoststore.KindSession, "free-"+string(site))
		c := scope(hoststore.KindSession, "same-handle-"+string(site))
		setup := e.id("setup")
		e.commit(w, e.batch(setup, tok, create(a, "a1"), create(b, "b1"), create(c, "c1")))
		held := e.batch(e.id("held"), tok, withRows(withHead(next(a, 1), "a2"), "row"))
		h, res := e.holdCommit(w, held, site)

		e.commit(q, e.batch(e.id("other-handle"), tok, withHead(next(b, 1), "b2")))
		e.commit(w, e.batch(e.id("same-handle"), tok, withHead(next(c, 1), "c2")))
		if _, err := q.AcquireFence(e.ctx, hoststore.Exclusive); kindOf(err) != hoststore.ErrKindHeld {
			e.Errorf("%s: AcquireFence(Exclusive) while a commit is held = %v, want Held (the holder is live)", site, err)
		}
		if err := w.RenewFence(e.ctx, tok); err != nil {
			e.Errorf("%s: RenewFence while a commit is held: %v", site, err)
		}
		want := vh(1, setup, "a1")
		if site == instore.CommitAfterPoint {
			want = vh(2, held.CommitID(), "a2")
		}
		e.wantHead(q, a, want)
		if page, err := q.ListHeads(e.ctx, hoststore.KindSession, nil, 10); err != nil || len(page.Heads) < 3 {
			e.Errorf("%s: ListHeads while a commit is held = %v, %v; want the scopes", site, names(page), err)
		}
		h.Release()
		if err := <-res; err != nil {
			e.Errorf("%s: the held commit answered %v after its release, want Ok", site, err)
		}
		e.wantHead(e.open(), a, vh(2, held.CommitID(), "a2"))
		e.wantRows(e.open(), a, 0, "row")
	}
}

func testCrash(e *env) {
	for _, site := range instore.Sites {
		w, tok := e.writer()
		a := scope(hoststore.KindSession, "crash-a-"+string(site))
		b := scope(hoststore.KindRecord, "crash-b-"+string(site))
		setup := e.id("setup")
		e.commit(w, e.batch(setup, tok, create(a, "a1"), create(b, "b1")))
		bt := e.batch(e.id("crash"), tok, withRows(withHead(next(a, 1), "a2"), "ra"), withRows(withHead(next(b, 1), "b2"), "rb"))
		h := e.inj.HoldAt(site, matchID(bt.CommitID()))
		h.Crash()
		err := w.Commit(e.ctx, bt)
		h.Disarm()
		if !errors.Is(err, instore.ErrCrashed) {
			e.Errorf("%s: Commit with a crash = %v, want the crash", site, err)
		}
		if k, ok := w.(hoststore.Killer); ok {
			k.Kill()
		}
		r := e.open()
		if site == instore.CommitAfterPoint {
			e.wantHead(r, a, vh(2, bt.CommitID(), "a2"))
			e.wantHead(r, b, vh(2, bt.CommitID(), "b2"))
			e.wantRows(r, b, 0, "rb")
		} else {
			e.wantHead(r, a, vh(1, setup, "a1"))
			e.wantHead(r, b, vh(1, setup, "b1"))
			e.wantRows(r, a, 0)
		}
	}
}

func testKillHeld(e *env) {
	for _, site := range instore.Sites {
		w, tok := e.writer()
		k, ok := w.(hoststore.Killer)
		if !ok {
			e.Skip("the store's handle has no Kill")
		}
		a := scope(hoststore.KindMob, "kill-a-"+string(site))
		b := scope(hoststore.KindMob, "kill-b-"+string(site))
		setup := e.id("setup")
		e.commit(w, e.batch(setup, tok, create(a, "a1"), create(b, "b1")))
		bt := e.batch(e.id("kill"), tok, withRows(withHead(next(a, 1), "a2"), "ra"), withHead(next(b, 1), "b2"))
		h, res := e.holdCommit(w, bt, site)
		k.Kill()
		h.Release()
		err := <-res
		if site != instore.CommitAfterPoint && err == nil {
			e.Errorf("%s: a commit killed before its commit point answered Ok", site)
		}
		q, qtok := e.writer()
		ha, hb := e.head(q, a), e.head(q, b)
		landed := ha != nil && ha.CommitID == bt.CommitID()
		if landedB := hb != nil && hb.CommitID == bt.CommitID(); landed != landedB {
			e.Errorf("%s: a killed two-scope batch shows in one scope only (a %v, b %v)", site, landed, landedB)
		}
		if site == instore.CommitAfterPoint && !landed {
			e.Errorf("%s: a batch killed after its commit point is not visible", site)
		}
		if site != instore.CommitAfterPoint && landed {
			e.Errorf("%s: a batch killed before its commit point is visible", site)
		}
		v := hoststore.ScopeVersion(1)
		if landed {
			v = 2
		}
		id := e.id("after")
		e.commit(q, e.batch(id, qtok, withRows(next(a, v), "after"), withHead(next(b, v), "b-after")))
		e.wantHead(e.open(), b, vh(v+1, id, "b-after"))
	}
}

func testParallelWriters(e *env) {
	w, tok := e.writer()
	const writers, versions = 64, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := scope(hoststore.KindRecord, fmt.Sprintf("par-%02d", i))
			up := create(ref, "h", "r0")
			for v := range versions {
				if v > 0 {
					up = withRows(next(ref, hoststore.ScopeVersion(v)), fmt.Sprintf("r%d", v))
				}
				b, err := hoststore.NewCommitBatch(hoststore.CommitID(fmt.Sprintf("par-%02d-%d", i, v)), tok, []hoststore.ScopeUpdate{up})
				if err == nil {
					err = w.Commit(e.ctx, b)
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d version %d: %w", i, v+1, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.Error(err)
	}
	q := e.open()
	page, err := q.ListHeads(e.ctx, hoststore.KindRecord, nil, 1000)
	if err != nil {
		e.Fatalf("ListHeads: %v", err)
	}
	if len(page.Heads) != writers {
		e.Fatalf("ListHeads after %d writers = %d scopes", writers, len(page.Heads))
	}
	for _, h := range page.Heads {
		if h.Head.Version != versions {
			e.Errorf("scope %q at version %d, want %d", h.Name, h.Head.Version, versions)
		}
	}
	e.wantRows(q, scope(hoststore.KindRecord, "par-63"), 0, "r0", "r1", "r2")
}
