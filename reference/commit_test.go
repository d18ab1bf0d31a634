package reference

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// TestCommitRetryActsOnce: a batch sent twice under one commit id lands
// once, whether the second send comes through the first handle or a new
// one, after its scopes moved on, or after a takeover made its token stale
// (the landed check comes first).
func TestCommitRetryActsOnce(t *testing.T) {
	f := NewFactory()
	s, tok := fenced(t, f)
	a, b := sess("a"), sess("b")
	first := batch(t, "c1", tok, create(a, "a1", "r0"), create(b, "b1"))
	mustCommit(t, s, first)
	mustCommit(t, s, first)
	second := batch(t, "c2", tok, step(a, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("r1") }))
	mustCommit(t, s, second)
	other, tok2 := fenced(t, f)
	mustCommit(t, other, first)
	mustCommit(t, other, second)
	mustCommit(t, s, second) // superseded token, but it landed already
	wantHead(t, "a after retries", headOf(t, other, a), 2, "c2", "a1")
	wantHead(t, "b after retries", headOf(t, other, b), 1, "c1", "b1")
	rows, err := other.ReadRows(bg, a, 0, 10)
	if err != nil || !reflect.DeepEqual(rowStrings(rows), []string{"0:r0", "1:r1"}) {
		t.Fatalf("rows of a = %v, %v; a retry acted again", rowStrings(rows), err)
	}
	mustCommit(t, other, batch(t, "c3", tok2, step(a, 2, nil)))
}

// TestCommitFencing: a token below the highest is FencedOut with the
// current token, a token never issued Invalid; either applies nothing.
func TestCommitFencing(t *testing.T) {
	f := NewFactory()
	s, old := fenced(t, f)
	a := sess("a")
	mustCommit(t, s, batch(t, "c1", old, create(a, "a1")))
	_, cur := fenced(t, f)
	cases := []struct {
		name  string
		token hoststore.FenceToken
		kind  hoststore.ErrorKind
	}{
		{"superseded", old, hoststore.ErrKindFencedOut},
		{"zero", 0, hoststore.ErrKindInvalid},
		{"never issued", cur + 1, hoststore.ErrKindInvalid},
	}
	for _, tc := range cases {
		err := s.Commit(bg, batch(t, "x-"+tc.name, tc.token, step(a, 1, nil), create(sess("new"), "n")))
		wantKind(t, "commit "+tc.name, err, tc.kind)
		var fo *hoststore.FencedOutError
		if errors.As(err, &fo) && fo.Current != cur {
			t.Fatalf("FencedOut current = %d, want %d", fo.Current, cur)
		}
		wantHead(t, "a after "+tc.name, headOf(t, s, a), 1, "c1", "a1")
		wantHead(t, "new after "+tc.name, headOf(t, s, sess("new")), 0, "", "")
	}
	// The fence is checked before the versions: a stale batch that also
	// conflicts returns FencedOut.
	wantKind(t, "stale and conflicting", s.Commit(bg, batch(t, "x-both", old, step(a, 5, nil))), hoststore.ErrKindFencedOut)
	mustCommit(t, s, batch(t, "c2", cur, step(a, 1, nil)))
}

// TestCommitRefusalsApplyNothing: Conflict carries the scope and its
// current version (nil when absent), a create of a deleted name is
// Invalid, and neither applies anything in any scope.
func TestCommitRefusalsApplyNothing(t *testing.T) {
	f := NewFactory()
	s, tok := fenced(t, f)
	a, gone := sess("a"), sess("gone")
	mustCommit(t, s, batch(t, "c1", tok, create(a, "a1", "r0"), create(gone, "g")))
	mustCommit(t, s, batch(t, "c2", tok, del(gone, 1)))
	cases := []struct {
		name    string
		b       *hoststore.CommitBatch
		kind    hoststore.ErrorKind
		scope   hoststore.ScopeRef
		current *hoststore.ScopeVersion
	}{
		{"wrong previous", batch(t, "x1", tok, step(a, 3, nil)), hoststore.ErrKindConflict, a, hoststore.Ptr(hoststore.ScopeVersion(1))},
		{"absent scope", batch(t, "x2", tok, step(sess("b"), 1, nil)), hoststore.ErrKindConflict, sess("b"), nil},
		{"second update conflicts", batch(t, "x3", tok, create(sess("c"), "c", "row"), step(a, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("r1") }), step(sess("b"), 4, nil)), hoststore.ErrKindConflict, sess("b"), nil},
		{"create of a deleted name", batch(t, "x4", tok, step(a, 1, nil), create(gone, "g2")), hoststore.ErrKindInvalid, hoststore.ScopeRef{}, nil},
		{"nil batch", nil, hoststore.ErrKindInvalid, hoststore.ScopeRef{}, nil},
	}
	for _, tc := range cases {
		err := s.Commit(bg, tc.b)
		wantKind(t, tc.name, err, tc.kind)
		if tc.kind == hoststore.ErrKindConflict {
			if c := asConflict(t, err); c.Scope != tc.scope || !reflect.DeepEqual(c.Current, tc.current) {
				t.Fatalf("%s: conflict = %v, want scope %s current %v", tc.name, c, tc.scope, tc.current)
			}
		}
		wantHead(t, tc.name+": a", headOf(t, s, a), 1, "c1", "a1")
		wantHead(t, tc.name+": c", headOf(t, s, sess("c")), 0, "", "")
		if rows, _ := s.ReadRows(bg, a, 0, 10); len(rows) != 1 {
			t.Fatalf("%s: a has %d rows, want 1", tc.name, len(rows))
		}
		if page, _ := s.ListHeads(bg, hoststore.KindSession, nil, 10); !reflect.DeepEqual(names(page), []hoststore.ScopeName{"a"}) {
			t.Fatalf("%s: listing = %q, want [a]", tc.name, names(page))
		}
	}
	// After the refusals, the realm still accepts the right batch, and
	// the refused commit ids were not recorded as landed.
	mustCommit(t, s, batch(t, "x3", tok, create(sess("c"), "c", "row"), step(a, 1, nil)))
	wantHead(t, "c", headOf(t, s, sess("c")), 1, "x3", "c")
}

