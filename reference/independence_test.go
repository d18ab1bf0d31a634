package reference

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// testInj is the injector the tests hold the pair batch on; it claims the
// batch's id, so a commit under a context without an injector reaches it.
var testInj = func() *faults.Injector {
	i := faults.NewInjector()
	i.Claim("pair")
	return i
}()

// idIs matches one commit id, so a hold never catches another test's commit.
func idIs(id string) func(hoststore.CommitID) bool {
	return func(c hoststore.CommitID) bool { return c == hoststore.CommitID(id) }
}

// pairRealm makes a realm with Sessions "a" and "b" (one row each) and
// "c", and the batch "pair" that moves a and b to version 2 together.
func pairRealm(t *testing.T) (*Factory, *Store, hoststore.FenceToken, *hoststore.CommitBatch) {
	t.Helper()
	f := NewFactory()
	s, tok := fenced(t, f)
	mustCommit(t, s, batch(t, "setup", tok, create(sess("a"), "a1", "a0"), create(sess("b"), "b1", "b0"), create(sess("c"), "c1")))
	grow := func(u *hoststore.ScopeUpdate) {
		u.Head = hoststore.Ptr([]byte(string(u.Scope.Name) + "2"))
		u.Append = rowsOf(string(u.Scope.Name) + "1")
	}
	return f, s, tok, batch(t, "pair", tok, step(sess("b"), 1, grow), step(sess("a"), 1, grow))
}

// wantPair checks that the batch "pair" shows in both a and b (landed) or
// in neither, through every read.
func wantPair(t *testing.T, what string, s *Store, landed bool) {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		v, id, head, rows := hoststore.ScopeVersion(1), "setup", n+"1", []string{"0:" + n + "0"}
		if landed {
			v, id, head, rows = 2, "pair", n+"2", append(rows, "1:"+n+"1")
		}
		wantHead(t, what+": head of "+n, headOf(t, s, sess(n)), v, id, head)
		got, err := s.ReadRows(bg, sess(n), 0, 10)
		if err != nil || !reflect.DeepEqual(rowStrings(got), rows) {
			t.Fatalf("%s: rows of %s = %v, %v; want %v", what, n, rowStrings(got), err, rows)
		}
		page, err := s.ListHeads(bg, hoststore.KindSession, nil, 10)
		if err != nil {
			t.Fatalf("%s: listing: %v", what, err)
		}
		listed := 0
		for _, h := range page.Heads {
			if string(h.Name) != n {
				continue
			}
			listed++
			if h.Head.Version != v || string(h.Head.CommitID) != id {
				t.Fatalf("%s: listed %s at v%d by %q, want v%d by %q", what, n, h.Head.Version, h.Head.CommitID, v, id)
			}
		}
		if listed != 1 {
			t.Fatalf("%s: %s listed %d times in %q", what, n, listed, names(page))
		}
	}
}

// TestHeldCommitHoldsNothingUp holds a two-scope commit at each in-store
// site and checks that, while it is held, a commit on another scope, an
// acquire, a renew, loads, reads and listings complete, and readers see
// the old state before the point and the new one after it. The acquire
// (a takeover) comes before a held commit's point, so a commit held
// before its point is then FencedOut and never shows; one held after its
// point stays visible.
func TestHeldCommitHoldsNothingUp(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			f, s, tok, pair := pairRealm(t)
			h := testInj.HoldAt(site, idIs("pair"))
			defer h.Disarm()
			done := make(chan error, 1)
			go func() { done <- s.Commit(bg, pair) }()
			<-h.Arrived()
			afterPoint := site == instore.CommitAfterPoint
			other := openStore(t, f)
			mustCommit(t, other, batch(t, "c-before", tok, step(sess("c"), 1, nil)))
			wantPair(t, "while held, another handle", other, afterPoint)
			wantPair(t, "while held, the same handle", s, afterPoint)
			if err := other.RenewFence(bg, tok); err != nil {
				t.Fatalf("renew while held: %v", err)
			}
			g, err := other.AcquireFence(bg, hoststore.Takeover)
			if err != nil || g.Token != tok+1 {
				t.Fatalf("takeover while held = %+v, %v", g, err)
			}
			mustCommit(t, other, batch(t, "c-after", g.Token, step(sess("c"), 2, nil), create(sess("d"), "d")))
			select {
			case err := <-done:
				t.Fatalf("the held commit answered %v before its release", err)
			default:
			}
			h.Release()
			err = <-done
			if afterPoint {
				if err != nil {
					t.Fatalf("commit held after its point = %v, want nil", err)
				}
			} else {
				var fo *hoststore.FencedOutError
				if !errors.As(err, &fo) || fo.Current != g.Token {
					t.Fatalf("commit held before its point, across a takeover = %v, want FencedOut{%d}", err, g.Token)
				}
			}
			wantPair(t, "after the release", openStore(t, f), afterPoint)
			wantHead(t, "c", headOf(t, other, sess("c")), 3, "c-after", "c1")
		})
	}
}

