package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/obligation"
	"github.com/conform-spi/conform/reports"
)

// Finding is one breach a check found in a history.
type Finding struct {
	// Obligation is the obligation the history breaks.
	Obligation reports.ObligationID `json:"obligation"`
	// Event is the ID of the event the finding is about: for a failed
	// linearization, the first operation no linearization explains.
	Event int `json:"event"`
	// Message says what is wrong, in the contract's words.
	Message string `json:"message"`
	// Want and Got are what the contract allows there and what the store
	// showed, when they can be put on one line.
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
}

// String returns the finding on one line.
func (f Finding) String() string {
	s := fmt.Sprintf("%s at #%d: %s", f.Obligation, f.Event, f.Message)
	if f.Want != "" || f.Got != "" {
		s += fmt.Sprintf(" (want %s; got %s)", f.Want, f.Got)
	}
	return s
}

// Linearity is how a linearizability check ended.
type Linearity string

// The results of the linearizability check.
const (
	// Linearizable: some order of the operations, within real time,
	// explains every answer.
	Linearizable Linearity = "linearizable"
	// NotLinearizable: no order does.
	NotLinearizable Linearity = "not-linearizable"
	// Undecided: the check ran out of its time bound.
	Undecided Linearity = "undecided"
)

// Verdict is what Check returns for one history.
type Verdict struct {
	// Findings are the breaches, direct ones first, then at most one from
	// the linearization. Empty when the history passes.
	Findings []Finding `json:"findings,omitempty"`
	// Result is the linearizability check's outcome.
	Result Linearity `json:"result"`
	// Ops counts the operations linearized (a listing page counts once
	// per observation).
	Ops int `json:"ops"`
}

// OK reports whether the history passes: no finding, and linearizable.
func (v Verdict) OK() bool { return len(v.Findings) == 0 && v.Result == Linearizable }

// CheckConfig bounds a check. The zero value bounds nothing.
type CheckConfig struct {
	// Timeout bounds the linearizability search; when it runs out the
	// result is Undecided and no finding is made from it. Zero: no bound.
	Timeout time.Duration
}

// Check judges a history against the contract. It returns the breaches
// that need no linearization (errors outside the contract, pages over
// their limit or out of order, a batch seen in one scope and then missing
// from another), and then checks the history for linearizability against
// the reference Model and the fence rules: every answer must be explained
// by one order of the operations that real time allows, in which a commit
// of unknown outcome may land at any time after its call, or never. When
// no order explains the history, the finding names the first operation no
// linearization explains and the obligation it breaks. Check is a pure
// function of its arguments.
func Check(h *History, cfg CheckConfig) Verdict {
	j := newJudge(h)
	v := Verdict{Findings: j.direct(), Ops: len(j.ops)}
	for i := range h.Events {
		if e := &h.Events[i]; e.Panic != "" {
			// A panic is the store's process dying in the call: the
			// history ended there, and the panic is the headline.
			v.Findings = append([]Finding{{Obligation: obligation.ObErrors, Event: e.ID,
				Message: fmt.Sprintf("panic in %s: %s (a store answers with an error, or dies as a process would; it does not panic in its caller)", OpTitle(e.Op), e.Panic)}}, v.Findings...)
			break
		}
	}
	if hg := h.Hang; hg != nil {
		// The history ended at the hang: the rest of it is cut short, so
		// the hang is the headline.
		what := "hang in " + OpTitle(hg.Op)
		if hg.Op == OpKill {
			what = "hang in a request abandoned in flight: its handle was killed, and it"
		}
		v.Findings = append([]Finding{{Obligation: obligation.ObErrors, Event: hg.Event,
			Message: fmt.Sprintf("%s: no answer within the per-call bound of %s (a store must answer, or give up when the call's context ends)", what, hg.Bound)}}, v.Findings...)
	}
	ops := j.operations()
	model := j.porcupineModel()
	res := porcupine.CheckOperationsTimeout(model, ops, cfg.Timeout)
	switch res {
	case porcupine.Ok:
		v.Result = Linearizable
		return v
	case porcupine.Unknown:
		v.Result = Undecided
		return v
	}
	v.Result = NotLinearizable
	_, info := porcupine.CheckOperationsVerbose(model, ops, cfg.Timeout)
	v.Findings = append(v.Findings, j.name(j.diagnose(info.PartialLinearizations()), cfg.Timeout))
	return v
}

