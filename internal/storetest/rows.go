package storetest

import (
	"fmt"
	"math"

	"github.com/conform-spi/conform/hoststore"
)

func testRowsRemoval(e *env) {
	w, tok := e.writer()
	a := scope(hoststore.KindMob, "rows")
	ri := func(v uint64) *hoststore.RowIndex { return hoststore.Ptr(hoststore.RowIndex(v)) }
	e.commit(w, e.batch(e.id("c"), tok, create(a, "h", "r0", "r1", "r2", "r3", "r4")))
	// truncate at 3 then append: the appended row takes index 3.
	u := withRows(next(a, 1), "n3", "n4")
	u.TruncateAfter = ri(3)
	e.commit(w, e.batch(e.id("c"), tok, u))
	e.wantRows(w, a, 0, "r0", "r1", "r2", "n3", "n4")
	// drop below 2, no renumbering.
	u = next(a, 2)
	u.DropBefore = ri(2)
	e.commit(w, e.batch(e.id("c"), tok, u))
	e.wantRows(w, a, 2, "r2", "n3", "n4")
	// truncate at or past the end removes nothing.
	u = next(a, 3)
	u.TruncateAfter = ri(5)
	e.commit(w, e.batch(e.id("c"), tok, u))
	u = next(a, 4)
	u.TruncateAfter = ri(math.MaxUint64)
	e.commit(w, e.batch(e.id("c"), tok, u))
	e.wantRows(w, a, 2, "r2", "n3", "n4")
	// truncate below the start: everything goes, the start moves down to it.
	u = withRows(next(a, 5), "m1")
	u.TruncateAfter = ri(1)
	e.commit(w, e.batch(e.id("c"), tok, u))
	e.wantRows(w, a, 1, "m1")
	// all parts in one update: truncate, drop, append, head, in that order.
	u = withHead(withRows(next(a, 6), "k1", "k2"), "h7")
	u.TruncateAfter, u.DropBefore = ri(1), ri(1)
	e.commit(w, e.batch(e.id("c"), tok, u))
	e.wantRows(w, a, 1, "k1", "k2")
	// drop past the end: every row goes, the end stays, appends go on from it.
	u = next(a, 7)
	u.DropBefore = ri(100)
	e.commit(w, e.batch(e.id("c"), tok, u))
	e.wantRows(w, a, 3)
	last := e.id("c")
	e.commit(w, e.batch(last, tok, withRows(next(a, 8), "z3", "z4")))
	for _, s := range []hoststore.HostStore{w, e.open()} {
		e.wantRows(s, a, 3, "z3", "z4")
		e.wantRows(s, a, 4, "z4")
		e.wantRows(s, a, 9)
		e.wantHead(s, a, vh(9, last, "h7"))
		if got := e.rows(s, a, 3, 1); len(got) != 1 || got[0].Index != 3 {
			e.Errorf("ReadRows(%s, 3, limit 1) = %s, want row 3 alone", a, rowsText(got))
		}
	}
}

func testRowsInvalid(e *env) {
	w, tok := e.writer()
	a := scope(hoststore.KindMob, "rows")
	e.commit(w, e.batch(e.id("c"), tok, create(a, "h", "r0", "r1", "r2")))
	u := next(a, 1)
	u.DropBefore = hoststore.Ptr[hoststore.RowIndex](2)
	e.commit(w, e.batch(e.id("c"), tok, u))
	if _, err := w.ReadRows(e.ctx, a, 1, 10); kindOf(err) != hoststore.ErrKindInvalid {
		e.Errorf("ReadRows(%s) from below the first visible row = %v, want Invalid", a, err)
	}
	for _, limit := range []int{0, -1} {
		if _, err := w.ReadRows(e.ctx, a, 2, limit); kindOf(err) != hoststore.ErrKindInvalid {
			e.Errorf("ReadRows(limit %d) = %v, want Invalid", limit, err)
		}
		if _, err := w.ListHeads(e.ctx, hoststore.KindMob, nil, limit); kindOf(err) != hoststore.ErrKindInvalid {
			e.Errorf("ListHeads(limit %d) = %v, want Invalid", limit, err)
		}
	}
	if got := e.rows(w, scope(hoststore.KindMob, "absent"), 5, 10); len(got) != 0 {
		e.Errorf("ReadRows of an absent scope = %s, want no rows", rowsText(got))
	}
	if got := e.rows(w, scope(hoststore.KindRecord, "rows"), 0, 10); len(got) != 0 {
		e.Errorf("ReadRows of the same name under another kind = %s, want no rows", rowsText(got))
	}
}

