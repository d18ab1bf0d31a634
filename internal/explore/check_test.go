package explore

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/obligation"
	"github.com/conform-spi/conform/reports"
)

// Synthetic histories, built by hand: each test states a history the
// contract allows or forbids, and what Check must say of it.

var (
	sa = hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}
	sb = hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "b"}
)

// hist builds a history. Events are added with explicit [call, return]
// intervals (return 0: never returned).
type hist struct{ h History }

func (b *hist) add(proc int, call, ret int64, e Event) *hist {
	e.ID, e.Proc, e.Handle, e.Call, e.Return = len(b.h.Events), proc, proc+1, call, ret
	b.h.Events = append(b.h.Events, e)
	return b
}

func acq(mode string, tok hoststore.FenceToken) Event {
	return Event{Op: OpAcquire, Mode: mode, Grant: &hoststore.FenceGrant{Token: tok}}
}

func commit(id string, tok hoststore.FenceToken, ups ...hoststore.ScopeUpdate) Event {
	return Event{Op: OpCommit, Batch: &Batch{ID: hoststore.CommitID(id), Token: tok, Updates: ups}}
}

func lost(e Event) Event { e.Lost = true; return e }

func answer(e Event, k hoststore.ErrorKind) Event { e.Err = k; return e }

func create(s hoststore.ScopeRef, head string, rows ...string) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: s, Next: 1, Head: hoststore.Ptr([]byte(head)), Append: bs(rows)}
}

func update(s hoststore.ScopeRef, prev hoststore.ScopeVersion, head string, rows ...string) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: s, Previous: hoststore.Ptr(prev), Next: prev + 1, Head: hoststore.Ptr([]byte(head)), Append: bs(rows)}
}

func bs(rows []string) [][]byte {
	var out [][]byte
	for _, r := range rows {
		out = append(out, []byte(r))
	}
	return out
}

func load(s hoststore.ScopeRef, v hoststore.ScopeVersion, id, head string) Event {
	e := Event{Op: OpLoad, Scope: hoststore.Ptr(s)}
	if v > 0 {
		e.Head = &hoststore.VersionedHead{Version: v, CommitID: hoststore.CommitID(id), Head: []byte(head)}
	}
	return e
}

func read(s hoststore.ScopeRef, from hoststore.RowIndex, limit int, rows ...string) Event {
	e := Event{Op: OpRead, Scope: hoststore.Ptr(s), From: from, Limit: limit}
	for i, r := range rows {
		e.Rows = append(e.Rows, hoststore.Row{Index: from + hoststore.RowIndex(i), Data: []byte(r)})
	}
	return e
}

func list(kind hoststore.ScopeKind, limit int, next *hoststore.ScopeName, heads ...hoststore.NamedHead) Event {
	return Event{Op: OpList, Kind: kind, Limit: limit, Page: &hoststore.HeadPage{Heads: heads, Next: next}}
}

func named(name string, v hoststore.ScopeVersion, id, head string) hoststore.NamedHead {
	return hoststore.NamedHead{Name: hoststore.ScopeName(name), Head: hoststore.VersionedHead{Version: v, CommitID: hoststore.CommitID(id), Head: []byte(head)}}
}

// writer is the usual start: process 0 holds token 1 and created a and b
// in one batch c0 (a with rows r0, r1).
func writer() *hist {
	b := &hist{}
	return b.add(0, 1, 2, acq("Exclusive", 1)).
		add(0, 3, 4, commit("c0", 1, create(sa, "a0", "r0", "r1"), create(sb, "b0")))
}

func expectOK(t *testing.T, b *hist) {
	t.Helper()
	v := Check(&b.h, CheckConfig{})
	if !v.OK() {
		t.Fatalf("want the history to pass, got %s %v\n%s", v.Result, v.Findings, b.h.Text())
	}
}

func expectFail(t *testing.T, b *hist, ob reports.ObligationID, event int) {
	t.Helper()
	v := Check(&b.h, CheckConfig{})
	if v.OK() || len(v.Findings) == 0 {
		t.Fatalf("want a finding of %s, the history passed (%s)\n%s", ob, v.Result, b.h.Text())
	}
	f := v.Findings[0]
	if f.Obligation != ob || event >= 0 && f.Event != event {
		t.Fatalf("want %s at #%d first, got %v\n%s", ob, event, v.Findings, b.h.Text())
	}
}

