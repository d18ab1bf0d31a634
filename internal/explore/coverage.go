package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/conform-spi/conform/hoststore"
)

// Item is one thing a run of histories should reach, so that a pass says
// something: an operation answered a certain way, an error type, a kill at
// a moment of a commit, a race, a resend after a given first send.
type Item struct {
	// ID names the item, e.g. "commit/clash" or "kill/in-flight".
	ID string `json:"id"`
	// Group is what the item belongs to: answers, errors, faults, races
	// or resends.
	Group string `json:"group"`
	// What says what reaching it means, in the contract's words.
	What string `json:"what"`
	// InStore is set for an item only a store that calls the in-store
	// sites (package instore) can reach.
	InStore bool `json:"instore,omitempty"`
}

// The groups of Items, in the order they are listed.
const (
	GroupAnswers = "answers"
	GroupErrors  = "errors"
	GroupFaults  = "faults"
	GroupRaces   = "races"
	GroupResends = "resends"
)

// Items returns the coverage items a run is expected to reach, in the
// order they are reported. Each is reachable by every store the contract
// allows: where a store may keep an obligation at commit or at load (a
// version clash refused with Conflict or resolved at load, a stale token
// refused with FencedOut or hidden at load), the item counts either way.
// And each is common enough that a budget of a few hundred histories
// reaches it every time on a correct store; a rarer answer (RenewFence's
// FencedOut: a few in 300 histories on the reference store) is counted
// among the answers by kind but not listed, so that a correct store never
// passes only by chance.
func Items() []Item {
	return slices.Clone(covItems)
}

var covItems = []Item{
	{ID: "acquire/exclusive", Group: GroupAnswers, What: "an exclusive AcquireFence granted a token"},
	{ID: "acquire/takeover", Group: GroupAnswers, What: "a takeover AcquireFence granted a token"},
	{ID: "acquire/held", Group: GroupAnswers, What: "an exclusive AcquireFence answered Held"},
	{ID: "renew/ok", Group: GroupAnswers, What: "RenewFence renewed a lease"},
	{ID: "lapse/ok", Group: GroupAnswers, What: "LapseFenceLeases lapsed the leases"},
	{ID: "load/head", Group: GroupAnswers, What: "LoadHead answered a head"},
	{ID: "load/absent", Group: GroupAnswers, What: "LoadHead answered absent"},
	{ID: "list/heads", Group: GroupAnswers, What: "ListHeads answered a page with heads"},
	{ID: "list/empty", Group: GroupAnswers, What: "ListHeads answered an empty page"},
	{ID: "list/more", Group: GroupAnswers, What: "ListHeads answered a page with a next cursor"},
	{ID: "read/rows", Group: GroupAnswers, What: "ReadRows answered rows"},
	{ID: "read/none", Group: GroupAnswers, What: "ReadRows answered no rows"},
	{ID: "read/invalid", Group: GroupAnswers, What: "ReadRows answered Invalid below the first visible row"},
	{ID: "commit/ok", Group: GroupAnswers, What: "Commit answered nil"},
	{ID: "commit/clash", Group: GroupAnswers, What: "a version clash: Commit answered Conflict, or two batches that claim one version of a scope were both acknowledged (resolved at load)"},
	{ID: "commit/stale-token", Group: GroupAnswers, What: "a stale token: Commit answered FencedOut, or acknowledged a batch whose token a grant returned before its call had superseded (hidden at load)"},
	{ID: "error/Held", Group: GroupErrors, What: "the store answered *HeldError"},
	{ID: "error/FencedOut", Group: GroupErrors, What: "the store answered *FencedOutError"},
	{ID: "error/Invalid", Group: GroupErrors, What: "the store answered *InvalidError"},
	{ID: "fault/kill-before-send", Group: GroupFaults, What: "a process killed before its commit was sent"},
	{ID: "fault/kill-in-flight", Group: GroupFaults, What: "a process killed with its commit in flight"},
	{ID: "fault/kill-answer-lost", Group: GroupFaults, What: "a process killed after the store answered its commit, the answer lost"},
	{ID: "fault/indeterminate", Group: GroupFaults, What: "a commit's answer replaced by Indeterminate, the process alive"},
	{ID: "fault/crash-" + "commit-locked", Group: GroupFaults, What: "a commit crashed in the store at commit-locked", InStore: true},
	{ID: "fault/crash-" + "commit-before-point", Group: GroupFaults, What: "a commit crashed in the store at commit-before-point", InStore: true},
	{ID: "fault/crash-" + "commit-after-point", Group: GroupFaults, What: "a commit crashed in the store at commit-after-point", InStore: true},
	{ID: "peek/held", Group: GroupFaults, What: "a load answered while a commit was held at an in-store site, the commit crashed after it", InStore: true},
	{ID: "race/same-scope", Group: GroupRaces, What: "two processes' commits to one scope in flight at once"},
	{ID: "race/same-version", Group: GroupRaces, What: "two processes' commits claiming one version of a scope in flight at once"},
	{ID: "race/commit-acquire", Group: GroupRaces, What: "a commit in flight while another process acquired the fence"},
	{ID: "resend/landed", Group: GroupResends, What: "a batch sent again after its first send was acknowledged"},
	{ID: "resend/refused", Group: GroupResends, What: "a batch sent again after its first send was refused, or acknowledged with a stale token (hidden at load)"},
	{ID: "resend/unknown", Group: GroupResends, What: "a batch sent again after its first send's outcome was unknown"},
}

