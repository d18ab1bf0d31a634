package appendonly

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// logBuilder writes a log in memory, in the order a store would.
type logBuilder struct {
	seq      int64
	markers  []logMarker
	acquires []logAcquire
	updates  []logUpdate
}

func (l *logBuilder) acquire(tok uint64) {
	l.seq++
	l.acquires = append(l.acquires, logAcquire{seq: l.seq, token: tok})
}

// commit writes the updates of batch id and, when marked, its marker.
func (l *logBuilder) commit(id string, tok uint64, marked bool, ups ...logUpdate) {
	for _, u := range ups {
		u.id = hoststore.CommitID(id)
		l.updates = append(l.updates, u)
	}
	if marked {
		l.mark(id, tok)
	}
}

func (l *logBuilder) mark(id string, tok uint64) {
	l.seq++
	l.markers = append(l.markers, logMarker{seq: l.seq, id: hoststore.CommitID(id), token: tok})
}

func (l *logBuilder) resolve() map[hoststore.ScopeRef]*view {
	return resolve(l.markers, l.acquires, l.updates)
}

func ref(name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(name)}
}

// up is an update of scope name from prev (0 creates) with a head and n
// appended rows.
func up(name string, prev uint64, n uint64) logUpdate {
	return logUpdate{scope: ref(name), previous: prev, next: prev + 1, hasHead: true, appended: n}
}

// state renders a scope's view as "version by id" or "absent".
func state(views map[hoststore.ScopeRef]*view, name string) string {
	v := views[ref(name)]
	if v == nil || v.deleted {
		return "absent"
	}
	return fmt.Sprintf("v%d by %s", v.version, v.id)
}

func want(t *testing.T, views map[hoststore.ScopeRef]*view, expect map[string]string) {
	t.Helper()
	for name, w := range expect {
		if got := state(views, name); got != w {
			t.Errorf("scope %s: %s, want %s", name, got, w)
		}
	}
}

func TestResolveUnmarkedBatchIsInvisible(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("a", 1, true, up("x", 0, 1))
	l.commit("b", 1, false, up("x", 1, 1), up("y", 0, 0))
	want(t, l.resolve(), map[string]string{"x": "v1 by a", "y": "absent"})
}

func TestResolveFencesByMarkerOrder(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("a", 1, true, up("x", 0, 0))
	l.commit("b", 1, false, up("x", 1, 0)) // rows written before the acquire...
	l.acquire(2)
	l.mark("b", 1) // ...but the marker after it: fenced out
	l.commit("c", 1, true, up("y", 0, 0))
	l.commit("d", 2, true, up("z", 0, 0))
	want(t, l.resolve(), map[string]string{"x": "v1 by a", "y": "absent", "z": "v1 by d"})
}

func TestResolveKeepsTheFirstMarker(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("a", 1, true, up("x", 0, 2))
	l.acquire(2)
	l.commit("a", 1, true, up("x", 0, 2)) // a retry after the acquire: collapses into the first
	l.commit("b", 1, false, up("y", 0, 0))
	l.acquire(3)
	l.mark("b", 1) // first marker after acquire 2 and 3: fenced, whatever follows
	l.mark("b", 1)
	views := l.resolve()
	want(t, views, map[string]string{"x": "v1 by a", "y": "absent"})
	if v := views[ref("x")]; v.end != 2 || len(v.segments) != 1 {
		t.Errorf("a retried batch's updates do not collapse: end %d, segments %v", v.end, v.segments)
	}
}

func TestResolveSameVersionFirstCommitPointWinsEverywhere(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("setup", 1, true, up("a", 0, 0), up("b", 0, 0), up("c", 0, 0))
	l.commit("y", 1, true, up("a", 1, 1), up("c", 1, 0))
	// The same version of a, with a lower id, at a later commit point: y is
	// visible already and stays so; x loses, in b too.
	l.commit("x", 1, true, up("a", 1, 1), up("b", 1, 0))
	want(t, l.resolve(), map[string]string{"a": "v2 by y", "b": "v1 by setup", "c": "v2 by y"})
}

func TestResolveHigherTokenWinsAtOneVersion(t *testing.T) {
	var l logBuilder
	l.commit("setup", 1, true, up("a", 0, 0))
	l.commit("z-high", 2, true, up("a", 1, 0))
	// A lower token at the same version, with a lower id, committed later.
	// No acquire is in this log, so fencing does not hide it: the chain
	// rule alone must not let it win.
	l.commit("a-low", 1, true, up("a", 1, 0), up("b", 0, 0))
	want(t, l.resolve(), map[string]string{"a": "v2 by z-high", "b": "absent"})
}