// relaxable are the obligations whose rule the model can set aside, in
// the order name tries them: the narrow rules first.
// (Durability has no such rule here: an acknowledged batch that may land
// late, as one of unknown outcome may, explains almost any history.)
var relaxable = []reports.ObligationID{obligation.ObFenceLease, obligation.ObFencing, obligation.ObListing, obligation.ObOrder}

// name checks the obligation a diagnosis names: a history that no order
// explains under the contract, but that one does once the rule of one
// obligation is set aside, breaks that obligation. The diagnosis stands
// when its own obligation's rule explains the history, or no single rule
// does; otherwise the first rule that does names the finding, the
// diagnosis kept as its detail.
func (j *judge) name(f Finding, timeout time.Duration) Finding {
	without := func(ob reports.ObligationID) bool {
		r := *j
		r.relax = ob
		return porcupine.CheckOperationsTimeout(r.porcupineModel(), r.operations(), timeout) == porcupine.Ok
	}
	if slices.Contains(relaxable, f.Obligation) && without(f.Obligation) {
		return f
	}
	for _, ob := range relaxable {
		if ob != f.Obligation && without(ob) {
			f.Message = fmt.Sprintf("no order explains the history, and one does once %s is set aside: %s", ob, f.Message)
			f.Obligation = ob
			return f
		}
	}
	return f
}

// OpTitle returns the SPI's name of op ("Commit" for commit), as the
// harness's per-call bounds name operations.
func OpTitle(op Op) string {
	switch op {
	case OpOpen:
		return "Open"
	case OpAcquire:
		return "AcquireFence"
	case OpRenew:
		return "RenewFence"
	case OpLoad:
		return "LoadHead"
	case OpList:
		return "ListHeads"
	case OpRead:
		return "ReadRows"
	case OpCommit:
		return "Commit"
	case OpLapse:
		return "LapseFenceLeases"
	case OpClose:
		return "Close"
	}
	return string(op)
}

// direct returns the breaches that need no linearization, in event order.
func (j *judge) direct() []Finding {
	var out []Finding
	for i := range j.h.Events {
		out = append(out, directEvent(&j.h.Events[i])...)
	}
	return append(out, j.torn()...)
}

func directEvent(e *Event) []Finding {
	var out []Finding
	add := func(ob reports.ObligationID, want, got, format string, args ...any) {
		out = append(out, Finding{Obligation: ob, Event: e.ID, Message: fmt.Sprintf(format, args...), Want: want, Got: got})
	}
	switch e.Op {
	case OpOpen, OpKill, OpClose:
		if e.Err != hoststore.ErrKindNone && e.Err != hoststore.ErrKindUnavailable {
			add(obligation.ObErrors, "nil or Unavailable", string(e.Err), "%s answered an error outside the contract", e.Op)
		}
		return out
	}
	if e.NotSent || e.Lost {
		return out
	}
	if !e.Returned() {
		add(obligation.ObErrors, "an answer", "none", "%s never returned", e.Op)
		return out
	}
	if e.Err != hoststore.ErrKindNone && !allowed(e.Op, e.Err) {
		add(obligation.ObErrors, "nil or an error the contract allows "+string(e.Op), string(e.Err)+": "+e.Text, "%s answered an error outside the contract", e.Op)
		return out
	}
	switch e.Op {
	case OpRead:
		if len(e.Rows) > e.Limit {
			add(obligation.ObOperations, fmt.Sprintf("at most %d rows", e.Limit), fmt.Sprint(len(e.Rows)), "ReadRows answered more rows than its limit")
		}
		for i, r := range e.Rows {
			if r.Index != e.From+hoststore.RowIndex(i) {
				add(obligation.ObOrder, fmt.Sprintf("row %d at position %d", e.From+hoststore.RowIndex(i), i), fmt.Sprintf("row %d", r.Index), "ReadRows is not in index order from %d", e.From)
				break
			}
		}
	case OpList:
		if e.Page == nil {
			break
		}
		if len(e.Page.Heads) > e.Limit {
			add(obligation.ObListing, fmt.Sprintf("at most %d heads", e.Limit), fmt.Sprint(len(e.Page.Heads)), "ListHeads answered more heads than its limit")
		}
		for i, nh := range e.Page.Heads {
			if e.After != nil && nh.Name <= *e.After || i > 0 && nh.Name <= e.Page.Heads[i-1].Name {
				add(obligation.ObListing, "names above the cursor, in byte order, once each", fmt.Sprintf("%q", nh.Name), "ListHeads is not in byte order of names after its cursor")
				break
			}
		}
		if n := e.Page.Next; n != nil && e.After != nil && *n <= *e.After {
			add(obligation.ObListing, "a cursor that moves past "+nameText(e.After), nameText(n), "ListHeads answered a next cursor that does not move on: the listing never ends")
		}
		// A next cursor below the page's own last name makes the next page
		// list names again; an empty page with a next cursor lists nothing
		// and still says the listing goes on (docs/host-store-contract.md).
		if n, hs := e.Page.Next, e.Page.Heads; n != nil && len(hs) > 0 && *n < hs[len(hs)-1].Name {
			add(obligation.ObListing, "a next cursor at or above the page's last name "+fmt.Sprintf("%q", hs[len(hs)-1].Name), nameText(n), "ListHeads answered a next cursor inside its own page: the next page lists names again")
		}
		if e.Page.Next != nil && len(e.Page.Heads) == 0 {
			add(obligation.ObListing, "no next cursor on an empty page", nameText(e.Page.Next), "ListHeads answered an empty page with a next cursor")
		}
	}
	return out
}