// Coverage counts what a set of histories reached. Counts holds every
// listed Item's ID (zero when never reached) and, beyond the list, what
// else was seen: "answer/OP/KIND" for every operation and answer kind
// (KIND is ok, or the error kind), "error/KIND" for every error kind
// answered, "fault/LAYER/SITE/KIND" for every fault injected.
type Coverage struct {
	Histories int            `json:"histories"`
	Ops       int            `json:"ops"`
	Counts    map[string]int `json:"counts"`
}

// CoverageOf returns what the histories reached. It is a pure function of
// its argument.
func CoverageOf(hs []*History) Coverage {
	var c Coverage
	for _, h := range hs {
		c.Add(h)
	}
	return c
}

// Add counts what h reached into c.
func (c *Coverage) Add(h *History) {
	if c.Counts == nil {
		c.Counts = map[string]int{}
		for _, it := range covItems {
			c.Counts[it.ID] = 0
		}
	}
	c.Histories++
	c.Ops += len(h.Events)
	for i := range h.Events {
		c.event(&h.Events[i])
	}
	c.clashes(h)
	stale := c.staleTokens(h)
	c.races(h)
	c.resends(h, stale)
}

func (c *Coverage) inc(id string) { c.Counts[id]++ }

// event counts what one event reached on its own.
func (c *Coverage) event(e *Event) {
	if e.Inside != "" && e.Op == OpLoad && e.Returned() && e.Err == "" && !e.Lost && !e.NotSent {
		c.inc("peek/held")
	}
	for _, f := range e.Faults {
		c.inc("fault/" + f.String())
		switch {
		case f.Layer == "wrapper" && f.Kind == "kill" && f.Site == "before-send" && e.NotSent:
			c.inc("fault/kill-before-send")
		case f.Layer == "wrapper" && f.Kind == "kill" && f.Site == "in-flight" && e.Lost:
			c.inc("fault/kill-in-flight")
		case f.Layer == "wrapper" && f.Kind == "kill" && f.Site == "after-answer" && e.Lost:
			c.inc("fault/kill-answer-lost")
		case f.Layer == "wrapper" && f.Kind == "indeterminate" && e.Returned() && e.Err == hoststore.ErrKindIndeterminate:
			c.inc("fault/indeterminate")
		case f.Layer == "instore" && f.Kind == "crash" && e.Lost:
			c.inc("fault/crash-" + f.Site)
		}
	}
	switch e.Op {
	case OpOpen, OpKill, OpClose:
		return
	}
	if e.NotSent || e.Lost || !e.Returned() {
		return
	}
	kind := "ok"
	if e.Err != hoststore.ErrKindNone {
		kind = string(e.Err)
		c.inc("error/" + kind)
	}
	c.inc("answer/" + string(e.Op) + "/" + kind)
	if len(e.Faults) > 0 {
		return // an injected answer says nothing of the store's
	}
	switch e.Op {
	case OpAcquire:
		switch {
		case e.Err == hoststore.ErrKindNone && e.Mode == hoststore.Exclusive.String():
			c.inc("acquire/exclusive")
		case e.Err == hoststore.ErrKindNone && e.Mode == hoststore.Takeover.String():
			c.inc("acquire/takeover")
		case e.Err == hoststore.ErrKindHeld && e.Mode == hoststore.Exclusive.String():
			c.inc("acquire/held")
		}
	case OpRenew:
		if e.Err == hoststore.ErrKindNone {
			c.inc("renew/ok")
		}
	case OpLapse:
		if e.Err == hoststore.ErrKindNone {
			c.inc("lapse/ok")
		}
	case OpLoad:
		switch {
		case e.Err != hoststore.ErrKindNone:
		case e.Head != nil:
			c.inc("load/head")
		default:
			c.inc("load/absent")
		}
	case OpList:
		if e.Err != hoststore.ErrKindNone || e.Page == nil {
			break
		}
		if len(e.Page.Heads) > 0 {
			c.inc("list/heads")
		} else {
			c.inc("list/empty")
		}
		if e.Page.Next != nil {
			c.inc("list/more")
		}
	case OpRead:
		switch {
		case e.Err == hoststore.ErrKindInvalid:
			c.inc("read/invalid")
		case e.Err != hoststore.ErrKindNone:
		case len(e.Rows) > 0:
			c.inc("read/rows")
		default:
			c.inc("read/none")
		}
	case OpCommit:
		switch e.Err {
		case hoststore.ErrKindNone:
			c.inc("commit/ok")
		case hoststore.ErrKindConflict:
			c.inc("commit/clash")
		case hoststore.ErrKindFencedOut:
			c.inc("commit/stale-token")
		}
	}
}

