package explore

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/timeline"
)

// TimelineOf returns h as a timeline.Timeline, for the picture of a
// finding: one lane per process ("p0", "p1", …, and "realm" for the
// realm's own operations), each store or realm request an event with its
// label, answer and faults, and each open, kill and close of a handle an
// event marked as such. highlight is the ID of the event the finding is
// about (Finding.Event), or -1 for none. A nil h gives nil.
func TimelineOf(h *History, highlight int) *timeline.Timeline {
	if h == nil {
		return nil
	}
	procs := map[int]bool{}
	for i := range h.Events {
		procs[h.Events[i].Proc] = true
	}
	for p := range h.Procs {
		procs[p] = true
	}
	ids := make([]int, 0, len(procs))
	for p := range procs {
		ids = append(ids, p)
	}
	sort.Ints(ids)
	t := &timeline.Timeline{Highlight: highlight}
	lane := make(map[int]int, len(ids))
	for i, p := range ids {
		lane[p] = i
		name := "p" + strconv.Itoa(p)
		if p < 0 {
			name = "realm"
		}
		t.Lanes = append(t.Lanes, name)
	}
	t.Events = make([]timeline.Event, len(h.Events))
	for i := range h.Events {
		t.Events[i] = timelineEvent(&h.Events[i], lane[h.Events[i].Proc])
	}
	return t
}

// timelineEvent returns e as an event of a timeline, on lane.
func timelineEvent(e *Event, lane int) timeline.Event {
	te := timeline.Event{ID: e.ID, Lane: lane, Call: e.Call, Return: e.Return, Label: timelineLabel(e), Detail: e.String()}
	switch e.Op {
	case OpOpen:
		te.Mark = timeline.MarkOpen
	case OpKill:
		te.Mark = timeline.MarkKill
	case OpClose:
		te.Mark = timeline.MarkClose
	}
	switch {
	case e.NotSent:
		te.Answer = timeline.AnswerNotSent
	case e.Lost:
		te.Answer = timeline.AnswerLost
	case !e.Returned():
	case e.Err != hoststore.ErrKindNone:
		te.Answer = string(e.Err)
		te.Result = timelineRefusal(e)
	default:
		te.Answer = timeline.AnswerOK
		te.Result = timelineResult(e)
	}
	for _, f := range e.Faults {
		tf := timeline.Fault{Layer: f.Layer, Site: f.Site, Kind: f.Kind}
		switch f.Site {
		case faults.BeforeSend.String():
			tf.When = timeline.FaultBefore
		case faults.AfterAnswer.String():
			tf.When = timeline.FaultAfter
		}
		te.Faults = append(te.Faults, tf)
	}
	return te
}

// timelineLabel returns the operation of e and its key arguments, short:
// for a commit its id, token and the scopes it writes, not the updates.
func timelineLabel(e *Event) string {
	switch e.Op {
	case OpAcquire:
		return "acquire " + e.Mode
	case OpRenew:
		return fmt.Sprintf("renew tok=%d", e.Token)
	case OpLoad:
		return "load " + scopeText(e.Scope)
	case OpRead:
		return fmt.Sprintf("read %s from=%d limit=%d", scopeText(e.Scope), e.From, e.Limit)
	case OpList:
		return fmt.Sprintf("list %s after=%s limit=%d", e.Kind, nameText(e.After), e.Limit)
	case OpCommit:
		if e.Batch == nil {
			return "commit"
		}
		parts := []string{"commit", string(e.Batch.ID), fmt.Sprintf("tok=%d", e.Batch.Token)}
		for _, s := range e.Batch.Scopes() {
			parts = append(parts, scopeText(&s))
		}
		return strings.Join(parts, " ")
	}
	return string(e.Op)
}

// timelineResult returns what e, answered without error, returned, short,
// or "".
func timelineResult(e *Event) string {
	switch e.Op {
	case OpAcquire:
		if e.Grant != nil {
			return fmt.Sprintf("tok=%d", e.Grant.Token)
		}
	case OpLoad:
		if e.Head == nil {
			return "absent"
		}
		return fmt.Sprintf("v%d %s", e.Head.Version, e.Head.CommitID)
	case OpRead:
		switch len(e.Rows) {
		case 0:
			return "no rows"
		case 1:
			return fmt.Sprintf("row %d", e.Rows[0].Index)
		}
		return fmt.Sprintf("%d rows %d…%d", len(e.Rows), e.Rows[0].Index, e.Rows[len(e.Rows)-1].Index)
	case OpList:
		if e.Page != nil {
			s := fmt.Sprintf("%d heads", len(e.Page.Heads))
			if len(e.Page.Heads) == 1 {
				s = "1 head"
			}
			if e.Page.Next != nil {
				s += " more"
			}
			return s
		}
	}
	return ""
}

// timelineRefusal returns what e's refusal said beyond its kind, short,
// or "".
func timelineRefusal(e *Event) string {
	switch {
	case e.Held != nil:
		return fmt.Sprintf("holder=%d", e.Held.Holder)
	case e.Fence != nil:
		return fmt.Sprintf("current=%d", e.Fence.Current)
	case e.Clash != nil:
		if e.Clash.Current == nil {
			return scopeText(&e.Clash.Scope) + " absent"
		}
		return fmt.Sprintf("%s v%d", scopeText(&e.Clash.Scope), *e.Clash.Current)
	}
	return ""
}
