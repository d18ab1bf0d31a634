// Package canary is a small in-memory host store for testing the harness
// itself: with no bug set it is correct and passes the whole host store
// chapter; each Bug breaks one thing the way real stores break, so that the
// harness's own tests can check the chapter fails exactly the rows (and
// names exactly the obligations) that bug breaks.
//
// The store is deliberately simple: one realm-wide mutex guards maps of
// scopes and landed commit ids, and a commit checks and applies its whole
// batch under that mutex in one step, its commit point. It calls the
// in-store failpoints (instore.At) at commit-locked, commit-before-point and
// commit-after-point, and never holds its mutex across an At call, so a
// commit held there holds up no other commit, read or fence call. The fence
// runs on a manual clock that only LapseFenceLeases moves. It is written
// from the contract (docs/host-store-contract.md), not from the reference
// store.
package canary

import (
	"fmt"
	"sort"
	"strings"
)

// Bugs is a set of deliberate breaches. The zero value is a correct store.
type Bugs uint64

// The bugs, each named after what it breaks. The obligation in brackets is
// the one a conformant chapter must report.
const (
	// TornBatch [ob:1] applies a batch scope by scope and calls the
	// commit-before-point failpoint between the first scope and the rest, so
	// a crash or a kill there leaves the batch in one scope only.
	TornBatch Bugs = 1 << iota
	// LostOnKill [ob:2] returns nil before the batch is durable: it keeps the
	// batch in the handle and applies it only when the handle's next call
	// (or Close) comes; a killed handle loses it.
	LostOnKill
	// RetryTwice [ob:3] skips the idempotency check: a batch whose commit id
	// already landed is applied again, its rows appended a second time.
	RetryTwice
	// LastWriterWins [ob:4] never checks Previous: a second batch for one
	// version overwrites the first in the scopes it touches, so the loser
	// stays visible in its other scopes.
	LastWriterWins
	// IgnoreToken [ob:5] never checks a batch's token at commit.
	IgnoreToken
	// LateTruncate [ob:6] makes TruncateAfter take effect one batch late:
	// the batch that carries it skips it, and the scope's next batch
	// applies it before its own parts.
	LateTruncate
	// ReversedAppend [ob:7] stores the rows of a multi-row append in
	// reverse order.
	ReversedAppend
	// RealmLock [ob:8] holds one realm-wide lock from before the
	// commit-locked failpoint until after commit-after-point, so a commit
	// held there stalls every other commit.
	RealmLock
	// SkipLastListed [ob:9] leaves each listing page's last name out but
	// sets Next to it, so the next page starts past a scope never listed.
	SkipLastListed
	// RenewNeverFenced [ob:fence] returns nil from a renew of a superseded
	// token.
	RenewNeverFenced
	// ExclusiveIgnoresHolder [ob:fence] never returns *hoststore.HeldError
	// from an exclusive acquire: it supersedes a live holder as a takeover would, and reports
	// no superseded lease.
	ExclusiveIgnoresHolder
	// NoRenewAfterLapse [ob:fence] refuses a renew of the current token
	// with *hoststore.FencedOutError once its lease lapsed.
	NoRenewAfterLapse
	// DropRenumbers [ob:6] renumbers the rows that DropBefore keeps from
	// 0, so a read from 0 returns them.
	DropRenumbers
	// ReadBelowStartOK [ob:ops] returns the rows from the first visible one
	// to a read below it, instead of *hoststore.InvalidError.
	ReadBelowStartOK
	// Panics [ob:errors] panics in Commit for a batch whose commit id
	// contains "rows/".
	Panics
	// Hangs [ob:errors] blocks LoadHead of a scope whose name starts with
	// "stale-fence/" forever, ignoring its context.
	Hangs
	// UnknownError [ob:errors] returns errors.New("boom"), none of the six
	// error types, to ListHeads of the Identity kind.
	UnknownError
	// ListedAfterDelete [ob:9] hides a deleted scope from LoadHead and
	// ReadRows but keeps listing it, with its last head.
	ListedAfterDelete
	// ApplyAsChecked [ob:1] checks and applies a batch update by update: a
	// Conflict in a later update leaves the earlier ones applied.
	ApplyAsChecked
	// UnavailableAfterApply [ob:errors] applies the first send of a batch
	// whose commit id contains "reopen/" and then returns Unavailable,
	// which the contract allows "only when nothing was applied".
	UnavailableAfterApply
	// UTF16Order [ob:9] lists names in the order of their UTF-16 code
	// units (a Java or JavaScript backend), not their UTF-8 bytes.
	UTF16Order
	// PadSpace [ob:2] compares scope names as a SQL PAD SPACE collation
	// does, ignoring trailing spaces: "a" and "a " are one scope, so
	// creating one overwrites the other.
	PadSpace
	// DirtyRead [ob:5] applies a batch, visible to loads, before its commit
	// point, and rolls it back there when its token was superseded
	// meanwhile (or the commit crashed or was killed): a load can show a
	// batch that never lands, as an append-only store that forgets to
	// ignore rows without a commit marker does.
	DirtyRead
	// HangsCommit [ob:errors] blocks the realm's HangCommitAt-th commit
	// forever, ignoring its context, before it checks anything and holding
	// no lock: that one call never answers, while every other call of the
	// realm is served as a correct store serves it.
	HangsCommit
	// Outage [none: the rows after it do not run] loses its server at the
	// realm's OutageAt-th commit: that commit and every later call of any
	// handle, every Open and LapseFenceLeases answer Unavailable.
	Outage
	// ReadIgnoresLimit [ob:ops] answers ReadRows with every visible row from
	// its from to the scope's end, whatever the limit.
	ReadIgnoresLimit
	// CreateOverExisting [ob:4] answers Ok to a create (Previous nil) of a
	// scope that exists and applies it: the scope starts again at the
	// create's version, with its head and its rows from index 0, as an
	// upsert would.
	CreateOverExisting
	// NextAfterFullPage [ob:9] answers a Next after a page that is exactly
	// full though no visible scope follows, which the contract allows, but
	// names the page's first scope in it, not its last: the page it leads
	// to lists the rest of that page again. A page of one entry is not
	// harmed.
	NextAfterFullPage
	// SiteTwicePublish [ob:1, ob:5; found by exploration, not by the rows]
	// passes commit-before-point twice per commit and publishes the batch,
	// visible to loads, between the two passes; its commit point (where it
	// checks the token again) comes after the second pass, and a crash, a
	// kill or a token superseded there rolls the batch back. A hold or a
	// crash at the first pass meets a correct store; one at the second
	// pass shows a batch that may never land.
	SiteTwicePublish
	// StuckCommits [ob:errors; the rows after it do not run] blocks every
	// batch over two scopes or more, from the realm's HangCommitAt-th
	// commit on, forever, ignoring its context, while every other call is
	// served: a store whose multi-scope commits wait on a lock that a
	// stuck commit never lets go.
	StuckCommits
	// LeaksScopeLock [ob:errors; the rows after it do not run] keeps,
	// from the realm's HangCommitAt-th commit on, the lock of each
	// commit's first scope forever: every later commit of that scope
	// never answers, ignoring its context, while every other call is
	// served.
	LeaksScopeLock
	// OkOnEndedContext [ob:2] answers Ok to a commit that stopped because
	// its caller's context ended, before the call or while it waited at a
	// site, though nothing was applied before the commit point.
	OkOnEndedContext
	// EmptyOnEndedContext [ob:ops] answers LoadHead, ListHeads and
	// ReadRows with nothing, and no error, once the caller's context
	// ended, as a store that stops reading its result set when the
	// context ends and does not check why.
	EmptyOnEndedContext
	// HangsOnEndedContext [ob:errors] never answers a commit that stopped
	// because its caller's context ended, ignoring that context.
	HangsOnEndedContext

	bugEnd
)