func testDelete(e *env) {
	w, tok := e.writer()
	a, b := scope(hoststore.KindIdentity, "a"), scope(hoststore.KindIdentity, "b")
	e.commit(w, e.batch(e.id("c"), tok, create(a, "a1", "r0"), create(b, "b1")))
	del := hoststore.ScopeUpdate{Scope: a, Previous: hoststore.Ptr[hoststore.ScopeVersion](1), Next: 2, Delete: true}
	e.commit(w, e.batch(e.id("del"), tok, del, withHead(next(b, 1), "b2")))
	for _, s := range []hoststore.HostStore{w, e.open()} {
		e.wantHead(s, a, nil)
		e.wantRows(s, a, 0)
		page, err := s.ListHeads(e.ctx, hoststore.KindIdentity, nil, 10)
		if err != nil {
			e.Fatalf("ListHeads: %v", err)
		}
		if len(page.Heads) != 1 || page.Heads[0].Name != b.Name {
			e.Errorf("ListHeads after a delete = %v, want only %s", names(page), b)
		}
	}
	err := w.Commit(e.ctx, e.batch(e.id("recreate"), tok, create(a, "again")))
	switch {
	case e.cfg.RefusesDeletedName && kindOf(err) != hoststore.ErrKindInvalid:
		e.Errorf("Commit creating a deleted name = %v, want Invalid", err)
	case !e.cfg.RefusesDeletedName && err != nil:
		e.Errorf("Commit creating a deleted name = %v, want Ok (never shown)", err)
	}
	e.wantHead(e.open(), a, nil)
}

func testListing(e *env) {
	w, tok := e.writer()
	// Byte order, not locale order: "B" < "a" < "b" < "é" (0xc3 0xa9) < "\U0001F600".
	names := []string{"b", "a", "B", "é", "\U0001F600", "a/1", "a/10", "a/2", "ab"}
	var ups []hoststore.ScopeUpdate
	for _, n := range names {
		ups = append(ups, create(scope(hoststore.KindRecord, n), "h-"+n))
	}
	e.commit(w, e.batch(e.id("c"), tok, ups...))
	e.commit(w, e.batch(e.id("c"), tok, create(scope(hoststore.KindSession, "a"), "other kind")))
	want := []string{"B", "a", "a/1", "a/10", "a/2", "ab", "b", "é", "\U0001F600"}
	for _, s := range []hoststore.HostStore{w, e.open()} {
		for _, limit := range []int{1, 2, 4, 9, 10} {
			var got []string
			var after *hoststore.ScopeName
			for pages := 0; ; pages++ {
				if pages > len(want)+1 {
					e.Fatalf("ListHeads(limit %d) does not end", limit)
				}
				page, err := s.ListHeads(e.ctx, hoststore.KindRecord, after, limit)
				if err != nil {
					e.Fatalf("ListHeads: %v", err)
				}
				if len(page.Heads) > limit {
					e.Fatalf("ListHeads(limit %d) answered %d heads", limit, len(page.Heads))
				}
				for _, h := range page.Heads {
					got = append(got, string(h.Name))
					if string(h.Head.Head) != "h-"+string(h.Name) || h.Head.Version != 1 {
						e.Errorf("ListHeads entry %q = %+v, want version 1 and head %q", h.Name, h.Head, "h-"+string(h.Name))
					}
				}
				if page.Next == nil {
					break
				}
				if len(page.Heads) == 0 || *page.Next != page.Heads[len(page.Heads)-1].Name {
					e.Fatalf("ListHeads Next = %q, want the last name returned", *page.Next)
				}
				after = page.Next
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				e.Errorf("ListHeads(limit %d) pages = %q, want %q", limit, got, want)
			}
		}
	}
}

func names(p hoststore.HeadPage) []string {
	var out []string
	for _, h := range p.Heads {
		out = append(out, string(h.Name))
	}
	return out
}