func TestCheckPassesLinearizableConcurrentHistory(t *testing.T) {
	b := &hist{}
	b.add(0, 1, 2, acq("Exclusive", 1)).
		add(0, 3, 12, commit("c1", 1, create(sa, "a1", "x", "y"), create(sb, "b1"))).
		add(1, 4, 5, load(sa, 0, "", "")).     // before the commit point
		add(1, 6, 7, load(sa, 1, "c1", "a1")). // after it, while the commit is still running
		add(2, 5, 13, load(sb, 0, "", "")).    // concurrent: may come before
		add(1, 14, 15, load(sb, 1, "c1", "b1")).
		add(2, 14, 16, read(sa, 0, 1, "x")).
		add(2, 17, 18, read(sa, 1, 5, "y")).
		add(1, 16, 19, list(hoststore.KindSession, 5, nil, named("a", 1, "c1", "a1"), named("b", 1, "c1", "b1"))).
		add(1, 20, 21, Event{Op: OpAcquire, Mode: "Exclusive", Err: hoststore.ErrKindHeld, Held: &hoststore.HeldError{Holder: 1, Remaining: 1}}).
		add(0, 20, 22, Event{Op: OpRenew, Token: 1}).
		add(3, 23, 24, Event{Op: OpLapse}).
		add(1, 25, 26, acq("Exclusive", 2)).
		add(0, 27, 28, Event{Op: OpRenew, Token: 1, Err: hoststore.ErrKindFencedOut, Fence: &hoststore.FencedOutError{Current: 2}})
	expectOK(t, b)
}

func TestCheckOrdersConcurrentClashByRealTime(t *testing.T) {
	// Two writers race for version 1 of a: one wins, the other is refused,
	// and both answers fit one order.
	b := writer()
	b.add(0, 10, 20, commit("x", 1, update(sa, 1, "ax"))).
		add(1, 11, 19, answer(commit("y", 1, update(sa, 1, "ay")), hoststore.ErrKindConflict)).
		add(2, 21, 22, load(sa, 2, "x", "ax"))
	expectOK(t, b)
	// Real time forbids the same answers when y finished before x began:
	// then y must have seen version 1.
	b = writer()
	b.add(1, 10, 11, answer(commit("y", 1, update(sa, 1, "ay")), hoststore.ErrKindConflict)).
		add(0, 12, 13, commit("x", 1, update(sa, 1, "ax")))
	expectFail(t, b, obligation.ObVersionChain, 2)
}

func TestCheckFindsTornBatch(t *testing.T) {
	b := writer()
	b.add(0, 10, 0, lost(commit("c1", 1, update(sa, 1, "a2"), update(sb, 1, "b2")))).
		add(1, 11, 12, load(sa, 2, "c1", "a2")).
		add(1, 13, 14, load(sb, 1, "c0", "b0"))
	expectFail(t, b, obligation.ObAllOrNothing, 4)
}

func TestCheckFindsLostAcknowledgedCommit(t *testing.T) {
	b := writer()
	b.add(0, 10, 11, commit("c1", 1, update(sa, 1, "a2", "r2"))).
		add(0, 12, 13, Event{Op: OpKill}).
		add(1, 14, 15, load(sa, 1, "c0", "a0"))
	expectFail(t, b, obligation.ObDurable, 4)
	// The rows tell the same story.
	b = writer()
	b.add(0, 10, 11, commit("c1", 1, update(sa, 1, "a2", "r2"))).
		add(1, 14, 15, read(sa, 0, 5, "r0", "r1"))
	expectFail(t, b, obligation.ObDurable, 3)
}

func TestCheckFindsStaleTokenAfterTakeover(t *testing.T) {
	b := writer()
	b.add(1, 10, 11, Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2, SupersededLease: 5}}).
		add(0, 12, 13, commit("stale", 1, update(sa, 1, "stale"))).
		add(1, 14, 15, load(sa, 2, "stale", "stale"))
	expectFail(t, b, obligation.ObFencing, 4)
}

func TestCheckAcceptsFencingAndClashesMetAtLoad(t *testing.T) {
	// An append-only store answers Ok to a stale batch and to a batch for
	// a version already taken, and hides both at load.
	b := writer()
	b.add(1, 10, 11, Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2, SupersededLease: 5}}).
		add(0, 12, 13, commit("stale", 1, update(sa, 1, "stale"))).
		add(1, 14, 15, commit("win", 2, update(sa, 1, "win"))).
		add(1, 16, 17, commit("lose", 2, update(sa, 1, "lose"), update(sb, 1, "lose"))).
		add(2, 18, 19, load(sa, 2, "win", "win")).
		add(2, 20, 21, load(sb, 1, "c0", "b0"))
	expectOK(t, b)
	// At commit is fine too.
	b = writer()
	b.add(1, 10, 11, Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2, SupersededLease: 5}}).
		add(0, 12, 13, answer(commit("stale", 1, update(sa, 1, "stale")), hoststore.ErrKindFencedOut)).
		add(2, 18, 19, load(sa, 1, "c0", "a0"))
	expectOK(t, b)
}