// NoSites is no bug: the store is correct but calls no in-store site, as
// a store whose author has not added them. The rows that need a site are
// not exercised; the store certifies only as declared without them.
const NoSites Bugs = 1 << 63

var bugNames = map[Bugs]string{
	NoSites:                "no-sites",
	TornBatch:              "torn-batch",
	LostOnKill:             "lost-on-kill",
	RetryTwice:             "retry-twice",
	LastWriterWins:         "last-writer-wins",
	IgnoreToken:            "ignore-token",
	LateTruncate:           "late-truncate",
	ReversedAppend:         "reversed-append",
	RealmLock:              "realm-lock",
	SkipLastListed:         "skip-last-listed",
	RenewNeverFenced:       "renew-never-fenced",
	ExclusiveIgnoresHolder: "exclusive-ignores-holder",
	NoRenewAfterLapse:      "no-renew-after-lapse",
	DropRenumbers:          "drop-renumbers",
	ReadBelowStartOK:       "read-below-start-ok",
	Panics:                 "panics",
	Hangs:                  "hangs",
	UnknownError:           "unknown-error",
	ListedAfterDelete:      "listed-after-delete",
	ApplyAsChecked:         "apply-as-checked",
	UnavailableAfterApply:  "unavailable-after-apply",
	UTF16Order:             "utf16-order",
	PadSpace:               "pad-space",
	DirtyRead:              "dirty-read",
	HangsCommit:            "hangs-commit",
	Outage:                 "outage",
	ReadIgnoresLimit:       "read-ignores-limit",
	CreateOverExisting:     "create-over-existing",
	NextAfterFullPage:      "next-after-full-page",
	SiteTwicePublish:       "site-twice-publish",
	StuckCommits:           "stuck-commits",
	LeaksScopeLock:         "leaks-scope-lock",
	OkOnEndedContext:       "ok-on-ended-context",
	EmptyOnEndedContext:    "empty-on-ended-context",
	HangsOnEndedContext:    "hangs-on-ended-context",
}

