// Package explore is conform's exploration: randomized concurrent
// histories against a realm, recorded as a typed History first and judged
// after, by pure functions, against the sequential contract (the
// reference Model plus the fence rules).
//
// The pieces, each usable on its own:
//
//   - History and Event: what was sent to a store and what came back, on
//     one logical clock, with the faults injected; JSON-serialisable, with
//     a one-line-per-event text form for findings. An Event is also the
//     one operation type: the generator draws it, a repro encodes and
//     decodes it, the player runs it and the shrinker edits it.
//   - Check: the judge. It checks a history for linearizability against
//     the contract and names the obligation a failure breaks and the first
//     operation no linearization explains.
//   - Play and Run: the generator over the player. Run plays histories
//     chosen from a seed against a realm, one goroutine per process, kills
//     handles through the faults wrapper, and judges every history.
//   - Replay and Shrink: the same player over a script. Replay plays a
//     recorded or decoded history again; Shrink replays smaller copies.
package explore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/faults"
)

// Op names what an event did.
type Op string

// The operations a history records. The first seven are store and realm
// requests; open, kill and close change which handle a process uses.
const (
	OpAcquire Op = "acquire"
	OpRenew   Op = "renew"
	OpLapse   Op = "lapse"
	OpLoad    Op = "load"
	OpList    Op = "list"
	OpRead    Op = "read"
	OpCommit  Op = "commit"
	OpOpen    Op = "open"
	OpKill    Op = "kill"
	OpClose   Op = "close"
)

// Batch is a commit batch as plain data: what NewCommitBatch was given.
type Batch struct {
	ID      hoststore.CommitID      `json:"id"`
	Token   hoststore.FenceToken    `json:"token"`
	Updates []hoststore.ScopeUpdate `json:"updates"`
}

// Build returns the batch as a *hoststore.CommitBatch, or the error
// NewCommitBatch returns.
func (b *Batch) Build() (*hoststore.CommitBatch, error) {
	return hoststore.NewCommitBatch(b.ID, b.Token, b.Updates)
}

// Scopes returns the scopes the batch writes, in update order.
func (b *Batch) Scopes() []hoststore.ScopeRef {
	out := make([]hoststore.ScopeRef, len(b.Updates))
	for i, u := range b.Updates {
		out[i] = u.Scope
	}
	return out
}

// Update returns the batch's update of s, if it writes s.
func (b *Batch) Update(s hoststore.ScopeRef) (hoststore.ScopeUpdate, bool) {
	for _, u := range b.Updates {
		if u.Scope == s {
			return u, true
		}
	}
	return hoststore.ScopeUpdate{}, false
}

// Fault is one fault injected into an event.
type Fault struct {
	// Layer is "wrapper" (around the store) or "instore" (a site of the
	// store's commit path).
	Layer string `json:"layer"`
	// Site is the wrapper phase (before-send, in-flight, after-answer) or
	// the in-store site (commit-locked, commit-before-point,
	// commit-after-point).
	Site string `json:"site"`
	// Kind is what the fault did: kill, crash, indeterminate.
	Kind string `json:"kind"`
	// Pass is the pass of an in-store site the crash was armed at (1: the
	// first time the commit reaches the site); 0 means 1.
	Pass int `json:"pass,omitempty"`
}

// String returns layer/site/kind, and @pass for a pass after the first.
func (f Fault) String() string {
	s := f.Layer + "/" + f.Site + "/" + f.Kind
	if f.Pass > 1 {
		s += "@" + strconv.Itoa(f.Pass)
	}
	return s
}

