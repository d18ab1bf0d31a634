package appendonly_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/appendonly"
)

// TestLoadsAgreeWithListing builds a log full of what loads must resolve
// (batches racing for one version, stale writers after takeovers, deletes,
// batches built on losers) from a fixed seed, and checks that the one-scope
// load (which replays the scope's part of the log) and the listing (which
// replays all of it) return the same for every scope, from two handles.
func TestLoadsAgreeWithListing(t *testing.T) {
	ctx := t.Context()
	f, err := appendonly.NewRealm(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	type writer struct {
		s   hoststore.HostStore
		tok hoststore.FenceToken
	}
	var writers []writer
	takeover := func() {
		s, err := f.OpenStore(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Kill() })
		g, err := s.AcquireFence(ctx, hoststore.Takeover)
		if err != nil {
			t.Fatal(err)
		}
		writers = append(writers, writer{s, g.Token})
	}
	takeover()
	const scopes = 12
	// believed is what the writers think each scope's version is: it goes
	// wrong on purpose, so that batches race and lose.
	believed := make([]hoststore.ScopeVersion, scopes)
	for i := range 120 {
		if rng.IntN(15) == 0 {
			takeover()
		}
		w := writers[len(writers)-1]
		if len(writers) > 1 && rng.IntN(4) == 0 {
			w = writers[rng.IntN(len(writers)-1)] // a stale writer
		}
		var ups []hoststore.ScopeUpdate
		for _, k := range rng.Perm(scopes)[:1+rng.IntN(3)] {
			ref := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(fmt.Sprintf("s%02d", k))}
			v := believed[k]
			if v > 0 && rng.IntN(5) == 0 {
				v-- // a stale previous
			}
			u := hoststore.ScopeUpdate{Scope: ref, Next: v + 1, Append: [][]byte{[]byte(fmt.Sprintf("b%d", i))}}
			if v == 0 {
				u.Head = hoststore.Ptr([]byte(fmt.Sprintf("h%d", i)))
			} else {
				u.Previous = hoststore.Ptr(v)
				switch rng.IntN(8) {
				case 0:
					u = hoststore.ScopeUpdate{Scope: ref, Previous: hoststore.Ptr(v), Next: v + 1, Delete: true}
				case 1:
					u.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(rng.IntN(4)))
				case 2:
					u.DropBefore = hoststore.Ptr(hoststore.RowIndex(rng.IntN(6)))
				}
			}
			believed[k] = v + 1
			ups = append(ups, u)
		}
		b, err := hoststore.NewCommitBatch(hoststore.CommitID(fmt.Sprintf("c%03d-%d", rng.IntN(1000), i)), w.tok, ups)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.s.Commit(ctx, b); err != nil {
			t.Fatalf("Commit(%s): %v", b, err)
		}
	}
	for _, s := range []hoststore.HostStore{writers[0].s, writers[len(writers)-1].s} {
		page, err := s.ListHeads(ctx, hoststore.KindRecord, nil, 100)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[hoststore.ScopeName]hoststore.VersionedHead{}
		for _, h := range page.Heads {
			listed[h.Name] = h.Head
		}
		visible := 0
		for k := range scopes {
			ref := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(fmt.Sprintf("s%02d", k))}
			h, err := s.LoadHead(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			l, ok := listed[ref.Name]
			switch {
			case h == nil && ok:
				t.Errorf("%s: the listing shows version %d by %q, the load shows it absent", ref, l.Version, l.CommitID)
			case h != nil && !ok:
				t.Errorf("%s: the load shows version %d by %q, the listing does not list it", ref, h.Version, h.CommitID)
			case h != nil && (h.Version != l.Version || h.CommitID != l.CommitID || string(h.Head) != string(l.Head)):
				t.Errorf("%s: the load shows {%d %q %q}, the listing {%d %q %q}", ref, h.Version, h.CommitID, h.Head, l.Version, l.CommitID, l.Head)
			}
			if h != nil {
				visible++
			}
		}
		if visible == 0 {
			t.Errorf("no scope is visible: the test log resolves to nothing, so it checks nothing")
		}
		t.Logf("%d of %d scopes visible after %d takeovers", visible, scopes, len(writers)-1)
	}
}