// AllBugs lists every single bug, in declaration order.
func AllBugs() []Bugs {
	out := make([]Bugs, 0, len(bugNames)-1)
	for b := Bugs(1); b < bugEnd; b <<= 1 {
		out = append(out, b)
	}
	return out
}

// Has reports whether every bug of x is in b.
func (b Bugs) Has(x Bugs) bool { return x != 0 && b&x == x }

// String names the bugs in b, joined by "+", in declaration order; the
// empty set is "correct".
func (b Bugs) String() string {
	if b == 0 {
		return "correct"
	}
	var names []string
	for _, x := range AllBugs() {
		if b.Has(x) {
			names = append(names, bugNames[x])
		}
	}
	if b.Has(NoSites) {
		names = append(names, bugNames[NoSites])
	}
	if rest := b &^ (bugEnd - 1) &^ NoSites; rest != 0 {
		names = append(names, fmt.Sprintf("Bugs(%#x)", uint64(rest)))
	}
	return strings.Join(names, "+")
}

// Parse reads what String writes: "correct" (or "") is no bug,
// otherwise bug names joined by "+". It refuses an unknown name, listing
// the known ones.
func Parse(s string) (Bugs, error) {
	if s == "" || s == "correct" {
		return 0, nil
	}
	var b Bugs
	for _, name := range strings.Split(s, "+") {
		found := false
		for x, n := range bugNames {
			if n == name {
				b |= x
				found = true
				break
			}
		}
		if !found {
			known := make([]string, 0, len(bugNames))
			for _, n := range bugNames {
				known = append(known, n)
			}
			sort.Strings(known)
			return 0, fmt.Errorf("canary: unknown bug %q; the bugs are %s", name, strings.Join(known, ", "))
		}
	}
	return b, nil
}
