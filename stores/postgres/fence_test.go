package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/stores/postgres"
)

// hangGuard bounds a call that must not wait for a held commit: with a
// correct store it never fires; with a wrong one the call would wait until
// the release that the test makes only after it, so the guard turns a
// deadlock into a failure that says what waited.
const hangGuard = 30 * time.Second

// TestTakeoverWhileHeld: a takeover, a renew and the new holder's commit on
// another scope all complete while the old holder's commit is held at each
// site; released, the held commit is refused (FencedOut) when held before
// its commit point and stays visible when held after it.
func TestTakeoverWhileHeld(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			f := newRealm(t)
			w, old := writer(t, f)
			a, b := scope(hoststore.KindSession, "a"), scope(hoststore.KindRecord, "b")
			setup := id("setup")
			commit(t, w, batch(t, setup, old, create(a, "a1", "r0"), create(b, "b1")))
			held := batch(t, id("held"), old, next(a, 1, "a2", "r1"))
			h, res := hold(t, w, held, site)

			q := open(t, f)
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			defer cancel()
			g, err := q.AcquireFence(ctx, hoststore.Takeover)
			if err != nil {
				t.Fatalf("AcquireFence(Takeover) with a commit held at %s: %v (did it wait for the held commit?)", site, err)
			}
			if g.Token <= old || g.SupersededLease <= 0 || g.SupersededLease > f.FenceTiming().Lease() {
				t.Errorf("takeover grant = %+v, want a token above %d and a superseded lease in (0, %s]", g, old, f.FenceTiming().Lease())
			}
			if err := q.RenewFence(ctx, g.Token); err != nil {
				t.Errorf("RenewFence(new token) while held: %v", err)
			}
			other := id("other")
			if err := q.Commit(ctx, batch(t, other, g.Token, next(b, 1, "b2"))); err != nil {
				t.Errorf("the new holder's commit on another scope while held: %v", err)
			}
			if err := w.RenewFence(ctx, old); fencedOut(err) == nil || fencedOut(err).Current != g.Token {
				t.Errorf("RenewFence(old token) = %v, want FencedOut{%d}", err, g.Token)
			}
			h.Release()
			err = <-res
			if site == instore.CommitAfterPoint {
				if err != nil {
					t.Errorf("a commit held after its commit point answered %v, want nil", err)
				}
				wantHead(t, q, a, 2, held.CommitID(), "a2")
				wantRows(t, q, a, "r0", "r1")
			} else {
				if fencedOut(err) == nil || fencedOut(err).Current != g.Token {
					t.Errorf("a commit held at %s across a takeover answered %v, want FencedOut{%d}", site, err, g.Token)
				}
				wantHead(t, q, a, 1, setup, "a1")
				wantRows(t, q, a, "r0")
			}
			wantHead(t, q, b, 2, other, "b2")
		})
	}
}

// TestNoStaleCommitAfterTakeover races a writer committing two-scope
// batches back to back against a takeover, several times: every batch the
// old writer got nil for is visible to the new holder's first load, nothing
// of a later one ever shows, and the writer's first refusal is FencedOut.
func TestNoStaleCommitAfterTakeover(t *testing.T) {
	f := newRealm(t)
	for round := range 5 {
		w, old := writer(t, f)
		x, y := scope(hoststore.KindMob, "x"), scope(hoststore.KindMob, "y")
		var v hoststore.ScopeVersion
		if round == 0 {
			commit(t, w, batch(t, id("c"), old, create(x, "0"), create(y, "0")))
			v = 1
		} else if h, err := w.LoadHead(t.Context(), x); err != nil || h == nil {
			t.Fatalf("LoadHead(x) = %v, %v", h, err)
		} else {
			v = h.Version
		}
		started := make(chan struct{})
		type result struct {
			lastOk hoststore.ScopeVersion
			err    error
		}
		done := make(chan result, 1)
		go func() {
			cur := v
			for i := 0; ; i++ {
				if i == 3 {
					close(started)
				}
				head := string(rune('a' + i%26))
				b, err := hoststore.NewCommitBatch(id("race"), old, []hoststore.ScopeUpdate{next(x, cur, head, head), next(y, cur, head)})
				if err == nil {
					err = w.Commit(context.Background(), b)
				}
				if err != nil {
					if i < 3 {
						close(started)
					}
					done <- result{cur, err}
					return
				}
				cur++
			}
		}()
		<-started
		q := open(t, f)
		g, err := q.AcquireFence(t.Context(), hoststore.Takeover)
		if err != nil {
			t.Fatalf("round %d: AcquireFence(Takeover): %v", round, err)
		}
		hx, errx := q.LoadHead(t.Context(), x)
		hy, erry := q.LoadHead(t.Context(), y)
		r := <-done
		switch {
		case errx != nil || erry != nil:
			t.Fatalf("round %d: LoadHead: %v, %v", round, errx, erry)
		case fencedOut(r.err) == nil || fencedOut(r.err).Current != g.Token:
			t.Errorf("round %d: the old writer stopped with %v, want FencedOut{%d}", round, r.err, g.Token)
		case hx.Version != r.lastOk || hy.Version != r.lastOk:
			t.Errorf("round %d: the new holder's first load shows x at %d and y at %d; the old writer's last nil was %d", round, hx.Version, hy.Version, r.lastOk)
		}
		for _, ref := range []hoststore.ScopeRef{x, y} {
			if h, err := q.LoadHead(t.Context(), ref); err != nil || h.Version != r.lastOk {
				t.Errorf("round %d: LoadHead(%s) after the writer stopped = %v, %v; want version %d", round, ref, h, err, r.lastOk)
			}
		}
		w.Kill()
	}
}