// torn finds a batch seen in one of its scopes by one observation and
// missing from another of its scopes in an observation that began after
// the first ended: all or nothing is broken whatever the order of the
// rest. "Missing" is a live version below the batch's, or no scope at all
// where no batch of the history deletes it.
func (j *judge) torn() []Finding {
	type seen struct {
		ev    *Event
		scope hoststore.ScopeRef
		head  *hoststore.VersionedHead
	}
	var obs []seen
	for i := range j.h.Events {
		e := &j.h.Events[i]
		if e.Lost || !e.Returned() || e.Err != hoststore.ErrKindNone {
			continue
		}
		switch e.Op {
		case OpLoad:
			if e.Scope != nil {
				obs = append(obs, seen{e, *e.Scope, e.Head})
			}
		case OpList:
			if e.Page != nil {
				for _, nh := range e.Page.Heads {
					obs = append(obs, seen{e, hoststore.ScopeRef{Kind: e.Kind, Name: nh.Name}, hoststore.Ptr(nh.Head)})
				}
			}
		}
	}
	for _, x := range obs {
		if x.head == nil {
			continue
		}
		bi := j.batches[x.head.CommitID]
		if bi == nil || len(bi.b.Updates) < 2 {
			continue
		}
		if u, ok := bi.b.Update(x.scope); !ok || u.Next != x.head.Version {
			continue
		}
		for _, y := range obs {
			if y.ev.Call <= x.ev.Return || y.scope == x.scope {
				continue
			}
			u, ok := bi.b.Update(y.scope)
			if !ok {
				continue
			}
			before := y.head != nil && y.head.Version < u.Next || y.head == nil && !u.Delete && !j.deletes[y.scope]
			if y.head != nil && j.sentAfterObs(y.head.CommitID, x.ev) {
				// A batch sent after the first observation wrote y's
				// version: the chain went back, which the linearization
				// judges; it is no sign of half a batch.
				continue
			}
			if before {
				return []Finding{{Obligation: obligation.ObAllOrNothing, Event: y.ev.ID,
					Message: fmt.Sprintf("batch %s shows in %s (#%d) and then not in %s", bi.b.ID, scopeText(&x.scope), x.ev.ID, scopeText(&y.scope)),
					Want:    fmt.Sprintf("%s at version %d or later", scopeText(&y.scope), u.Next), Got: HeadText(y.head)}}
			}
		}
	}
	return nil
}

// sentAfterObs reports whether every send of batch id began after e ended.
func (j *judge) sentAfterObs(id hoststore.CommitID, e *Event) bool {
	bi := j.batches[id]
	return bi != nil && sentAfter(bi, e)
}
