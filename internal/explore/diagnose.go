package explore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/obligation"
	"github.com/conform-spi/conform/reports"
)

// diagnose names the first operation no linearization explains and the
// obligation it breaks, given porcupine's longest partial linearizations
// (one partition).
func (j *judge) diagnose(partials [][][]int) Finding {
	covered := make([]bool, len(j.ops))
	var longest []int
	for _, part := range partials {
		// porcupine hands the partial linearizations over in map order:
		// sorted, the longest is the same one on every check.
		slices.SortFunc(part, slices.Compare)
		for _, lin := range part {
			for _, i := range lin {
				covered[i] = true
			}
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	in := make([]bool, len(j.ops))
	for _, i := range longest {
		in[i] = true
	}
	pick := func(skip []bool) int {
		best := -1
		for i := range j.ops {
			if skip[i] {
				continue
			}
			if best < 0 || retOf(&j.ops[i]) < retOf(&j.ops[best]) {
				best = i
			}
		}
		return best
	}
	o := pick(covered)
	if o < 0 {
		o = pick(in)
	}
	if o < 0 {
		return Finding{Obligation: obligation.ObOperations, Event: -1, Message: "no linearization explains the history"}
	}
	op := &j.ops[o]
	// The state the operation is judged against: the longest partial
	// linearization, up to the first operation that began after it ended.
	s := j.initial()
	for _, i := range longest {
		if j.ops[i].ev.Call > retOf(op) {
			break
		}
		if ok, n := j.step(s, &j.ops[i]); ok {
			s = n
		}
	}
	f := j.classify(s, op)
	f.Event = op.ev.ID
	return f
}

func retOf(op *lop) int64 {
	if op.ev.Unknown() || !op.ev.Returned() {
		return math.MaxInt64
	}
	return op.ev.Return
}

// classify names the obligation op breaks, judged against s, the state
// of the realm as the longest linearization leaves it.
func (j *judge) classify(s *state, op *lop) Finding {
	e := op.ev
	switch e.Op {
	case OpAcquire, OpRenew, OpLapse:
		return Finding{Obligation: obligation.ObFenceLease, Message: fmt.Sprintf("%s answered what no order of the fence operations explains", e.Op),
			Want: fenceText(s), Got: e.answerText()}
	case OpCommit:
		return j.classifyCommit(s, e)
	}
	var (
		scope    hoststore.ScopeRef
		got      *hoststore.VersionedHead
		gotRows  []hoststore.Row
		wantRows []hoststore.Row
	)
	switch {
	case op.kind == obsListEntry || op.kind == obsListGone:
		scope, got = hoststore.ScopeRef{Kind: e.Kind, Name: op.name}, op.head
	case e.Op == OpLoad:
		scope, got = *e.Scope, e.Head
	case e.Op == OpRead:
		scope, gotRows = *e.Scope, e.Rows
		var err error
		wantRows, err = s.m.ReadRows(scope, e.From, e.Limit)
		if hoststore.KindOf(err) == hoststore.ErrKindInvalid && e.Err == hoststore.ErrKindNone {
			return Finding{Obligation: obligation.ObOperations, Message: fmt.Sprintf("ReadRows of %s from %d, below its first visible row, was not refused", scopeText(&scope), e.From),
				Want: "Invalid", Got: RowsText(gotRows)}
		}
		if sameIndicesOtherOrder(wantRows, gotRows) || j.misplaced(s, scope, gotRows) {
			return Finding{Obligation: obligation.ObOrder, Message: fmt.Sprintf("ReadRows of %s returns the right rows out of commit order", scopeText(&scope)),
				Want: RowsText(wantRows), Got: RowsText(gotRows)}
		}
	}
	want := s.m.Head(scope)
	// A batch the observation shows that the realm does not hold.
	for _, id := range j.evidence(got, gotRows) {
		if f, ok := j.classifyShown(s, e, scope, id, got); ok {
			return f
		}
	}
	if op.kind != obsEvent {
		if id, ok := j.lostAtLoad(scope, want); ok {
			return Finding{Obligation: obligation.ObDurable, Message: fmt.Sprintf("%s does not show batch %s, which Commit acknowledged, to a listing nor to a later load", scopeText(&scope), id),
				Want: HeadText(want), Got: HeadText(got)}
		}
		return Finding{Obligation: obligation.ObListing, Message: fmt.Sprintf("ListHeads of %s shows %s differently from a load", e.Kind, scopeText(&scope)),
			Want: HeadText(want), Got: HeadText(got)}
	}
	if e.Op == OpRead {
		for _, r := range gotRows {
			if !slices.ContainsFunc(wantRows, func(w hoststore.Row) bool { return w.Index == r.Index && bytes.Equal(w.Data, r.Data) }) {
				if id, ok := j.owners[string(r.Data)]; ok && s.has(j.batches[id].idx) {
					return Finding{Obligation: obligation.ObRemoval, Message: fmt.Sprintf("ReadRows of %s returns row %d, which a landed batch removed or never put there", scopeText(&scope), r.Index),
						Want: RowsText(wantRows), Got: RowsText(gotRows)}
				}
			}
		}
	}
	// What the realm holds that the observation misses.
	for _, id := range j.evidence(want, wantRows) {
		bi := j.batches[id]
		if bi != nil && acked(bi) && !slices.Contains(j.evidence(got, gotRows), id) {
			return Finding{Obligation: obligation.ObDurable, Message: fmt.Sprintf("%s does not show batch %s, which Commit acknowledged", scopeText(&scope), id),
				Want: HeadText(want) + " " + RowsText(wantRows), Got: HeadText(got) + " " + RowsText(gotRows)}
		}
	}
	if e.Op == OpRead {
		return Finding{Obligation: obligation.ObOperations, Message: fmt.Sprintf("ReadRows of %s from %d limit %d returns rows no order of the commits explains", scopeText(&scope), e.From, e.Limit),
			Want: RowsText(wantRows), Got: RowsText(gotRows)}
	}
	return Finding{Obligation: obligation.ObOperations, Message: fmt.Sprintf("LoadHead of %s returns a head no order of the commits explains", scopeText(&scope)),
		Want: HeadText(want), Got: HeadText(got)}
}

// classifyShown explains why a batch id that op shows should not show:
// it reports ok=false when it finds nothing to say about it.
func (j *judge) classifyShown(s *state, e *Event, scope hoststore.ScopeRef, id hoststore.CommitID, got *hoststore.VersionedHead) (Finding, bool) {
	bi := j.batches[id]
	if bi == nil {
		return Finding{Obligation: obligation.ObOperations, Message: fmt.Sprintf("%s shows commit id %q, which no batch of the history carries", scopeText(&scope), id)}, true
	}
	if s.has(bi.idx) {
		u, ok := bi.b.Update(scope)
		if got != nil && got.CommitID == id && (!ok || got.Version != u.Next) {
			ob := obligation.ObOperations
			if len(bi.sends) > 1 {
				ob = obligation.ObRetry
			}
			return Finding{Obligation: ob, Message: fmt.Sprintf("%s shows batch %s at version %d, not the version it wrote (sent %d times)", scopeText(&scope), id, got.Version, len(bi.sends)),
				Want: fmt.Sprintf("v%d", u.Next), Got: HeadText(got)}, true
		}
		return Finding{}, false
	}
	if r, ok := refusedEverywhere(bi); ok {
		ob := map[hoststore.ErrorKind]reports.ObligationID{hoststore.ErrKindUnavailable: obligation.ObErrors, hoststore.ErrKindFencedOut: obligation.ObFencing,
			hoststore.ErrKindConflict: obligation.ObVersionChain}[r]
		if ob == "" {
			ob = obligation.ObOperations
		}
		return Finding{Obligation: ob, Message: fmt.Sprintf("batch %s was refused (%s), yet %s shows it", id, r, scopeText(&scope)),
			Want: "a refused batch applies nothing", Got: HeadText(got)}, true
	}
	if sentAfter(bi, e) {
		return Finding{Obligation: obligation.ObOperations, Message: fmt.Sprintf("%s shows batch %s before any send of it began", scopeText(&scope), id),
			Want: "only batches sent before the observation ended", Got: HeadText(got)}, true
	}
	if a := j.supersededBefore(bi); a != nil {
		return Finding{Obligation: obligation.ObFencing, Message: fmt.Sprintf("batch %s (token %d), sent after token %d was acquired (#%d), shows in %s", id, bi.b.Token, a.Grant.Token, a.ID, scopeText(&scope)),
			Want: "a stale batch never shows", Got: HeadText(got)}, true
	}
	if bi.b.Token < s.token {
		return Finding{Obligation: obligation.ObFencing, Message: fmt.Sprintf("batch %s (token %d) shows in %s, though token %d was acquired before any order lets it land", id, bi.b.Token, scopeText(&scope), s.token),
			Want: "a stale batch never shows", Got: HeadText(got)}, true
	}
	var ce *hoststore.ConflictError
	if errors.As(s.m.Check(bi.built), &ce) {
		return Finding{Obligation: obligation.ObVersionChain, Message: fmt.Sprintf("batch %s shows in %s, though its update of %s names a version the scope does not have", id, scopeText(&scope), scopeText(&ce.Scope)),
			Want: "one version chain: the batch refused or hidden in every scope", Got: HeadText(got)}, true
	}
	return Finding{}, false
}

func (j *judge) classifyCommit(s *state, e *Event) Finding {
	bi := j.batches[e.Batch.ID]
	if c := e.Clash; c != nil && c.Current != nil {
		for _, o := range j.order {
			u, ok := o.b.Update(c.Scope)
			if ok && u.Next == *c.Current && len(o.b.Updates) > 1 && !s.has(o.idx) && !acked(o) {
				return Finding{Obligation: obligation.ObAllOrNothing, Message: fmt.Sprintf("Commit of %s was refused because %s is at version %d, which only batch %s writes; no order in which %s lands wholly or not at all explains the history", bi.b.ID, scopeText(&c.Scope), *c.Current, o.b.ID, o.b.ID),
					Want: "the batch in all its scopes or in none", Got: e.answerText()}
			}
		}
	}
	want := "Ok"
	if err := s.m.Check(bi.built); err != nil {
		want = string(hoststore.KindOf(err))
	}
	if bi.b.Token < s.token {
		want = "FencedOut"
	}
	ob := map[hoststore.ErrorKind]reports.ObligationID{hoststore.ErrKindConflict: obligation.ObVersionChain, hoststore.ErrKindFencedOut: obligation.ObFencing}[e.Err]
	if ob == "" {
		ob = obligation.ObOperations
	}
	return Finding{Obligation: ob, Message: fmt.Sprintf("Commit of %s was refused, though no order of the operations makes it refusable", bi.b.ID), Want: want, Got: e.answerText()}
}

// evidence returns the commit ids an observation shows: the head's, and
// the batches that appended its rows.
func (j *judge) evidence(h *hoststore.VersionedHead, rows []hoststore.Row) []hoststore.CommitID {
	var out []hoststore.CommitID
	if h != nil {
		out = append(out, h.CommitID)
	}
	for _, r := range rows {
		if id, ok := j.owners[string(r.Data)]; ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// acked reports whether some send of the batch returned Ok.
func acked(bi *batchInfo) bool {
	for _, e := range bi.sends {
		if !e.Unknown() && e.Returned() && e.Err == hoststore.ErrKindNone {
			return true
		}
	}
	return false
}

// refusedEverywhere returns the refusal every send of the batch got, when
// each was refused with a kind that says nothing was applied.
func refusedEverywhere(bi *batchInfo) (hoststore.ErrorKind, bool) {
	var k hoststore.ErrorKind
	for _, e := range bi.sends {
		if e.NotSent {
			continue
		}
		switch {
		case e.Unknown() || !e.Returned():
			return "", false
		case e.Err == hoststore.ErrKindUnavailable, e.Err == hoststore.ErrKindConflict, e.Err == hoststore.ErrKindFencedOut, e.Err == hoststore.ErrKindInvalid:
			k = e.Err
		default:
			return "", false
		}
	}
	return k, k != ""
}

// sentAfter reports whether every send of the batch began after e ended.
func sentAfter(bi *batchInfo, e *Event) bool {
	for _, s := range bi.sends {
		if !s.NotSent && s.Call <= e.Return {
			return false
		}
	}
	return e.Returned()
}

// supersededBefore returns an acquire that issued a token above the
// batch's and returned before every send of the batch began.
func (j *judge) supersededBefore(bi *batchInfo) *Event {
	first := int64(math.MaxInt64)
	for _, e := range bi.sends {
		if !e.NotSent {
			first = min(first, e.Call)
		}
	}
	for i := range j.h.Events {
		a := &j.h.Events[i]
		if a.Op == OpAcquire && a.Err == hoststore.ErrKindNone && a.Grant != nil && a.Returned() && !a.Lost && a.Return < first && a.Grant.Token > bi.b.Token {
			return a
		}
	}
	return nil
}

// sameIndicesOtherOrder reports whether got holds want's indices and
// want's payloads, paired in another order.
func sameIndicesOtherOrder(want, got []hoststore.Row) bool {
	if len(want) != len(got) || len(want) < 2 || sameRows(want, got) {
		return false
	}
	n := map[string]int{}
	for i := range want {
		if want[i].Index != got[i].Index {
			return false
		}
		n[string(want[i].Data)]++
		n[string(got[i].Data)]--
	}
	for _, c := range n {
		if c != 0 {
			return false
		}
	}
	return true
}

func fenceText(s *state) string {
	return fmt.Sprintf("highest token %d, holder live %v", s.token, s.live)
}

// misplaced reports whether every row got shows is a row the scope holds
// in s, some at another index: the right rows out of commit order.
func (j *judge) misplaced(s *state, scope hoststore.ScopeRef, got []hoststore.Row) bool {
	start, end, ok := s.m.Bounds(scope)
	if !ok || len(got) == 0 {
		return false
	}
	all, _ := s.m.ReadRows(scope, start, int(end-start)+1)
	at := map[string]hoststore.RowIndex{}
	for _, r := range all {
		at[string(r.Data)] = r.Index
	}
	moved := false
	for _, r := range got {
		i, ok := at[string(r.Data)]
		if !ok {
			return false
		}
		moved = moved || i != r.Index
	}
	return moved
}

// lostAtLoad returns the commit id of want, when it is an acknowledged
// batch that a load which began after the acknowledgement does not show.
func (j *judge) lostAtLoad(scope hoststore.ScopeRef, want *hoststore.VersionedHead) (hoststore.CommitID, bool) {
	if want == nil {
		return "", false
	}
	bi := j.batches[want.CommitID]
	if bi == nil {
		return "", false
	}
	ackAt := int64(math.MaxInt64)
	for _, e := range bi.sends {
		if !e.Unknown() && e.Returned() && e.Err == hoststore.ErrKindNone {
			ackAt = min(ackAt, e.Return)
		}
	}
	for i := range j.h.Events {
		e := &j.h.Events[i]
		if e.Op == OpLoad && e.Scope != nil && *e.Scope == scope && e.Call > ackAt && e.Returned() && e.Err == hoststore.ErrKindNone && !e.Lost &&
			(e.Head == nil || e.Head.Version < want.Version) {
			return want.CommitID, true
		}
	}
	return "", false
}