// TestCrashAtSite: a crash before the commit point applies nothing, after
// it the batch stays applied; the answer wraps instore.ErrCrashed; a retry
// from the next process then acts exactly once.
func TestCrashAtSite(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			f, s, _, pair := pairRealm(t)
			h := testInj.HoldAt(site, idIs("pair"))
			defer h.Disarm()
			h.Crash()
			if err := s.Commit(bg, pair); !errors.Is(err, instore.ErrCrashed) {
				t.Fatalf("commit crashed at %s = %v, want ErrCrashed", site, err)
			}
			landed := site == instore.CommitAfterPoint
			next := openStore(t, f)
			wantPair(t, "after the crash", next, landed)
			mustCommit(t, next, pair)
			wantPair(t, "after the retry", next, true)
		})
	}
}

// TestKillWhileHeld: a handle killed while its commit is held returns
// Unavailable and applies nothing before the point, and returns
// Indeterminate with the batch applied after it.
func TestKillWhileHeld(t *testing.T) {
	cases := []struct {
		site   instore.Site
		kind   hoststore.ErrorKind
		landed bool
	}{
		{instore.CommitLocked, hoststore.ErrKindUnavailable, false},
		{instore.CommitBeforePoint, hoststore.ErrKindUnavailable, false},
		{instore.CommitAfterPoint, hoststore.ErrKindIndeterminate, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.site), func(t *testing.T) {
			f, s, _, pair := pairRealm(t)
			h := testInj.HoldAt(tc.site, idIs("pair"))
			defer h.Disarm()
			done := make(chan error, 1)
			go func() { done <- s.Commit(bg, pair) }()
			<-h.Arrived()
			s.Kill()
			h.Release()
			wantKind(t, "commit of a killed handle", <-done, tc.kind)
			wantPair(t, "after the kill", openStore(t, f), tc.landed)
		})
	}
}

// TestContextEndsWhileHeld: a commit whose context ends while it is held
// returns ctx.Err(); before the point it applied nothing.
func TestContextEndsWhileHeld(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			f, s, _, pair := pairRealm(t)
			h := testInj.HoldAt(site, idIs("pair"))
			defer h.Disarm()
			ctx, cancel := context.WithCancel(bg)
			done := make(chan error, 1)
			go func() { done <- s.Commit(ctx, pair) }()
			<-h.Arrived()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("commit whose context ended while held = %v", err)
			}
			wantPair(t, "after the cancel", openStore(t, f), site == instore.CommitAfterPoint)
		})
	}
}

// TestWaitersOnAHeldScope: commits waiting for a scope a held commit locks
// leave when their context ends or their handle is killed; a retry of the
// held batch, sent meanwhile from a new process, returns nil and acts once.
func TestWaitersOnAHeldScope(t *testing.T) {
	f, s, tok, pair := pairRealm(t)
	h := testInj.HoldAt(instore.CommitAfterPoint, idIs("pair"))
	defer h.Disarm()
	done := make(chan error, 1)
	go func() { done <- s.Commit(bg, pair) }()
	<-h.Arrived()

	ctx, cancel := context.WithCancel(bg)
	waiter := openStore(t, f)
	cancelled := make(chan error, 1)
	go func() { cancelled <- waiter.Commit(ctx, batch(t, "w1", tok, step(sess("a"), 2, nil))) }()
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiter whose context ended = %v", err)
	}
	killed := make(chan error, 1)
	go func() { killed <- waiter.Commit(bg, batch(t, "w2", tok, step(sess("b"), 2, nil))) }()
	waiter.Kill()
	wantKind(t, "a waiter whose handle was killed", <-killed, hoststore.ErrKindUnavailable)

	retry := make(chan error, 1)
	go func() { retry <- openStore(t, f).Commit(bg, pair) }()
	h.Release()
	if err := <-done; err != nil {
		t.Fatalf("the held commit = %v", err)
	}
	if err := <-retry; err != nil {
		t.Fatalf("a retry racing the first send = %v, want nil", err)
	}
	wantPair(t, "after both sends", openStore(t, f), true)
}
