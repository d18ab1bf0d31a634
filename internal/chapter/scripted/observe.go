package scripted

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/writer"
	"github.com/conform-spi/conform/reports"
)

// observer watches every process of a scripted run from outside its
// writer: the fence requests and commits each sends, and the model and
// tool calls it makes, on the run's clock. It checks the writer rules
// on what it saw, independently of the writer's own bookkeeping, so that a
// writer that breaks a rule fails the chapter even when the run ends well.
type observer struct {
	clock  *writer.ManualClock
	window time.Duration

	ids *idLog // every commit id sent over the realm, by every spec

	mu       sync.Mutex
	procs    map[int]*obsProc
	okIDs    map[hoststore.CommitID]bool
	findings []finding
}

// idLog is the content of every commit id sent over one realm.
type idLog struct {
	mu sync.Mutex
	m  map[hoststore.CommitID][sha256.Size]byte
}

// realmIDs holds an idLog per chapter run (its Env, over one realm), so
// that an id a spec reuses from an earlier spec is caught too.
var realmIDs sync.Map

func idLogOf(e *chapter.Env) *idLog {
	v, _ := realmIDs.LoadOrStore(e, &idLog{m: map[hoststore.CommitID][sha256.Size]byte{}})
	return v.(*idLog)
}

// record notes id's content and returns false when id was sent before
// with other content.
func (g *idLog) record(id hoststore.CommitID, sum [sha256.Size]byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	old, ok := g.m[id]
	g.m[id] = sum
	return !ok || old == sum
}

// finding is one writer rule broken.
type finding struct {
	ob      reports.ObligationID
	message string
}

// obsProc is what the observer knows of one process.
type obsProc struct {
	explicit  bool // opened for an explicit takeover
	token     hoststore.FenceToken
	legit     bool      // may commit and dispatch, subject to the window
	base      time.Time // start of its last successful acquire or renew
	waitUntil time.Time // end of the takeover wait
	heldOwn   bool      // its last acquire answered Held with its own token
	listed    bool      // it listed heads since its first acquire
	committed bool      // it sent a commit
	unknown   map[hoststore.ScopeRef]hoststore.CommitID
}

func newObserver(c *writer.ManualClock, window time.Duration, ids *idLog) *observer {
	return &observer{clock: c, window: window, ids: ids, procs: map[int]*obsProc{}, okIDs: map[hoststore.CommitID]bool{}}
}

func (o *observer) at(t time.Time) string { return "+" + t.Sub(writer.ManualEpoch).String() }

func (o *observer) find(ob reports.ObligationID, format string, args ...any) {
	o.findings = append(o.findings, finding{ob: ob, message: fmt.Sprintf(format, args...)})
}

// Findings returns what the observer found so far.
func (o *observer) Findings() []finding {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]finding(nil), o.findings...)
}

// landed tells whether a store returned nil to a commit with id.
func (o *observer) landed(id hoststore.CommitID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.okIDs[id]
}

func (o *observer) proc(pid int) *obsProc {
	p := o.procs[pid]
	if p == nil {
		p = &obsProc{unknown: map[hoststore.ScopeRef]hoststore.CommitID{}}
		o.procs[pid] = p
	}
	return p
}

// open registers process pid; explicit says it was asked to take over.
func (o *observer) open(pid int, explicit bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.proc(pid).explicit = explicit
}

// acquired records an acquire that started at start.
func (o *observer) acquired(pid int, mode hoststore.AcquireMode, start time.Time, g hoststore.FenceGrant, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.proc(pid)
	if mode == hoststore.Takeover && !p.explicit && !p.heldOwn {
		o.find(chapter.ObWriter, "p%d acquired with Takeover at %s, but it was not asked to take over and its last exclusive acquire did not answer Held with its own token (Core acquires exclusively)", pid, o.at(start))
	}
	p.heldOwn = false
	var held *hoststore.HeldError
	if errors.As(err, &held) {
		p.heldOwn = p.token != 0 && held.Holder == p.token
	}
	if err != nil {
		return
	}
	p.token, p.legit, p.base = g.Token, true, start
	p.waitUntil = time.Time{}
	if g.SupersededLease > 0 {
		p.waitUntil = o.clock.Now().Add(g.SupersededLease)
	}
}

// renewed records a renew that started at start.
func (o *observer) renewed(pid int, start time.Time, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.proc(pid)
	if err == nil && p.legit && start.Sub(p.base) < o.window {
		p.base = start
		return
	}
	p.legit = false // "It never resumes on a later renew."
}