func TestCheckSettlesUnknownOutcomes(t *testing.T) {
	// Killed in flight; a later load shows it landed.
	b := writer()
	b.add(0, 10, 0, lost(commit("c1", 1, update(sa, 1, "a2"), update(sb, 1, "b2")))).
		add(1, 20, 21, load(sa, 0+2, "c1", "a2")).
		add(1, 22, 23, load(sb, 2, "c1", "b2"))
	expectOK(t, b)
	// Indeterminate; it never landed, and the writer goes on from v1.
	b = writer()
	b.add(0, 10, 11, answer(commit("c1", 1, update(sa, 1, "a2")), hoststore.ErrKindIndeterminate)).
		add(1, 20, 21, load(sa, 1, "c0", "a0")).
		add(1, 22, 23, commit("c2", 1, update(sa, 1, "a2'"))).
		add(1, 24, 25, load(sa, 2, "c2", "a2'"))
	expectOK(t, b)
	// Lost, then resent: the resend settles it, and it shows once.
	b = writer()
	b.add(0, 10, 0, lost(commit("c1", 1, update(sa, 1, "a2", "r2")))).
		add(1, 20, 21, commit("c1", 1, update(sa, 1, "a2", "r2"))).
		add(1, 22, 23, read(sa, 0, 9, "r0", "r1", "r2")).
		add(1, 24, 25, load(sa, 2, "c1", "a2"))
	expectOK(t, b)
	// But an unknown commit cannot land before it was sent.
	b = writer()
	b.add(1, 8, 9, load(sa, 2, "c1", "a2")).
		add(0, 10, 0, lost(commit("c1", 1, update(sa, 1, "a2"))))
	expectFail(t, b, obligation.ObOperations, 2)
}

func TestCheckFindsCommitTakingEffectTwice(t *testing.T) {
	b := writer()
	b.add(0, 10, 11, commit("c1", 1, update(sa, 1, "a2", "r2"))).
		add(1, 12, 13, commit("c1", 1, update(sa, 1, "a2", "r2"))).
		add(1, 14, 15, load(sa, 3, "c1", "a2"))
	expectFail(t, b, obligation.ObRetry, 4)
}

func TestCheckFindsVersionClashShowing(t *testing.T) {
	b := writer()
	b.add(0, 10, 11, commit("x", 1, update(sa, 1, "ax"))).
		add(0, 12, 13, commit("y", 1, update(sa, 1, "ay"), update(sb, 1, "by"))).
		add(1, 14, 15, load(sb, 2, "y", "by"))
	expectFail(t, b, obligation.ObVersionChain, 4)
}

func TestCheckFindsReadOverLimitAndOutOfOrder(t *testing.T) {
	b := writer()
	b.add(1, 10, 11, read(sa, 0, 1, "r0", "r1"))
	expectFail(t, b, obligation.ObOperations, 2)

	b = writer()
	b.add(1, 10, 11, read(sa, 0, 5, "r1", "r0"))
	expectFail(t, b, obligation.ObOrder, 2)

	b = writer()
	e := read(sa, 0, 5, "r0", "r1")
	e.Rows[1].Index = 5
	b.add(1, 10, 11, e)
	expectFail(t, b, obligation.ObOrder, 2)

	// A read that stops short of its limit before the end.
	b = writer()
	b.add(1, 10, 11, read(sa, 0, 5, "r0"))
	expectFail(t, b, obligation.ObOperations, 2)
}

func TestCheckFindsReadBelowStartAndLateRemoval(t *testing.T) {
	drop := update(sa, 1, "a2")
	drop.DropBefore = hoststore.Ptr(hoststore.RowIndex(1))
	b := writer()
	b.add(0, 10, 11, commit("c1", 1, drop)).
		add(1, 12, 13, read(sa, 0, 5, "r0", "r1"))
	expectFail(t, b, obligation.ObOperations, 3)

	trunc := update(sa, 1, "a2")
	trunc.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(1))
	b = writer()
	b.add(0, 10, 11, commit("c1", 1, trunc)).
		add(1, 12, 13, read(sa, 0, 5, "r0", "r1"))
	expectFail(t, b, obligation.ObRemoval, 3)
}

func TestCheckFindsUnavailableCommitThatLanded(t *testing.T) {
	b := writer()
	b.add(0, 10, 11, answer(commit("c1", 1, update(sa, 1, "a2")), hoststore.ErrKindUnavailable)).
		add(1, 12, 13, load(sa, 2, "c1", "a2"))
	expectFail(t, b, obligation.ObErrors, 3)
}

