package reference

import (
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// TestModelApplyRefusals covers what a batch returns when it does not land
// and that it then applies nothing, in every scope.
func TestModelApplyRefusals(t *testing.T) {
	a, b, gone := sess("a"), sess("b"), sess("gone")
	base := NewModel()
	mustApply(t, base, batch(t, "c1", 1, create(a, "a1", "x"), create(gone, "g1")))
	mustApply(t, base, batch(t, "c2", 1, step(a, 1, nil), del(gone, 1)))
	cases := []struct {
		name    string
		b       *hoststore.CommitBatch
		kind    hoststore.ErrorKind
		scope   hoststore.ScopeRef
		current *hoststore.ScopeVersion
	}{
		{"wrong previous answers the current version", batch(t, "x1", 1, step(a, 1, nil)), hoststore.ErrKindConflict, a, hoststore.Ptr(hoststore.ScopeVersion(2))},
		{"previous on an absent scope answers nil", batch(t, "x2", 1, step(b, 1, nil)), hoststore.ErrKindConflict, b, nil},
		{"previous on a deleted scope answers nil", batch(t, "x3", 1, step(gone, 2, nil)), hoststore.ErrKindConflict, gone, nil},
		{"create of an existing scope", batch(t, "x4", 1, create(a, "again")), hoststore.ErrKindConflict, a, hoststore.Ptr(hoststore.ScopeVersion(2))},
		{"a conflict in the second update applies nothing of the first", batch(t, "x5", 1, create(b, "b1", "row"), step(a, 7, nil)), hoststore.ErrKindConflict, a, hoststore.Ptr(hoststore.ScopeVersion(2))},
		{"create of a deleted name", batch(t, "x6", 1, create(gone, "g2")), hoststore.ErrKindInvalid, hoststore.ScopeRef{}, nil},
		{"create of a deleted name next to a good update", batch(t, "x7", 1, step(a, 2, nil), create(gone, "g2")), hoststore.ErrKindInvalid, hoststore.ScopeRef{}, nil},
		{"a nil batch", nil, hoststore.ErrKindInvalid, hoststore.ScopeRef{}, nil},
		{"the zero batch", &hoststore.CommitBatch{}, hoststore.ErrKindInvalid, hoststore.ScopeRef{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := base.Clone()
			wantKind(t, "Check", m.Check(tc.b), tc.kind)
			err := m.Apply(tc.b)
			wantKind(t, "Apply", err, tc.kind)
			if tc.kind == hoststore.ErrKindConflict {
				c := asConflict(t, err)
				if c.Scope != tc.scope || !reflect.DeepEqual(c.Current, tc.current) {
					t.Fatalf("conflict = %v, want scope %s current %v", c, tc.scope, tc.current)
				}
			}
			if tc.b != nil && m.Landed(tc.b.CommitID()) {
				t.Fatalf("a refused batch is recorded as landed")
			}
			assertSameModel(t, m, base)
		})
	}
}

// assertSameModel fails unless got shows exactly what want shows.
func assertSameModel(t *testing.T, got, want *Model) {
	t.Helper()
	if g, w := got.Scopes(), want.Scopes(); !reflect.DeepEqual(g, w) {
		t.Fatalf("scopes = %v, want %v", g, w)
	}
	for _, s := range want.Scopes() {
		if g, w := got.Head(s), want.Head(s); !reflect.DeepEqual(g, w) {
			t.Fatalf("head of %s = %s, want %s", s, fmtHead(g), fmtHead(w))
		}
		gs, ge, gok := got.Bounds(s)
		ws, we, wok := want.Bounds(s)
		if gs != ws || ge != we || gok != wok {
			t.Fatalf("bounds of %s = [%d,%d) %v, want [%d,%d) %v", s, gs, ge, gok, ws, we, wok)
		}
		gr, _ := got.ReadRows(s, gs, 1<<20)
		wr, _ := want.ReadRows(s, ws, 1<<20)
		if !reflect.DeepEqual(rowStrings(gr), rowStrings(wr)) {
			t.Fatalf("rows of %s = %v, want %v", s, rowStrings(gr), rowStrings(wr))
		}
	}
	for _, k := range hoststore.AllKinds {
		if g, w := got.Names(k), want.Names(k); !reflect.DeepEqual(g, w) {
			t.Fatalf("names of %s = %v, want %v", k, g, w)
		}
	}
}

// TestModelRetryActsOnce: a commit id that already landed returns nil and
// acts never, even after its scope moved on.
func TestModelRetryActsOnce(t *testing.T) {
	s := sess("s")
	m := NewModel()
	first := batch(t, "c1", 1, create(s, "h1", "r0"))
	mustApply(t, m, first)
	mustApply(t, m, first)
	wantHead(t, "after a retry", m.Head(s), 1, "c1", "h1")
	mustApply(t, m, batch(t, "c2", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("r1") })))
	mustApply(t, m, first) // would conflict if it acted
	mustApply(t, m, batch(t, "c2", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("r1") })))
	wantHead(t, "after retries", m.Head(s), 2, "c2", "h1")
	if _, end, _ := m.Bounds(s); end != 2 {
		t.Fatalf("end = %d after retries, want 2 (a retry appended again)", end)
	}
	if !m.Landed("c1") || !m.Landed("c2") || m.Landed("c3") {
		t.Fatalf("Landed: c1 %v c2 %v c3 %v, want true true false", m.Landed("c1"), m.Landed("c2"), m.Landed("c3"))
	}
}