// listed records a list_heads.
func (o *observer) listed(pid int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.proc(pid).listed = true
}

// loaded records a load_head: it settles an unknown outcome in s.
func (o *observer) loaded(pid int, s hoststore.ScopeRef) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.proc(pid).unknown, s)
}

// legitLocked says why pid may not act at t, or "".
func (o *observer) whyNotLocked(p *obsProc, t time.Time) string {
	switch {
	case p.token == 0:
		return "it had acquired no fence"
	case !p.legit:
		return "a renew had failed or come after its window closed, and no fresh acquire followed"
	case t.Sub(p.base) >= o.window:
		return fmt.Sprintf("its last acquire or renew started at %s, a self-fence window of %s or more before", o.at(p.base), o.window)
	}
	return ""
}

// sending checks a commit as it is sent, at t.
func (o *observer) sending(pid int, b *hoststore.CommitBatch, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.proc(pid)
	if why := o.whyNotLocked(p, t); why != "" {
		o.find(chapter.ObWriter, "p%d sent commit %q at %s, when it should have fenced itself: %s", pid, b.CommitID(), o.at(t), why)
	}
	if !p.committed && !p.listed {
		o.find(chapter.ObWriter, "p%d sent its first commit %q without loading the heads with list_heads after its acquire", pid, b.CommitID())
	}
	p.committed = true
	if !o.ids.record(b.CommitID(), batchContent(b)) {
		o.find(chapter.ObWriter, "p%d sent commit id %q with different content than an earlier batch under that id (a commit id is never reused for different content)", pid, b.CommitID())
	}
	for _, s := range b.Scopes() {
		if id, ok := p.unknown[s]; ok && id != b.CommitID() {
			o.find(chapter.ObWriter, "p%d sent commit %q to %s while its earlier commit %q there had an unknown outcome, neither retried nor settled by a load", pid, b.CommitID(), s, id)
		}
	}
}

// answered records a commit's answer.
func (o *observer) answered(pid int, b *hoststore.CommitBatch, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.proc(pid)
	switch hoststore.KindOf(err) {
	case hoststore.ErrKindNone:
		o.okIDs[b.CommitID()] = true
		fallthrough
	case hoststore.ErrKindConflict, hoststore.ErrKindFencedOut, hoststore.ErrKindInvalid, hoststore.ErrKindUnavailable:
		for s, id := range p.unknown {
			if id == b.CommitID() {
				delete(p.unknown, s)
			}
		}
	default:
		for _, s := range b.Scopes() {
			p.unknown[s] = b.CommitID()
		}
	}
}

// called checks a model or tool call that pid starts now.
func (o *observer) called(pid int, what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.proc(pid)
	now := o.clock.Now()
	if why := o.whyNotLocked(p, now); why != "" {
		o.find(chapter.ObWriter, "p%d started %s at %s, when it should have fenced itself: %s", pid, what, o.at(now), why)
	}
	if now.Before(p.waitUntil) {
		o.find(chapter.ObWriter, "p%d started %s at %s, %s before the lease it superseded ran out (%s): a new holder waits out superseded_lease first", pid, what, o.at(now), p.waitUntil.Sub(now), o.at(p.waitUntil))
	}
}

// batchContent digests what a batch does, without its token.
func batchContent(b *hoststore.CommitBatch) [sha256.Size]byte {
	h := sha256.New()
	num := func(v uint64) { h.Write(binary.BigEndian.AppendUint64(nil, v)) }
	blob := func(p []byte) { num(uint64(len(p))); h.Write(p) }
	opt := func(p *hoststore.RowIndex) {
		if p == nil {
			num(0)
			return
		}
		num(1)
		num(uint64(*p))
	}
	for _, u := range b.Updates() {
		num(uint64(u.Scope.Kind))
		blob([]byte(u.Scope.Name))
		if u.Previous != nil {
			num(1 + uint64(*u.Previous))
		} else {
			num(0)
		}
		num(uint64(u.Next))
		if u.Head != nil {
			num(1)
			blob(*u.Head)
		} else {
			num(0)
		}
		num(uint64(len(u.Append)))
		for _, r := range u.Append {
			blob(r)
		}
		opt(u.TruncateAfter)
		opt(u.DropBefore)
		if u.Delete {
			num(1)
		} else {
			num(0)
		}
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}
