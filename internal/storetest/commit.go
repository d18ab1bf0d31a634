package storetest

import (
	"bytes"

	"github.com/conform-spi/conform/hoststore"
)

func testReopen(e *env) {
	w, tok := e.writer()
	a, b := scope(hoststore.KindSession, "a"), scope(hoststore.KindMob, "b")
	id1 := e.id("c")
	e.commit(w, e.batch(id1, tok, create(a, "a1", "r0", "r1"), create(b, "")))
	id2 := e.id("c")
	e.commit(w, e.batch(id2, tok, withRows(next(a, 1), "r2"), withHead(next(b, 1), "b2")))
	for _, s := range []hoststore.HostStore{w, e.open()} {
		e.wantHead(s, a, vh(2, id2, "a1"))
		e.wantHead(s, b, vh(2, id2, "b2"))
		e.wantRows(s, a, 0, "r0", "r1", "r2")
		e.wantRows(s, b, 0)
	}
	if h := e.head(e.open(), b); h != nil && h.Head == nil {
		e.Errorf("an empty head loads as nil; want an empty, non-nil head")
	}
}

func testRetry(e *env) {
	w, tok := e.writer()
	a, b := scope(hoststore.KindSession, "a"), scope(hoststore.KindRecord, "b")
	id1 := e.id("c")
	first := e.batch(id1, tok, create(a, "a1", "r0"), create(b, "b1", "s0"))
	e.commit(w, first)
	e.commit(w, first)
	q := e.open()
	e.commit(q, first)
	id2 := e.id("c")
	second := e.batch(id2, tok, withRows(next(a, 1), "r1"), withHead(next(b, 1), "b2"))
	e.commit(w, second)
	e.commit(q, second)
	e.commit(w, first)
	for _, s := range []hoststore.HostStore{w, q, e.open()} {
		e.wantHead(s, a, vh(2, id2, "a1"))
		e.wantHead(s, b, vh(2, id2, "b2"))
		e.wantRows(s, a, 0, "r0", "r1")
		e.wantRows(s, b, 0, "s0")
	}
}

func testStaleWriter(e *env) {
	old, tokOld := e.writer()
	a, b := scope(hoststore.KindSession, "a"), scope(hoststore.KindRecord, "b")
	id1 := e.id("c")
	e.commit(old, e.batch(id1, tokOld, create(a, "a1", "r0"), create(b, "b1")))
	cur := e.open()
	g, err := cur.AcquireFence(e.ctx, hoststore.Takeover)
	if err != nil {
		e.Fatalf("AcquireFence(Takeover): %v", err)
	}
	fresh := scope(hoststore.KindSession, "fresh")
	stale := e.batch(e.id("stale"), tokOld, withRows(withHead(next(a, 1), "stale"), "stale"), hoststore.ScopeUpdate{Scope: b, Previous: hoststore.Ptr[hoststore.ScopeVersion](1), Next: 2, Delete: true}, create(fresh, "stale"))
	err = old.Commit(e.ctx, stale)
	switch {
	case e.cfg.RefusesAtCommit && kindOf(err) != hoststore.ErrKindFencedOut:
		e.Errorf("Commit by a superseded writer = %v, want FencedOut", err)
	case !e.cfg.RefusesAtCommit && err != nil:
		e.Errorf("Commit by a superseded writer = %v, want Ok (hidden at load)", err)
	}
	for _, s := range []hoststore.HostStore{old, cur, e.open()} {
		e.wantHead(s, a, vh(1, id1, "a1"))
		e.wantHead(s, b, vh(1, id1, "b1"))
		e.wantHead(s, fresh, nil)
		e.wantRows(s, a, 0, "r0")
	}
	id2 := e.id("c")
	e.commit(cur, e.batch(id2, g.Token, withRows(next(a, 1), "r1"), withHead(next(b, 1), "b2")))
	for _, s := range []hoststore.HostStore{cur, e.open()} {
		e.wantHead(s, a, vh(2, id2, "a1"))
		e.wantHead(s, b, vh(2, id2, "b2"))
		e.wantRows(s, a, 0, "r0", "r1")
	}
}

