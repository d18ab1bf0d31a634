package postgres_test

import (
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// TestRetryRacesFirstSend sends one batch from two handles at once: the
// first is held before its commit point while the second runs. Whatever
// the race, both return nil and the batch acts once. Creating scopes, the
// second lands first and the first meets a unique violation, reruns and
// finds its commit id landed; updating existing ones, the second waits for
// the first's row locks and then finds the commit id landed.
func TestRetryRacesFirstSend(t *testing.T) {
	for _, existing := range []bool{false, true} {
		name := map[bool]string{false: "creating", true: "updating"}[existing]
		t.Run(name, func(t *testing.T) {
			f := newRealm(t)
			w, tok := writer(t, f)
			a, b := scope(hoststore.KindSession, "a"), scope(hoststore.KindMob, "b")
			ups := []hoststore.ScopeUpdate{create(a, "a1", "r0", "r1"), create(b, "b1", "s0")}
			v := hoststore.ScopeVersion(1)
			if existing {
				commit(t, w, batch(t, id("setup"), tok, ups...))
				ups = []hoststore.ScopeUpdate{next(a, 1, "a2", "r2"), next(b, 1, "b2")}
				v = 2
			}
			bt := batch(t, id("twice"), tok, ups...)
			h, first := hold(t, w, bt, instore.CommitBeforePoint)
			q := open(t, f)
			second := make(chan error, 1)
			go func() { second <- q.Commit(t.Context(), bt) }()
			if !existing {
				if err := <-second; err != nil {
					t.Fatalf("the second send while the first is held: %v", err)
				}
			} else {
				select {
				case err := <-second:
					t.Fatalf("the second send answered %v while the first held the scope locks", err)
				default:
				}
			}
			h.Release()
			if err := <-first; err != nil {
				t.Errorf("the first send answered %v, want nil", err)
			}
			if existing {
				if err := <-second; err != nil {
					t.Errorf("the second send answered %v, want nil", err)
				}
			}
			r := open(t, f)
			if existing {
				wantHead(t, r, a, v, bt.CommitID(), "a2")
				wantHead(t, r, b, v, bt.CommitID(), "b2")
				wantRows(t, r, a, "r0", "r1", "r2")
			} else {
				wantHead(t, r, a, v, bt.CommitID(), "a1")
				wantHead(t, r, b, v, bt.CommitID(), "b1")
				wantRows(t, r, a, "r0", "r1")
			}
			wantRows(t, r, b, "s0")
			commit(t, r, bt) // a third send, later, from a new handle
			wantRows(t, r, b, "s0")
		})
	}
}
