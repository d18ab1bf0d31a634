package appendonly_test

import (
	"fmt"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/appendonly"
)

// TestALoserStaysHidden replays, through the public API, the history the
// exploration chapter found (seed 5812348206992313291, history 201 of a run
// with seed 7): batch c1 names a version of e that does not exist at its
// commit point, so it loses, and loads show it hidden; c3, built on c1's
// create of c, loses too. A later batch c4 that creates the version c1
// named must not bring either back: every load resolves a batch the same
// way (docs/host-store-contract.md#ob-4), and a batch refused or hidden
// never happened. A send that lost never happened, so a resend of c1 is
// its first arrival, decided at its own commit point as the reference
// decides it (reference/commit.go: the id never landed, the versions now
// match, it lands); a second resend acts no more (#ob-3).
func TestALoserStaysHidden(t *testing.T) {
	ctx := t.Context()
	f, err := appendonly.NewRealm(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.OpenStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	g, err := s.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	sc := func(name string) hoststore.ScopeRef {
		return hoststore.ScopeRef{Kind: hoststore.KindSession, Name: hoststore.ScopeName(name)}
	}
	e, c, fs := sc("e"), sc("c"), sc("f")
	create := func(ref hoststore.ScopeRef, head string) hoststore.ScopeUpdate {
		return hoststore.ScopeUpdate{Scope: ref, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte(head)), Append: [][]byte{[]byte(head + "-r0")}}
	}
	update := func(ref hoststore.ScopeRef, prev hoststore.ScopeVersion, head string) hoststore.ScopeUpdate {
		return hoststore.ScopeUpdate{Scope: ref, Previous: hoststore.Ptr(prev), Next: prev + 1, Head: hoststore.Ptr([]byte(head)), Append: [][]byte{[]byte(head + "-r")}}
	}
	batch := func(id string, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
		b, err := hoststore.NewCommitBatch(hoststore.CommitID(id), g.Token, ups)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	commit := func(b *hoststore.CommitBatch) {
		t.Helper()
		if err := s.Commit(ctx, b); err != nil {
			t.Fatalf("Commit(%s) = %v; this store keeps obligation 4 at load and answers nil", b.CommitID(), err)
		}
	}
	// expect checks a scope through LoadHead, ReadRows and ListHeads, on
	// st; w is "absent" or "vN by ID".
	expect := func(st hoststore.HostStore, step string, ref hoststore.ScopeRef, w string) {
		t.Helper()
		got := "absent"
		h, err := st.LoadHead(ctx, ref)
		if err != nil {
			t.Fatalf("%s: LoadHead(%s): %v", step, ref, err)
		}
		if h != nil {
			got = fmt.Sprintf("v%d by %s", h.Version, h.CommitID)
		}
		if got != w {
			t.Errorf("%s: LoadHead(%s) = %s, want %s", step, ref, got, w)
		}
		page, err := st.ListHeads(ctx, ref.Kind, nil, 100)
		if err != nil {
			t.Fatalf("%s: ListHeads: %v", step, err)
		}
		listed := "absent"
		for _, l := range page.Heads {
			if l.Name == ref.Name {
				listed = fmt.Sprintf("v%d by %s", l.Head.Version, l.Head.CommitID)
			}
		}
		if listed != w {
			t.Errorf("%s: ListHeads lists %s as %s, want %s", step, ref, listed, w)
		}
		rows, err := st.ReadRows(ctx, ref, 0, 100)
		if err != nil {
			t.Fatalf("%s: ReadRows(%s): %v", step, ref, err)
		}
		if w == "absent" && len(rows) != 0 {
			t.Errorf("%s: ReadRows(%s) = %d rows of a scope that is absent", step, ref, len(rows))
		}
	}

	c1 := batch("r202-p0-c1", update(e, 2, "h-r202-p0-c1"), create(c, "h-r202-p0-c1"))
	commit(c1) // e does not exist: c1 loses, in e and in c
	expect(s, "#3", e, "absent")
	expect(s, "#3", c, "absent")
	commit(batch("r202-p0-c2", create(e, "h-c2-e"), create(fs, "h-c2-f")))
	expect(s, "after c2", e, "v1 by r202-p0-c2")
	c3 := hoststore.ScopeUpdate{Scope: c, Previous: hoststore.Ptr[hoststore.ScopeVersion](1), Next: 2,
		TruncateAfter: hoststore.Ptr[hoststore.RowIndex](2), DropBefore: hoststore.Ptr[hoststore.RowIndex](0), Append: [][]byte{[]byte("c3-r")}}
	commit(batch("r202-p0-c3", c3)) // built on c1's create of c, which is hidden: loses
	expect(s, "#8", c, "absent")
	commit(batch("r202-p0-c4", update(e, 1, "h-c4"))) // creates version 2 of e, which c1 named
	expect(s, "after c4", e, "v2 by r202-p0-c4")
	expect(s, "after c4", c, "absent")
	for _, st := range []hoststore.HostStore{s, reopen(t, f)} {
		expect(st, "after c4", e, "v2 by r202-p0-c4")
		expect(st, "after c4", c, "absent")
	}
	commit(c1) // #10, the resend: e stands at 2 and c is absent, so it lands now
	commit(c1) // and acts once
	for _, st := range []hoststore.HostStore{s, reopen(t, f)} {
		expect(st, "#11", c, "v1 by r202-p0-c1")
		expect(st, "#17", e, "v3 by r202-p0-c1")
		expect(st, "#17", fs, "v1 by r202-p0-c2")
	}
	// c5 names e's version 2 again: it loses, for good, even once c6
	// makes a version 3 of e that c5 could not see.
	c5 := batch("r202-p0-c5", update(e, 2, "h-c5"), create(sc("g"), "h-c5"))
	commit(c5)
	commit(batch("r202-p0-c6", update(e, 3, "h-c6")))
	expect(s, "after c6", e, "v4 by r202-p0-c6")
	expect(s, "after c6", sc("g"), "absent")
	commit(batch("r202-p0-c7", update(e, 4, "h-c7")))
	expect(s, "after c7", e, "v5 by r202-p0-c7")
	expect(s, "after c7", sc("g"), "absent")
}
func reopen(t *testing.T, f *appendonly.Factory) hoststore.HostStore {
	t.Helper()
	st, err := f.OpenStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Kill)
	return st
}
