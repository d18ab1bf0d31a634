// Package timeline is the picture of a concurrent history that a report
// shows for a failure the exploration found: the lanes, the events and the
// faults injected into them. The checker fills one; package reports writes
// it, in report.json as it is and in the other reports as a picture or text.
package timeline

// Timeline is a concurrent history drawn for people: one lane per process,
// each operation an interval of one logical clock from its call to its
// return, with what it answered and the faults injected into it, and the
// one operation a failure is about. The HTML report draws it as a picture;
// the Markdown and JUnit reports write it one event a line.
type Timeline struct {
	// Lanes names the lanes, one per process ("p0"); an event's Lane
	// indexes it. An event on a lane past the end gets a lane named by
	// its number.
	Lanes []string `json:"lanes,omitempty"`
	// Events are the events of the history, in the order of their Call.
	Events []Event `json:"events,omitempty"`
	// Highlight is the ID of the event the model disagrees with, the one
	// the failure is about; -1 when there is none. Mind that the zero
	// value names event 0.
	Highlight int `json:"highlight"`
}

// Event is one event of a Timeline: an operation a process sent,
// drawn as a bar from its call to its return, or a change to the process
// itself (Mark), drawn as a mark.
type Event struct {
	// ID is the event's number in its history, as findings and the
	// history's text name it (#7).
	ID int `json:"id"`
	// Lane is the index in Timeline.Lanes of the process that sent it.
	Lane int `json:"lane"`
	// Call and Return are the logical clock when the call began and when
	// it returned; Return is 0 when the call never returned.
	Call   int64 `json:"call"`
	Return int64 `json:"return,omitempty"`
	// Mark is set when the event changed the process rather than asked the
	// store: MarkOpen, MarkKill or MarkClose.
	Mark string `json:"mark,omitempty"`
	// Label is the operation and its key arguments, short: "commit c3
	// tok=2 session/a".
	Label string `json:"label"`
	// Answer is what came back, in a word: AnswerOK, an error kind
	// ("FencedOut"), AnswerLost or AnswerNotSent; empty when the call
	// never returned.
	Answer string `json:"answer,omitempty"`
	// Result is what an answered call returned beyond its answer, short:
	// "tok=3", "v2 c5", or for a refusal "current=4"; empty when there is
	// nothing to show.
	Result string `json:"result,omitempty"`
	// Detail is the whole event on one line, call and answer, for a
	// tooltip; empty to show Label, Answer and Result instead.
	Detail string `json:"detail,omitempty"`
	// Faults are the faults injected into the call.
	Faults []Fault `json:"faults,omitempty"`
}

// Fault is a fault injected into one event of a Timeline.
type Fault struct {
	// Layer is where it was injected: "wrapper" (around the store) or
	// "instore" (a site of the store's commit path).
	Layer string `json:"layer"`
	// Site is the wrapper's phase or the in-store site.
	Site string `json:"site"`
	// Kind is what the fault did: kill, crash, indeterminate.
	Kind string `json:"kind"`
	// When is where in the call it struck: FaultBefore (before the request
	// was sent), FaultAfter (after the answer came back), or empty for
	// while the request was in flight or in the store.
	When string `json:"when,omitempty"`
}

// The values of Event.Answer that are not error kinds.
const (
	AnswerOK      = "ok"
	AnswerLost    = "lost"     // the caller never learned the answer
	AnswerNotSent = "not sent" // the request never reached the store
)

// The values of Event.Mark.
const (
	MarkOpen  = "open"  // the process opened a new handle
	MarkKill  = "kill"  // the process was killed, as a crash would
	MarkClose = "close" // the process closed its handle
)

// The values of Fault.When other than empty.
const (
	FaultBefore = "before"
	FaultAfter  = "after"
)