func TestResolveALoserIsInvisibleInEveryScopeAndItsSuccessorsToo(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("setup", 1, true, up("a", 0, 0))
	l.commit("l", 1, true, up("a", 1, 0))
	l.commit("m", 1, true, up("a", 1, 0), up("b", 0, 1)) // loses a to "l", committed first
	l.commit("n", 1, true, up("b", 1, 1), up("c", 0, 0)) // built on m's b
	l.commit("o", 1, true, up("a", 2, 0))                // built on a's v2, whoever wrote it
	want(t, l.resolve(), map[string]string{"a": "v3 by o", "b": "absent", "c": "absent"})
}

func TestResolveDeleteEndsTheChain(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("a", 1, true, up("x", 0, 1))
	l.commit("b", 1, true, logUpdate{scope: ref("x"), previous: 1, next: 2, deleted: true})
	l.commit("c", 1, true, up("x", 0, 0), up("y", 0, 0)) // creates the deleted name again
	l.commit("d", 1, true, up("x", 2, 0))
	want(t, l.resolve(), map[string]string{"x": "absent", "y": "absent"})
}

func TestReplayRowsAndRemoval(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("1", 1, true, up("x", 0, 5))                                                                                       // rows 0..4
	l.commit("2", 1, true, logUpdate{scope: ref("x"), previous: 1, next: 2, truncAfter: hoststore.Ptr[uint64](3), appended: 2}) // 0..2 of 1, 3..4 of 2
	l.commit("3", 1, true, logUpdate{scope: ref("x"), previous: 2, next: 3, dropBefore: hoststore.Ptr[uint64](1)})              // from 1
	l.commit("4", 1, true, logUpdate{scope: ref("x"), previous: 3, next: 4, truncAfter: hoststore.Ptr[uint64](4), appended: 1}) // 4 of 4
	v := l.resolve()[ref("x")]
	if v.start != 1 || v.end != 5 || v.headID != "1" || v.id != "4" {
		t.Fatalf("view = start %d end %d head by %s version by %s, want 1 5 1 4", v.start, v.end, v.headID, v.id)
	}
	got := fmt.Sprint(v.rowsIn(1, 5))
	if w := fmt.Sprint([]piece{{"1", 0, 1, 3}, {"2", 3, 3, 4}, {"4", 4, 4, 5}}); got != w {
		t.Errorf("rowsIn(1, 5) = %s, want %s", got, w)
	}
	l.commit("5", 1, true, logUpdate{scope: ref("x"), previous: 4, next: 5, dropBefore: hoststore.Ptr[uint64](99)})
	v = l.resolve()[ref("x")]
	if v.start != 5 || v.end != 5 || len(v.rowsIn(0, 99)) != 0 {
		t.Errorf("a drop past the end: start %d end %d rows %v, want 5 5 none", v.start, v.end, v.rowsIn(0, 99))
	}
}

// TestResolveALoserIsNotRevived is the exploration's history 201 (seed 7)
// on the log: c1 names version 2 of e before e exists and loses, in e and
// in c; c3 builds on c1's c and loses too. c4 then creates version 2 of e:
// neither comes back. A resend of c1 is a new commit point, decided there:
// it lands (the versions match now); c3, not sent again, stays hidden.
func TestResolveALoserIsNotRevived(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("c1", 1, true, up("e", 2, 1), up("c", 0, 1))
	want(t, l.resolve(), map[string]string{"e": "absent", "c": "absent"})
	l.commit("c2", 1, true, up("e", 0, 1), up("f", 0, 1))
	l.commit("c3", 1, true, up("c", 1, 1))
	want(t, l.resolve(), map[string]string{"e": "v1 by c2", "c": "absent"})
	l.commit("c4", 1, true, up("e", 1, 1))
	want(t, l.resolve(), map[string]string{"e": "v2 by c4", "c": "absent", "f": "v1 by c2"})
	l.commit("c5", 1, true, up("c", 1, 0))
	want(t, l.resolve(), map[string]string{"e": "v2 by c4", "c": "absent"})
	l.mark("c1", 1) // the resend appends a marker only
	want(t, l.resolve(), map[string]string{"e": "v3 by c1", "c": "v1 by c1"})
	l.mark("c1", 1) // acts once
	l.commit("c6", 1, true, up("e", 3, 1))
	want(t, l.resolve(), map[string]string{"e": "v4 by c6", "c": "v1 by c1"})
	l.mark("c5", 1) // c5 named c's version 1 before it existed; now it does
	want(t, l.resolve(), map[string]string{"c": "v2 by c5"})
}