// covAcked reports whether e is a commit the store acknowledged.
func covAcked(e *Event) bool {
	return e.Op == OpCommit && e.Batch != nil && !e.NotSent && !e.Lost && e.Returned() && e.Err == hoststore.ErrKindNone
}

// covClaim is the version of a scope an update claims: the version it
// expects (0 for a create) and the scope.
type covClaim struct {
	scope hoststore.ScopeRef
	prev  hoststore.ScopeVersion
}

func covClaimOf(u hoststore.ScopeUpdate) covClaim {
	c := covClaim{scope: u.Scope}
	if u.Previous != nil {
		c.prev = *u.Previous
	}
	return c
}

// clashes counts the version clashes a store resolved at load: two
// different batches, each acknowledged, that covClaim the same version of a
// scope.
func (c *Coverage) clashes(h *History) {
	by := map[covClaim]hoststore.CommitID{}
	for i := range h.Events {
		e := &h.Events[i]
		if !covAcked(e) {
			continue
		}
		for _, u := range e.Batch.Updates {
			k := covClaimOf(u)
			if id, ok := by[k]; ok && id != e.Batch.ID {
				c.inc("commit/clash")
				continue
			}
			by[k] = e.Batch.ID
		}
	}
}

// staleTokens counts the batches acknowledged with a token that a grant
// returned before the commit's call had superseded: a store that keeps
// fencing at load hides them. It returns their events.
func (c *Coverage) staleTokens(h *History) map[*Event]bool {
	stale := map[*Event]bool{}
	var grants []*Event
	for i := range h.Events {
		e := &h.Events[i]
		if e.Op == OpAcquire && e.Grant != nil && e.Returned() && !e.Lost {
			grants = append(grants, e)
		}
	}
	for i := range h.Events {
		e := &h.Events[i]
		if !covAcked(e) || len(e.Faults) > 0 {
			continue
		}
		for _, g := range grants {
			if g.Return < e.Call && g.Grant.Token > e.Batch.Token {
				c.inc("commit/stale-token")
				stale[e] = true
				break
			}
		}
	}
	return stale
}