// Event is one operation of a history: who sent it, what it asked, when
// it was called and returned on the history's logical clock, and what
// came back.
type Event struct {
	// ID is the event's index in History.Events.
	ID int `json:"id"`
	// Proc is the process (one goroutine of the player) that sent it;
	// -1 for the realm's own operations (none so far).
	Proc int `json:"proc"`
	// Handle numbers the handle the process used, across the history:
	// each open makes a new one.
	Handle int `json:"handle"`
	// Op is what was sent.
	Op Op `json:"op"`
	// Call and Return are the logical clock when the call began and when
	// it returned. Return is 0 when the call never returned.
	Call   int64 `json:"call"`
	Return int64 `json:"return,omitempty"`

	// The arguments; which are set depends on Op.
	Mode  string               `json:"mode,omitempty"`  // acquire: Exclusive, Takeover
	Token hoststore.FenceToken `json:"token,omitempty"` // renew
	Scope *hoststore.ScopeRef  `json:"scope,omitempty"` // load, read
	Kind  hoststore.ScopeKind  `json:"kind,omitempty"`  // list
	After *hoststore.ScopeName `json:"after,omitempty"` // list
	From  hoststore.RowIndex   `json:"from,omitempty"`  // read
	Limit int                  `json:"limit,omitempty"` // list, read
	Batch *Batch               `json:"batch,omitempty"` // commit

	// The answer; which is set depends on Op and Err.
	Grant *hoststore.FenceGrant     `json:"grant,omitempty"` // acquire
	Head  *hoststore.VersionedHead  `json:"head,omitempty"`  // load
	Page  *hoststore.HeadPage       `json:"page,omitempty"`  // list
	Rows  []hoststore.Row           `json:"rows,omitempty"`  // read
	Err   hoststore.ErrorKind       `json:"err,omitempty"`   // "" for nil
	Text  string                    `json:"text,omitempty"`  // the error's text
	Held  *hoststore.HeldError      `json:"held,omitempty"`  // a Held refusal
	Fence *hoststore.FencedOutError `json:"fenced,omitempty"`
	Clash *hoststore.ConflictError  `json:"conflict,omitempty"` // a Conflict refusal

	// Lost is set when the caller never learned the answer: the process
	// was killed with the request in flight or after the store answered,
	// the store crashed at an in-store site, or the call never returned.
	// A lost commit may or may not have landed.
	Lost bool `json:"lost,omitempty"`
	// NotSent is set when the request never reached the store (a kill
	// before send): it did nothing.
	NotSent bool `json:"notSent,omitempty"`
	// Faults lists what was injected into this call.
	Faults []Fault `json:"faults,omitempty"`
	// Panic, when set, is what the store panicked with in this call; the
	// call never returned, and the history ended there.
	Panic string `json:"panic,omitempty"`
	// Inside names the commit this call was made inside of: a peek,
	// called while that commit was held at the in-store site of its crash
	// fault, which crashes it once the peek has returned (or PeekBound
	// has passed).
	Inside hoststore.CommitID `json:"inside,omitempty"`
}

// Returned reports whether the call returned.
func (e *Event) Returned() bool { return e.Return != 0 }

// Unknown reports whether the event is a commit whose outcome the caller
// does not know: lost, never returned, or answered Indeterminate or with a
// context error.
func (e *Event) Unknown() bool {
	if e.Op != OpCommit || e.NotSent {
		return false
	}
	return e.Lost || !e.Returned() || e.Err == hoststore.ErrKindIndeterminate || e.Err == hoststore.ErrKindContext
}

// History is one recorded run: its seed, the realm's lease, and its events
// in the order they were called.
type History struct {
	// Seed is the seed the history was generated from.
	Seed uint64 `json:"seed"`
	// Procs is how many processes ran concurrently, observers included
	// (see Observers).
	Procs int `json:"procs"`
	// Lease is the lease the store declared (FenceTiming().Lease()); the
	// checker bounds Held.Remaining and SupersededLease by it. Zero skips
	// those bounds.
	Lease time.Duration `json:"lease,omitempty"`
	// Events are the operations, in the order of their Call.
	Events []Event `json:"events"`
	// Hang, when set, is the call that did not return within its bound;
	// the history ended there.
	Hang *Hang `json:"hang,omitempty"`
}

// Racy reports whether two replays of h may differ for a store that
// answers the same calls the same way: two of its operations overlap (the
// scheduler picks how they interleave), a call never returned, or a
// commit is killed in flight (the kill races the store's work). A peek
// overlapping the commit it was made inside of is no race: the replay
// holds the commit at its site until the peek returns. A history that is
// not racy replays the same way every time.
func (h *History) Racy() bool {
	for i := range h.Events {
		e := &h.Events[i]
		if !e.Returned() {
			return true
		}
		for j := range i {
			o := &h.Events[j]
			if o.Return > e.Call && !(e.Inside != "" && o.Op == OpCommit && o.Batch != nil && o.Batch.ID == e.Inside) {
				return true
			}
		}
		for _, f := range e.Faults {
			if f.Layer == "wrapper" && f.Site == faults.InFlight.String() {
				return true
			}
		}
	}
	return false
}

// Observers counts the processes of h that only peeked inside held
// commits: every event of theirs is an open, a kill, a close or a peek.
func (h *History) Observers() int {
	observer := map[int]bool{}
	for i := range h.Events {
		e := &h.Events[i]
		peekOnly := e.Inside != "" || e.Op == OpOpen || e.Op == OpKill || e.Op == OpClose
		if seen, ok := observer[e.Proc]; !ok || seen {
			observer[e.Proc] = peekOnly
		}
	}
	n := 0
	for _, ob := range observer {
		if ob {
			n++
		}
	}
	return n
}

// Panicked reports whether a call of h panicked (Event.Panic).
func (h *History) Panicked() bool {
	for i := range h.Events {
		if h.Events[i].Panic != "" {
			return true
		}
	}
	return false
}

// Text returns the history one event a line, as String renders each.
func (h *History) Text() string {
	var sb strings.Builder
	for i := range h.Events {
		sb.WriteString(h.Events[i].String())
		sb.WriteByte('\n')
	}
	return sb.String()
}