func TestCheckFindsFenceBreaches(t *testing.T) {
	b := writer()
	b.add(1, 10, 11, acq("Exclusive", 2)) // the holder of 1 is live
	expectFail(t, b, obligation.ObFenceLease, 2)

	b = writer()
	b.add(2, 8, 9, Event{Op: OpLapse}).
		add(1, 10, 11, Event{Op: OpAcquire, Mode: "Exclusive", Err: hoststore.ErrKindHeld, Held: &hoststore.HeldError{Holder: 1, Remaining: 1}})
	expectFail(t, b, obligation.ObFenceLease, 3)

	b = writer()
	b.add(1, 10, 11, Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2, SupersededLease: 5}}).
		add(0, 12, 13, Event{Op: OpRenew, Token: 1})
	expectFail(t, b, obligation.ObFenceLease, 3)

	// A token that does not rise.
	b = writer()
	b.add(1, 10, 11, Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 1, SupersededLease: 5}})
	expectFail(t, b, obligation.ObFenceLease, 2)
}

func TestCheckFindsListingBreaches(t *testing.T) {
	// b is visible but the page passes over it.
	b := writer()
	b.add(1, 10, 11, list(hoststore.KindSession, 5, nil, named("a", 1, "c0", "a0")))
	expectFail(t, b, obligation.ObListing, 2)
	// a deleted scope still listed.
	b = writer()
	b.add(0, 10, 11, commit("c1", 1, hoststore.ScopeUpdate{Scope: sb, Previous: hoststore.Ptr(hoststore.ScopeVersion(1)), Next: 2, Delete: true})).
		add(1, 12, 13, list(hoststore.KindSession, 5, nil, named("a", 1, "c0", "a0"), named("b", 1, "c0", "b0")))
	expectFail(t, b, obligation.ObListing, 3)
	// Out of byte order.
	b = writer()
	b.add(1, 10, 11, list(hoststore.KindSession, 5, nil, named("b", 1, "c0", "b0"), named("a", 1, "c0", "a0")))
	expectFail(t, b, obligation.ObListing, 2)
	// Paging: a page of one with a cursor, then the rest.
	b = writer()
	next := hoststore.ScopeName("a")
	e := list(hoststore.KindSession, 1, &next, named("a", 1, "c0", "a0"))
	e2 := list(hoststore.KindSession, 1, nil, named("b", 1, "c0", "b0"))
	e2.After = &next
	b.add(1, 10, 11, e).add(1, 12, 13, e2)
	expectOK(t, b)
}

func TestCheckFindsErrorsOutsideTheContract(t *testing.T) {
	b := writer()
	b.add(1, 10, 11, answer(load(sa, 0, "", ""), hoststore.ErrKindOther))
	expectFail(t, b, obligation.ObErrors, 2)
	b = writer()
	b.add(1, 10, 0, load(sa, 1, "c0", "a0"))
	expectFail(t, b, obligation.ObErrors, 2)
}

// TestCheckNamesTheRuleThatExplains: a batch sent with a superseded token
// was acknowledged, and a later create of its scope was refused with a
// Conflict that only that batch explains. No order explains the history
// under the contract; one does once the fencing rule is set aside, so the
// finding names ob:5, whatever the first diagnosis said.
func TestCheckNamesTheRuleThatExplains(t *testing.T) {
	takeover := Event{Op: OpAcquire, Mode: "Takeover", Grant: &hoststore.FenceGrant{Token: 2, SupersededLease: 1}}
	b := &hist{}
	b.add(0, 1, 2, acq("Exclusive", 1)).
		add(1, 3, 4, takeover).
		add(0, 5, 6, commit("c7", 1, create(sa, "a7"))).
		add(1, 7, 8, answer(commit("c10", 2, create(sa, "a10")), hoststore.ErrKindConflict))
	v := Check(&b.h, CheckConfig{})
	if len(v.Findings) != 1 || v.Findings[0].Obligation != obligation.ObFencing || v.Findings[0].Event != 3 {
		t.Fatalf("want one ob:5 finding at #3, got %v", v.Findings)
	}
	j := newJudge(&b.h)
	_, info := porcupine.CheckOperationsVerbose(j.porcupineModel(), j.operations(), 0)
	if d := j.diagnose(info.PartialLinearizations()); d.Obligation == obligation.ObFencing {
		t.Fatalf("the first diagnosis already names ob:5 (%v): the test no longer shows the naming", d)
	}
}