// TestResolveAResendAfterATakeoverIsFenced: a send that lost, sent again
// after an acquire of a higher token, stays hidden; a send that landed
// stays visible whatever follows.
func TestResolveAResendAfterATakeoverIsFenced(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("a", 1, true, up("x", 0, 0))
	l.commit("lost", 1, true, up("y", 1, 0))
	l.commit("b", 1, true, up("y", 0, 0))
	l.acquire(2)
	l.mark("lost", 1)
	l.mark("a", 1)
	want(t, l.resolve(), map[string]string{"x": "v1 by a", "y": "v1 by b"})
}

// TestResolveAHigherTokenDoesNotPushOutAnEarlierBatch: a batch whose commit
// point came before an acquire stays visible (obligation 5), so a batch of
// the new holder at the same version loses; a batch of the old holder after
// the acquire is fenced out.
func TestResolveAHigherTokenDoesNotPushOutAnEarlierBatch(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("setup", 1, true, up("a", 0, 0))
	l.commit("z-low", 1, true, up("a", 1, 0))
	l.acquire(2)
	l.commit("a-high", 2, true, up("a", 1, 0), up("b", 0, 0))
	l.commit("stale", 1, true, up("a", 2, 0), up("c", 0, 0))
	want(t, l.resolve(), map[string]string{"a": "v2 by z-low", "b": "absent", "c": "absent"})
}

// TestResolveIsStableOverPrefixes builds random logs full of races, stale
// tokens, deletes and resends, and resolves the log up to each commit
// point: a batch visible once stays visible, and a hidden batch turns
// visible only at a commit point of its own (a resend), never because of
// another batch. So what one load shows, every later load shows too.
func TestResolveIsStableOverPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5812348206992313291, 7))
	visible, hidden := 0, 0
	for run := range 200 {
		var l logBuilder
		tok := uint64(1)
		l.acquire(tok)
		believed := map[string]uint64{}
		tokens := map[string]uint64{}
		for i := range 40 {
			if rng.IntN(10) == 0 {
				tok++
				l.acquire(tok)
			}
			bt := tok
			if tok > 1 && rng.IntN(5) == 0 {
				bt = tok - 1 // a stale writer
			}
			var ups []logUpdate
			for _, k := range rng.Perm(5)[:1+rng.IntN(2)] {
				name := fmt.Sprintf("s%d", k)
				v := believed[name]
				if rng.IntN(2) == 0 { // a writer that loaded the scope
					v = 0
					if w := l.resolve()[ref(name)]; w != nil {
						v = uint64(w.version)
					}
				}
				if rng.IntN(4) == 0 {
					v = uint64(rng.IntN(int(v) + 2)) // a wrong previous, maybe ahead
				}
				u := up(name, v, uint64(rng.IntN(3)))
				if v > 0 && rng.IntN(8) == 0 {
					u = logUpdate{scope: ref(name), previous: v, next: v + 1, deleted: true}
				}
				believed[name] = v + 1
				ups = append(ups, u)
			}
			id := fmt.Sprintf("b%02d", i)
			if i > 0 && rng.IntN(8) == 0 {
				id = fmt.Sprintf("b%02d", rng.IntN(i)) // a resend of an earlier batch
				if _, ok := tokens[id]; !ok {
					continue
				}
				bt, ups = tokens[id], nil
				for _, u := range l.updates {
					if string(u.id) == id {
						ups = append(ups, u)
					}
				}
			}
			tokens[id] = bt
			l.commit(id, bt, rng.IntN(10) != 0, ups...)
		}
		full := visibleIDs(l)
		for _, m := range l.markers {
			if full[m.id] {
				visible++
			} else {
				hidden++
			}
		}
		var before map[hoststore.CommitID]bool
		for k, m := range l.markers {
			prefix := logBuilder{markers: l.markers[:k+1], acquires: l.acquires, updates: l.updates}
			now := visibleIDs(prefix)
			for id := range before {
				if !now[id] {
					t.Fatalf("run %d: batch %s is visible in the log before seq %d and hidden with it", run, id, m.seq)
				}
			}
			for id := range now {
				if !before[id] && id != m.id {
					t.Fatalf("run %d: batch %s turns visible at seq %d, a marker of %s", run, id, m.seq, m.id)
				}
			}
			before = now
		}
		if len(before) != len(full) {
			t.Fatalf("run %d: the last prefix and the whole log differ", run)
		}
	}
	if visible == 0 || hidden == 0 {
		t.Fatalf("%d markers of visible batches, %d of hidden ones: the logs check nothing", visible, hidden)
	}
	t.Logf("%d markers of visible batches, %d of hidden ones", visible, hidden)
}

// visibleIDs lists the batches the log resolves visible: those on some
// scope's chain.
func visibleIDs(l logBuilder) map[hoststore.CommitID]bool {
	out := map[hoststore.CommitID]bool{}
	for _, chain := range resolveChains(sends(l.markers, l.acquires, l.updates)) {
		for _, b := range chain {
			out[b.id] = true
		}
	}
	return out
}
