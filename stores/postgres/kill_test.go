package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// TestKillHeld kills a handle whose commit is held before its commit point
// with its scope rows locked: another handle's commit on the same scopes
// lands without waiting for the release (the server aborted the killed
// transaction), the released commit fails as Unavailable (nothing
// applied), and every later call of the killed handle is Unavailable.
func TestKillHeld(t *testing.T) {
	for _, site := range []instore.Site{instore.CommitLocked, instore.CommitBeforePoint} {
		t.Run(string(site), func(t *testing.T) {
			f := newRealm(t)
			w, tok := writer(t, f)
			a, b := scope(hoststore.KindSession, "a"), scope(hoststore.KindSession, "b")
			setup := id("setup")
			commit(t, w, batch(t, setup, tok, create(a, "a1"), create(b, "b1")))
			held := batch(t, id("held"), tok, next(a, 1, "a2", "ra"), next(b, 1, "b2"))
			h, res := hold(t, w, held, site)
			w.Kill()

			q := open(t, f)
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			defer cancel()
			after := id("after")
			if err := q.Commit(ctx, batch(t, after, tok, next(a, 1, "q2"), next(b, 1, "q2"))); err != nil {
				t.Fatalf("a commit on the killed handle's locked scopes: %v (did it wait for the held commit?)", err)
			}
			h.Release()
			if err := <-res; !kindIs(err, hoststore.ErrKindUnavailable) {
				t.Errorf("the killed commit, released, answered %v; want Unavailable", err)
			}
			wantHead(t, q, a, 2, after, "q2")
			wantHead(t, q, b, 2, after, "q2")
			wantRows(t, q, a)
			if _, err := w.LoadHead(ctx, a); !kindIs(err, hoststore.ErrKindUnavailable) {
				t.Errorf("LoadHead on a killed handle = %v, want Unavailable", err)
			}
			if err := w.Commit(ctx, batch(t, id("late"), tok, next(a, 2, "late"))); !kindIs(err, hoststore.ErrKindUnavailable) {
				t.Errorf("Commit on a killed handle = %v, want Unavailable", err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("Close after Kill: %v", err)
			}
		})
	}
}

// TestCrashDropsTheTransaction: a crash at a failpoint before the commit
// point leaves no lock behind; one after it leaves the batch applied.
func TestCrashDropsTheTransaction(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			f := newRealm(t)
			w, tok := writer(t, f)
			a := scope(hoststore.KindRecord, "a")
			setup := id("setup")
			commit(t, w, batch(t, setup, tok, create(a, "a1")))
			crashed := batch(t, id("crash"), tok, next(a, 1, "a2", "r"))
			testInj.Claim(crashed.CommitID())
			h := testInj.HoldAt(site, func(c hoststore.CommitID) bool { return c == crashed.CommitID() })
			h.Crash()
			err := w.Commit(t.Context(), crashed)
			h.Disarm()
			if !errors.Is(err, instore.ErrCrashed) {
				t.Fatalf("Commit with a crash at %s = %v, want the crash", site, err)
			}
			q := open(t, f)
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			defer cancel()
			if site == instore.CommitAfterPoint {
				wantHead(t, q, a, 2, crashed.CommitID(), "a2")
				return
			}
			wantHead(t, q, a, 1, setup, "a1")
			if err := q.Commit(ctx, batch(t, id("next"), tok, next(a, 1, "q2"))); err != nil {
				t.Errorf("a commit after a crash at %s: %v (a lock left behind?)", site, err)
			}
		})
	}
}

// TestCanceledWhileHeld: a commit whose context ends while it is held
// before its commit point returns the context's error, applies nothing and
// leaves no lock behind.
func TestCanceledWhileHeld(t *testing.T) {
	f := newRealm(t)
	w, tok := writer(t, f)
	a := scope(hoststore.KindIdentity, "a")
	setup := id("setup")
	commit(t, w, batch(t, setup, tok, create(a, "a1")))
	b := batch(t, id("cancel"), tok, next(a, 1, "a2"))
	testInj.Claim(b.CommitID())
	h := testInj.HoldAt(instore.CommitLocked, func(c hoststore.CommitID) bool { return c == b.CommitID() })
	t.Cleanup(h.Disarm)
	cctx, cancelCommit := context.WithCancel(t.Context())
	res := make(chan error, 1)
	go func() { res <- w.Commit(cctx, b) }()
	<-h.Arrived()
	cancelCommit()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("a held commit whose context ended answered %v, want context.Canceled", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	wantHead(t, w, a, 1, setup, "a1")
	after := id("after")
	if err := w.Commit(ctx, batch(t, after, tok, next(a, 1, "w2"))); err != nil {
		t.Fatalf("a commit after a canceled one: %v", err)
	}
	wantHead(t, w, a, 2, after, "w2")
}