// String returns the event on one line: id, process and handle, the
// clock interval, the call and its answer.
func (e *Event) String() string {
	var sb strings.Builder
	ret := "…"
	if e.Returned() {
		ret = strconv.FormatInt(e.Return, 10)
	}
	fmt.Fprintf(&sb, "#%d p%d/h%d [%d,%s] %s", e.ID, e.Proc, e.Handle, e.Call, ret, e.Op)
	switch e.Op {
	case OpAcquire:
		sb.WriteString(" " + e.Mode)
	case OpRenew:
		fmt.Fprintf(&sb, " tok=%d", e.Token)
	case OpLoad:
		sb.WriteString(" " + scopeText(e.Scope))
	case OpRead:
		fmt.Fprintf(&sb, " %s from=%d limit=%d", scopeText(e.Scope), e.From, e.Limit)
	case OpList:
		fmt.Fprintf(&sb, " %s after=%s limit=%d", e.Kind, nameText(e.After), e.Limit)
	case OpCommit:
		if e.Batch != nil {
			sb.WriteString(" " + e.Batch.String())
		}
	}
	for _, f := range e.Faults {
		sb.WriteString(" !" + f.String())
	}
	if e.Inside != "" {
		sb.WriteString(" (inside held " + strconv.Quote(string(e.Inside)) + ")")
	}
	sb.WriteString(" → ")
	sb.WriteString(e.answerText())
	return sb.String()
}

func (e *Event) answerText() string {
	switch {
	case e.NotSent:
		return "not sent"
	case e.Lost:
		return "lost"
	case !e.Returned():
		return "never returned"
	case e.Err == hoststore.ErrKindHeld && e.Held != nil:
		return fmt.Sprintf("Held(holder=%d, remaining=%s)", e.Held.Holder, e.Held.Remaining)
	case e.Err == hoststore.ErrKindFencedOut && e.Fence != nil:
		return fmt.Sprintf("FencedOut(current=%d)", e.Fence.Current)
	case e.Err == hoststore.ErrKindConflict && e.Clash != nil:
		cur := "absent"
		if e.Clash.Current != nil {
			cur = fmt.Sprintf("v%d", *e.Clash.Current)
		}
		return fmt.Sprintf("Conflict(%s is %s)", scopeText(&e.Clash.Scope), cur)
	case e.Err != hoststore.ErrKindNone:
		return string(e.Err)
	}
	switch e.Op {
	case OpAcquire:
		if e.Grant != nil {
			return fmt.Sprintf("tok=%d superseded=%s", e.Grant.Token, e.Grant.SupersededLease)
		}
	case OpLoad:
		return HeadText(e.Head)
	case OpRead:
		return RowsText(e.Rows)
	case OpList:
		if e.Page != nil {
			return PageText(e.Page)
		}
	}
	return "ok"
}

// String returns the batch on one line: id, token, and each update.
func (b *Batch) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s tok=%d {", b.ID, b.Token)
	for i, u := range b.Updates {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(UpdateText(u))
	}
	sb.WriteString("}")
	return sb.String()
}

// UpdateText returns one scope update on one line.
func UpdateText(u hoststore.ScopeUpdate) string {
	var sb strings.Builder
	sb.WriteString(scopeText(&u.Scope))
	if u.Previous == nil {
		sb.WriteString(" create")
	} else {
		fmt.Fprintf(&sb, " %d→%d", *u.Previous, u.Next)
	}
	if u.Delete {
		sb.WriteString(" delete")
	}
	if u.TruncateAfter != nil {
		fmt.Fprintf(&sb, " trunc@%d", *u.TruncateAfter)
	}
	if u.DropBefore != nil {
		fmt.Fprintf(&sb, " drop<%d", *u.DropBefore)
	}
	if len(u.Append) > 0 {
		sb.WriteString(" +[")
		for i, r := range u.Append {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(strconv.Quote(string(r)))
		}
		sb.WriteString("]")
	}
	if u.Head != nil {
		sb.WriteString(" head=" + strconv.Quote(string(*u.Head)))
	}
	return sb.String()
}

// HeadText returns a loaded head on one line, or "absent".
func HeadText(h *hoststore.VersionedHead) string {
	if h == nil {
		return "absent"
	}
	return fmt.Sprintf("v%d %s head=%q", h.Version, h.CommitID, h.Head)
}

// RowsText returns rows as index:payload pairs, or "no rows".
func RowsText(rows []hoststore.Row) string {
	if len(rows) == 0 {
		return "no rows"
	}
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = fmt.Sprintf("%d:%q", r.Index, r.Data)
	}
	return strings.Join(parts, " ")
}

// PageText returns a listing page on one line: each name with its version
// and commit id, and the next cursor.
func PageText(p *hoststore.HeadPage) string {
	parts := make([]string, 0, len(p.Heads)+1)
	for _, h := range p.Heads {
		parts = append(parts, fmt.Sprintf("%q:v%d/%s", h.Name, h.Head.Version, h.Head.CommitID))
	}
	parts = append(parts, "next="+nameText(p.Next))
	return strings.Join(parts, " ")
}

func scopeText(s *hoststore.ScopeRef) string {
	if s == nil {
		return "?"
	}
	return s.Kind.String() + "/" + string(s.Name)
}

func nameText(n *hoststore.ScopeName) string {
	if n == nil {
		return "nil"
	}
	return strconv.Quote(string(*n))
}
