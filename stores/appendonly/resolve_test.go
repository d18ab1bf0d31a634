package appendonly

import (
	"fmt"
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

func TestResolveSameVersionLowestIDWinsEverywhere(t *testing.T) {
	var l logBuilder
	l.acquire(1)
	l.commit("setup", 1, true, up("a", 0, 0), up("b", 0, 0), up("c", 0, 0))
	l.commit("y", 1, true, up("a", 1, 1), up("c", 1, 0))
	l.commit("x", 1, true, up("a", 1, 1), up("b", 1, 0))
	want(t, l.resolve(), map[string]string{"a": "v2 by x", "b": "v2 by x", "c": "v1 by setup"})
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
	l.commit("m", 1, true, up("a", 1, 0), up("b", 0, 1)) // loses a to "l"
	l.commit("l", 1, true, up("a", 1, 0))
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