// TestStoreDelete: a deleted scope has no head and no rows and is not
// listed, in the batch that deletes it.
func TestStoreDelete(t *testing.T) {
	s, tok := fenced(t, NewFactory())
	a, b := sess("a"), sess("b")
	mustCommit(t, s, batch(t, "c1", tok, create(a, "a", "r0"), create(b, "b")))
	mustCommit(t, s, batch(t, "c2", tok, del(a, 1), step(b, 1, nil)))
	wantHead(t, "deleted a", headOf(t, s, a), 0, "", "")
	if rows, err := s.ReadRows(bg, a, 0, 10); err != nil || len(rows) != 0 {
		t.Fatalf("rows of a deleted scope = %v, %v", rows, err)
	}
	if page, _ := s.ListHeads(bg, hoststore.KindSession, nil, 10); !reflect.DeepEqual(names(page), []hoststore.ScopeName{"b"}) {
		t.Fatalf("listing = %q, want [b]", names(page))
	}
	wantKind(t, "update of a deleted scope", s.Commit(bg, batch(t, "c3", tok, step(a, 2, nil))), hoststore.ErrKindConflict)
}

// TestStoreKeepsCopies: changing an answer changes nothing stored.
func TestStoreKeepsCopies(t *testing.T) {
	s, tok := fenced(t, NewFactory())
	a := sess("a")
	mustCommit(t, s, batch(t, "c1", tok, create(a, "head", "r0", "r1")))
	h := headOf(t, s, a)
	h.Head[0] = 'X'
	rows, _ := s.ReadRows(bg, a, 0, 10)
	rows[0].Data[0] = 'X'
	page, _ := s.ListHeads(bg, hoststore.KindSession, nil, 10)
	page.Heads[0].Head.Head[1] = 'X'
	wantHead(t, "head after changing answers", headOf(t, s, a), 1, "c1", "head")
	if rows, _ := s.ReadRows(bg, a, 0, 10); !reflect.DeepEqual(rowStrings(rows), []string{"0:r0", "1:r1"}) {
		t.Fatalf("rows after changing answers = %v", rowStrings(rows))
	}
}

// TestEndedContext: every call whose context already ended returns
// ctx.Err() and applies nothing.
func TestEndedContext(t *testing.T) {
	f := NewFactory()
	s, tok := fenced(t, f)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	a := sess("a")
	calls := map[string]error{
		"Commit": s.Commit(ctx, batch(t, "c1", tok, create(a, "a"))),
		"AcquireFence": func() error {
			_, err := s.AcquireFence(ctx, hoststore.Takeover)
			return err
		}(),
		"RenewFence": s.RenewFence(ctx, tok),
		"LoadHead": func() error {
			_, err := s.LoadHead(ctx, a)
			return err
		}(),
		"ListHeads": func() error {
			_, err := s.ListHeads(ctx, hoststore.KindSession, nil, 1)
			return err
		}(),
		"ReadRows": func() error {
			_, err := s.ReadRows(ctx, a, 0, 1)
			return err
		}(),
		"Open": func() error {
			_, err := f.Open(ctx)
			return err
		}(),
	}
	for name, err := range calls {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s with an ended context = %v, want context.Canceled", name, err)
		}
	}
	wantHead(t, "a", headOf(t, s, a), 0, "", "")
	if g, _ := s.AcquireFence(bg, hoststore.Takeover); g.Token != tok+1 {
		t.Fatalf("token after a cancelled acquire = %d, want %d: it acquired", g.Token, tok+1)
	}
}

// TestKilledHandle: every call on a killed handle returns Unavailable;
// other handles go on.
func TestKilledHandle(t *testing.T) {
	f := NewFactory()
	s, tok := fenced(t, f)
	a := sess("a")
	mustCommit(t, s, batch(t, "c1", tok, create(a, "a")))
	s.Kill()
	s.Kill() // idempotent
	_, errAcq := s.AcquireFence(bg, hoststore.Takeover)
	_, errLoad := s.LoadHead(bg, a)
	_, errList := s.ListHeads(bg, hoststore.KindSession, nil, 1)
	_, errRead := s.ReadRows(bg, a, 0, 1)
	for name, err := range map[string]error{
		"Commit": s.Commit(bg, batch(t, "c2", tok, step(a, 1, nil))), "AcquireFence": errAcq,
		"RenewFence": s.RenewFence(bg, tok), "LoadHead": errLoad, "ListHeads": errList, "ReadRows": errRead,
	} {
		wantKind(t, name+" on a killed handle", err, hoststore.ErrKindUnavailable)
	}
	next := openStore(t, f)
	wantHead(t, "a from the next process", headOf(t, next, a), 1, "c1", "a")
	if err := next.RenewFence(bg, tok); err != nil {
		t.Fatalf("renew from the next process = %v: the kill acquired or renewed", err)
	}
}