// TestModelDelete: a deleted scope has no head, no rows, is not listed,
// is reported Deleted and stays in Scopes.
func TestModelDelete(t *testing.T) {
	s, other := sess("s"), sc(hoststore.KindMob, "s")
	m := NewModel()
	mustApply(t, m, batch(t, "c1", 1, create(s, "h", "r0", "r1"), create(other, "o")))
	mustApply(t, m, batch(t, "c2", 1, del(s, 1)))
	if h := m.Head(s); h != nil {
		t.Fatalf("head of a deleted scope = %s", fmtHead(h))
	}
	if _, _, ok := m.Bounds(s); ok {
		t.Fatalf("Bounds of a deleted scope answered ok")
	}
	if rows, err := m.ReadRows(s, 0, 10); err != nil || len(rows) != 0 {
		t.Fatalf("ReadRows of a deleted scope = %v, %v; want no rows", rows, err)
	}
	if !m.Deleted(s) || m.Deleted(other) || m.Deleted(sess("never")) {
		t.Fatalf("Deleted: s %v, other %v, never %v; want true false false", m.Deleted(s), m.Deleted(other), m.Deleted(sess("never")))
	}
	if n := m.Names(hoststore.KindSession); len(n) != 0 {
		t.Fatalf("Names(Session) = %v, want none", n)
	}
	if page, _ := m.ListHeads(hoststore.KindSession, nil, 10); len(page.Heads) != 0 || page.Next != nil {
		t.Fatalf("ListHeads(Session) = %+v, want an empty ended page", page)
	}
	if n := m.Names(hoststore.KindMob); !reflect.DeepEqual(n, []hoststore.ScopeName{"s"}) {
		t.Fatalf("Names(Mob) = %v: deleting a Session touched a Mob of the same name", n)
	}
	if got, want := m.Scopes(), []hoststore.ScopeRef{s, other}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Scopes = %v, want %v", got, want)
	}
}

// TestModelClone: a clone and its original diverge without touching each
// other, also when both append to rows they share.
func TestModelClone(t *testing.T) {
	s := sess("s")
	m := NewModel()
	mustApply(t, m, batch(t, "c1", 1, create(s, "h", "r0")))
	c := m.Clone()
	mustApply(t, m, batch(t, "m2", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("mine") })))
	mustApply(t, c, batch(t, "c2", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("theirs") })))
	mustApply(t, c, batch(t, "c3", 1, create(sess("t"), "t")))
	mr, _ := m.ReadRows(s, 0, 10)
	cr, _ := c.ReadRows(s, 0, 10)
	if got := rowStrings(mr); !reflect.DeepEqual(got, []string{"0:r0", "1:mine"}) {
		t.Fatalf("original rows = %v", got)
	}
	if got := rowStrings(cr); !reflect.DeepEqual(got, []string{"0:r0", "1:theirs"}) {
		t.Fatalf("clone rows = %v", got)
	}
	if m.Landed("c2") || c.Landed("m2") || m.Head(sess("t")) != nil {
		t.Fatalf("a clone's batch showed in the original or back")
	}
	if !reflect.DeepEqual(m.Names(hoststore.KindSession), []hoststore.ScopeName{"s"}) {
		t.Fatalf("original names = %v", m.Names(hoststore.KindSession))
	}
}

// TestRowsSharedAfterTruncate: a state truncated and appended to never
// overwrites a row an older state still shows (the rowBuf claim).
func TestRowsSharedAfterTruncate(t *testing.T) {
	s := sess("s")
	m := NewModel()
	mustApply(t, m, batch(t, "c1", 1, create(s, "h", "r0", "r1", "r2")))
	old := m.Clone()
	mustApply(t, m, batch(t, "c2", 1, step(s, 1, func(u *hoststore.ScopeUpdate) {
		u.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(1))
		u.Append = rowsOf("new1")
	})))
	or, _ := old.ReadRows(s, 0, 10)
	if got := rowStrings(or); !reflect.DeepEqual(got, []string{"0:r0", "1:r1", "2:r2"}) {
		t.Fatalf("older rows after a truncate+append elsewhere = %v", got)
	}
	mustApply(t, old, batch(t, "o2", 1, step(s, 1, func(u *hoststore.ScopeUpdate) { u.Append = rowsOf("r3") })))
	nr, _ := m.ReadRows(s, 0, 10)
	if got := rowStrings(nr); !reflect.DeepEqual(got, []string{"0:r0", "1:new1"}) {
		t.Fatalf("newer rows after an append to the older = %v", got)
	}
}