// TestLeases: an exclusive acquire meets a live holder with what remains
// of its lease; LapseFenceLeases lets it run out; a renew of the current
// token works after a lapse and records a full lease again; tokens never
// issued are Invalid.
func TestLeases(t *testing.T) {
	f := newRealm(t)
	ctx := t.Context()
	lease := f.FenceTiming().Lease()
	w := open(t, f)
	g1, err := w.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil || g1.Token != 1 || g1.SupersededLease != 0 {
		t.Fatalf("first AcquireFence(Exclusive) = %+v, %v; want token 1, nothing superseded", g1, err)
	}
	q := open(t, f)
	var held *hoststore.HeldError
	_, err = q.AcquireFence(ctx, hoststore.Exclusive)
	if !asHeld(err, &held) || held.Holder != 1 || held.Remaining <= 0 || held.Remaining > lease {
		t.Fatalf("AcquireFence(Exclusive) over a live holder = %v, want Held{1, (0, %s]}", err, lease)
	}
	for range 2 { // a second lapse finds nothing live and changes nothing
		if err := f.LapseFenceLeases(ctx); err != nil {
			t.Fatalf("LapseFenceLeases: %v", err)
		}
	}
	if err := w.RenewFence(ctx, 1); err != nil {
		t.Fatalf("RenewFence(1) after its lease lapsed: %v", err)
	}
	if _, err = q.AcquireFence(ctx, hoststore.Exclusive); !asHeld(err, &held) || held.Remaining <= lease-time.Minute/2 {
		t.Fatalf("AcquireFence(Exclusive) after a renew = %v, want Held with about a full lease", err)
	}
	if err := f.LapseFenceLeases(ctx); err != nil {
		t.Fatalf("LapseFenceLeases: %v", err)
	}
	g2, err := q.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil || g2.Token != 2 || g2.SupersededLease != 0 {
		t.Fatalf("AcquireFence(Exclusive) after a lapse = %+v, %v; want token 2, nothing superseded", g2, err)
	}
	for _, tok := range []hoststore.FenceToken{0, 3, 1 << 62, 1<<64 - 1} {
		if err := q.RenewFence(ctx, tok); !kindIs(err, hoststore.ErrKindInvalid) {
			t.Errorf("RenewFence(%d) = %v, want Invalid (never issued)", tok, err)
		}
		b, err := hoststore.NewCommitBatch(id("never"), tok, []hoststore.ScopeUpdate{create(scope(hoststore.KindSession, "n"), "h")})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Commit(ctx, b); !kindIs(err, hoststore.ErrKindInvalid) {
			t.Errorf("Commit with token %d = %v, want Invalid (never issued)", tok, err)
		}
	}
	if err := w.RenewFence(ctx, 1); fencedOut(err) == nil || fencedOut(err).Current != 2 {
		t.Errorf("RenewFence(1) after token 2 = %v, want FencedOut{2}", err)
	}
	if _, err := q.AcquireFence(ctx, hoststore.AcquireMode(7)); !kindIs(err, hoststore.ErrKindInvalid) {
		t.Errorf("AcquireFence(mode 7) = %v, want Invalid", err)
	}
}

func asHeld(err error, dst **hoststore.HeldError) bool { return errors.As(err, dst) }

// TestFenceTimingOption: a configured timing is declared and recorded.
func TestFenceTimingOption(t *testing.T) {
	timing, err := hoststore.NewFenceTiming(time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := postgres.ParseURL(serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Realm, cfg.Timing = postgres.RandomRealm(), timing
	f, err := postgres.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Drop(context.Background()); err != nil {
			t.Errorf("Drop: %v", err)
		}
	})
	s := open(t, f)
	if s.FenceTiming() != timing {
		t.Errorf("FenceTiming() = %s, want %s", s.FenceTiming(), timing)
	}
	if _, err := s.AcquireFence(t.Context(), hoststore.Exclusive); err != nil {
		t.Fatal(err)
	}
	var held *hoststore.HeldError
	if _, err := open(t, f).AcquireFence(t.Context(), hoststore.Exclusive); !asHeld(err, &held) || held.Remaining > 3*time.Second {
		t.Errorf("AcquireFence over a 3 s lease = %v, want Held for at most 3 s", err)
	}
}