// covOverlap reports whether a and b were in flight at once: neither
// returned before the other was called. A call that never returned, or
// whose answer was lost, stays in flight to the end.
func covOverlap(a, b *Event) bool {
	end := func(e *Event) int64 {
		if !e.Returned() || e.Lost {
			return 1<<63 - 1
		}
		return e.Return
	}
	return a.Call < end(b) && b.Call < end(a)
}

// covSent reports whether e is a commit that reached the store.
func covSent(e *Event) bool { return e.Op == OpCommit && e.Batch != nil && !e.NotSent }

// races counts the commits of different processes in flight at once over
// one scope, and over one version of a scope, and the commits in flight
// while another process acquired the fence.
func (c *Coverage) races(h *History) {
	ev := h.Events
	for i := range ev {
		a := &ev[i]
		if !covSent(a) {
			continue
		}
		scope, version, acquire := false, false, false
		for j := range ev {
			b := &ev[j]
			if b.Proc == a.Proc || !covOverlap(a, b) {
				continue
			}
			if b.Op == OpAcquire && j > i {
				acquire = true
			}
			if !covSent(b) || j <= i || b.Batch.ID == a.Batch.ID {
				continue
			}
			for _, u := range a.Batch.Updates {
				v, ok := b.Batch.Update(u.Scope)
				if !ok {
					continue
				}
				scope = true
				if covClaimOf(u) == covClaimOf(v) {
					version = true
				}
			}
		}
		if scope {
			c.inc("race/same-scope")
		}
		if version {
			c.inc("race/same-version")
		}
		if acquire {
			c.inc("race/commit-acquire")
		}
	}
}

// resends counts the batches sent again, by the fate of their first send
// that reached the store: acknowledged, refused (with an error, or
// acknowledged with a stale token, which a store that keeps fencing at
// load hides), or of unknown outcome.
func (c *Coverage) resends(h *History, stale map[*Event]bool) {
	first := map[hoststore.CommitID]*Event{}
	for i := range h.Events {
		e := &h.Events[i]
		if !covSent(e) {
			continue
		}
		f, ok := first[e.Batch.ID]
		if !ok {
			first[e.Batch.ID] = e
			continue
		}
		switch {
		case f.Unknown():
			c.inc("resend/unknown")
		case stale[f]:
			c.inc("resend/refused")
		case f.Err == hoststore.ErrKindNone:
			c.inc("resend/landed")
		default:
			c.inc("resend/refused")
		}
	}
}

// Missing returns the listed items c never reached, in list order.
func (c Coverage) Missing() []Item {
	var out []Item
	for _, it := range covItems {
		if c.Counts[it.ID] == 0 {
			out = append(out, it)
		}
	}
	return out
}

// Reached returns how many listed items c reached.
func (c Coverage) Reached() int { return len(covItems) - len(c.Missing()) }

// Text returns the coverage as a table, one line an item: the listed
// covItems by group with their counts (or "NOT REACHED"), then the answers
// of every operation by kind and the errors answered.
func (c Coverage) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "coverage of %d histories, %d operations: %d of %d items reached\n", c.Histories, c.Ops, c.Reached(), len(covItems))
	group := ""
	for _, it := range covItems {
		if it.Group != group {
			group = it.Group
			fmt.Fprintf(&sb, "%s:\n", group)
		}
		n := fmt.Sprint(c.Counts[it.ID])
		if c.Counts[it.ID] == 0 {
			n = "NOT REACHED"
		}
		fmt.Fprintf(&sb, "  %-28s %11s  %s\n", it.ID, n, it.What)
	}
	var seen []string
	for k := range c.Counts {
		if strings.HasPrefix(k, "answer/") {
			seen = append(seen, k)
		}
	}
	slices.Sort(seen)
	sb.WriteString("answers by operation and kind:\n")
	for _, k := range seen {
		fmt.Fprintf(&sb, "  %-28s %11d\n", strings.TrimPrefix(k, "answer/"), c.Counts[k])
	}
	return sb.String()
}