func testSameVersion(e *env) {
	w, tok := e.writer()
	a, b, c := scope(hoststore.KindSession, "a"), scope(hoststore.KindRecord, "b"), scope(hoststore.KindRecord, "c")
	setup := e.id("setup")
	e.commit(w, e.batch(setup, tok, create(a, "a1"), create(b, "b1"), create(c, "c1")))
	x := e.batch("same-x", tok, withRows(withHead(next(a, 1), "a-x"), "x"), withHead(next(b, 1), "b-x"))
	y := e.batch("same-y", tok, withRows(withHead(next(a, 1), "a-y"), "y"), withHead(next(c, 1), "c-y"))
	e.commit(w, x)
	err := w.Commit(e.ctx, y)
	if e.cfg.RefusesAtCommit {
		if kindOf(err) != hoststore.ErrKindConflict {
			e.Errorf("Commit of a second batch for version 1 of %s = %v, want Conflict", a, err)
		}
	} else if err != nil {
		e.Errorf("Commit of a second batch for version 1 of %s = %v, want Ok (resolved at load)", a, err)
	}
	// The rule: the lowest commit id wins among equal tokens, so x either way.
	for _, s := range []hoststore.HostStore{w, e.open()} {
		e.wantHead(s, a, vh(2, "same-x", "a-x"))
		e.wantHead(s, b, vh(2, "same-x", "b-x"))
		e.wantHead(s, c, vh(1, setup, "c1"))
		e.wantRows(s, a, 0, "x")
	}
	id := e.id("c")
	e.commit(w, e.batch(id, tok, withRows(next(a, 2), "after"), withHead(next(c, 1), "c2")))
	e.wantRows(e.open(), a, 0, "x", "after")
	e.wantHead(e.open(), c, vh(2, id, "c2"))
}

func testSizeLimits(e *env) {
	w, tok := e.writer()
	a, b := scope(hoststore.KindRecord, "big-a"), scope(hoststore.KindRecord, "big-b")
	row := func(seed byte) []byte {
		r := make([]byte, hoststore.MaxRowBytes)
		for i := range r {
			r[i] = seed + byte(i*7)
		}
		return r
	}
	rows := [][]byte{row(1), row(2), row(3), row(4), row(5), row(6), row(7)}
	head := bytes.Repeat([]byte{0xfe, 0x00, 0x01}, (hoststore.MaxBatchBytes-len(rows)*hoststore.MaxRowBytes)/3)
	ua := hoststore.ScopeUpdate{Scope: a, Next: 1, Head: &head, Append: rows}
	ub := hoststore.ScopeUpdate{Scope: b, Next: 1, Head: hoststore.Ptr([]byte{})}
	bt := e.batch(e.id("big"), tok, ua, ub)
	if bt.Bytes() < hoststore.MaxBatchBytes-2 {
		e.Fatalf("test batch is %d bytes, want about %d", bt.Bytes(), hoststore.MaxBatchBytes)
	}
	e.commit(w, bt)
	s := e.open()
	h := e.head(s, a)
	if h == nil || !bytes.Equal(h.Head, head) {
		e.Errorf("the head of a batch at the size limit does not load byte-exact")
	}
	got := e.rows(s, a, 0, 100)
	if len(got) != len(rows) {
		e.Fatalf("ReadRows after a batch at the size limit = %d rows, want %d", len(got), len(rows))
	}
	for i, r := range got {
		if r.Index != hoststore.RowIndex(i) || !bytes.Equal(r.Data, rows[i]) {
			e.Errorf("row %d of a batch at the size limit does not load byte-exact (index %d)", i, r.Index)
		}
	}
	if hb := e.head(s, b); hb == nil || len(hb.Head) != 0 {
		e.Errorf("an empty head in a big batch = %v, want an empty head", hb)
	}
}
