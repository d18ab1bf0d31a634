package explore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Replay plays the operations of a recorded history against realm, a
// fresh realm, and returns what this run recorded: a new History with the
// same operations and new answers, which Check judges like any other.
//
// What replay keeps:
//
//   - The processes and their operations: each process plays its own
//     events, in their recorded order, one goroutine per process; opens,
//     kills and closes of handles are played where they were recorded.
//   - The arguments: modes, scopes, kinds, cursors, indices, limits and
//     batches, byte for byte, commit ids included (the history records the
//     ids it was given).
//   - The faults: a kill before the send, in flight or after the answer,
//     an answer lost as Indeterminate, and a crash at an in-store site are
//     injected into the same commit, as play injects them.
//   - Real-time order: operations are called in their recorded call order,
//     and an operation is called only once every operation that returned
//     before it was called in the recording has returned. Operations that
//     overlapped in the recording may overlap again; how far they do is up
//     to the scheduler.
//   - Tokens, as references: a token is the store's to issue, so a renew
//     or a batch that carried token T carries the token the replay's
//     acquire granted where the recording's acquire granted T (the latest
//     such acquire called before it). A token no acquire of h granted,
//     or whose acquire was refused in the replay, is taken for the token
//     the sending handle's last acquire got, if it got one, and is sent
//     as it is otherwise (a shrunk history may have lost the acquire).
//     A batch sent more than once is sent with the token its first send
//     carried.
//
// An open replaces the process's handle (the one it had stays open); an
// operation of a process with no handle is recorded as not sent.
//
// What replay does not keep: the answers (they are the store's, and are
// what the replay records), the logical clock values (the replay has its
// own, in the same call order), how far overlapping operations
// interleave inside the store, and durations (Held.Remaining and a
// takeover's SupersededLease run on the store's clock). Commits go to the
// store with a suffix on their id that is unique to the replay, so that
// the in-store holds of two replays run at once never catch each other's
// commits; the recorded history shows the ids without it. After the last
// operation, every handle still open is killed, unrecorded, and every
// request abandoned in flight is waited for.
//
// Replay returns an error only when the realm cannot open a first handle
// or the history is malformed (an event's batch that NewCommitBatch
// refuses). The recorded answers of h are ignored, except that an
// acquire's grant names the token later events refer to.
func Replay(ctx context.Context, realm hoststore.HostStoreFactory, h *History, cfg Config) (*History, error) {
	cfg = cfg.withDefaults()
	src := slices.Clone(h.Events)
	slices.SortStableFunc(src, func(a, b Event) int { return cmpInt64(a.Call, b.Call) })
	for i := range src {
		if src[i].Op == OpCommit {
			if src[i].Batch == nil {
				return nil, fmt.Errorf("replay: event %d: a commit without a batch", src[i].ID)
			}
			if _, err := src[i].Batch.Build(); err != nil {
				return nil, fmt.Errorf("replay: event %d: %w", src[i].ID, err)
			}
		}
	}
	held, peeks := peeksOf(src)
	cfg.CallBound, cfg.Observe = nil, nil // a replay's calls are not timed
	pl, release, err := newPlayer(ctx, realm, cfg)
	if err != nil {
		return nil, err
	}
	defer release()
	// A replay waits for every request a kill abandoned, however long.
	pl.names, pl.abandon = newNames(pl.run), context.Background()
	ctx = pl.ctx
	out := &History{Seed: h.Seed, Lease: pl.lease}

	procs, in := map[int]*proc{}, map[int]chan int{}
	var ids []int
	for i := range src {
		p := src[i].Proc
		if procs[p] == nil {
			procs[p], in[p] = &proc{pl: pl, id: p}, make(chan int)
			ids = append(ids, p)
		}
	}
	out.Procs = len(ids)
	started := make([]chan struct{}, len(src))
	done := make([]chan struct{}, len(src))
	for i := range src {
		started[i], done[i] = make(chan struct{}), make(chan struct{})
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		p, in := procs[id], in[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range in {
				replayEvent(ctx, p, &src[i], held[i], peeks[i], started[i], done[i])
			}
		}()
	}

	// The coordinator: calls in recorded call order, each after the calls
	// that returned before it in the recording.
	dispatched := 0
	waited := make([]bool, len(src))
dispatch:
	for i := range src {
		for j := range i {
			if waited[j] || !src[j].Returned() || src[j].Return >= src[i].Call {
				continue
			}
			select {
			case <-done[j]:
				waited[j] = true
			case <-ctx.Done():
				break dispatch
			}
		}
		if ps := peeks[i]; ps != nil {
			// A peek waits for its commit to be held at the site (or
			// to have ended without getting there).
			select {
			case <-ps.arrived:
			case <-ctx.Done():
				break dispatch
			}
		}
		select {
		case in[src[i].Proc] <- i:
		case <-ctx.Done():
			break dispatch
		}
		select { // the call closes started before it can block, and done always
		case <-started[i]:
		case <-done[i]:
		}
		dispatched++
	}
	for _, id := range ids {
		close(in[id])
	}
	waitOrEnd(ctx, &wg)
	for _, id := range ids {
		procs[id].finish(ctx)
	}
	// Each process recorded one event for each dispatched to it, in
	// dispatch order.
	recorded, next := map[int][]Event{}, map[int]int{}
	for _, id := range ids {
		recorded[id] = procs[id].recorded()
	}
	for i := range dispatched {
		p := src[i].Proc
		out.Events = append(out.Events, recorded[p][next[p]])
		next[p]++
	}
	for i := range out.Events {
		out.Events[i].ID = i
	}
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// replayEvent plays e, an event of the script, on p; it closes started
// once the call is on the clock and done once it returned. A commit some
// peeks are inside of has held set; a peek has peek set, the state of the
// commit it is inside of. A panic of the store is recorded in the event.
func replayEvent(ctx context.Context, p *proc, e *Event, held, peek *peekState, started, done chan struct{}) {
	defer close(done)
	p.mu.Lock()
	n := len(p.events)
	p.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			p.mu.Lock()
			if len(p.events) == n { // it panicked before the call
				p.events = append(p.events, Event{})
			}
			p.events[len(p.events)-1].Panic = panicText(v)
			p.mu.Unlock()
		}
	}()
	if peek != nil {
		defer peek.returned()
	}
	var hold func()
	if held != nil {
		defer held.arrive() // a commit that never got to its site, or was not sent
		hold = held.hold(ctx)
	}
	p.started = started
	c, err := p.call(ctx, e.request(), hold)
	if e.Op == OpAcquire && err == nil && e.Grant != nil {
		p.pl.names.granted(e.Grant.Token, c.Grant.Token)
	}
}

// finish kills every handle the process opened and waits for what they
// abandoned in flight, so that no request outlives the replay. When ctx
// has ended (a store that hangs), it does not wait.
func (p *proc) finish(ctx context.Context) {
	p.mu.Lock()
	all := slices.Clone(p.all)
	p.mu.Unlock()
	for _, s := range all {
		s.Kill()
		_ = s.WaitAbandoned(ctx)
	}
}

// peekState is what a replay knows of a commit that was peeked inside:
// how many of its peeks are still to return, and whether it got to its
// site.
type peekState struct {
	pending  atomic.Int32
	arrived  chan struct{} // closed when the commit is held, or ended
	arriveMu sync.Once
	allDone  chan struct{} // closed when every peek returned
}

func (ps *peekState) arrive() { ps.arriveMu.Do(func() { close(ps.arrived) }) }

func (ps *peekState) returned() {
	if ps.pending.Add(-1) == 0 {
		close(ps.allDone)
	}
}

// peeksOf returns, for each event of src (in call order), the state kept
// for it: held[i] for a commit with an in-store crash that peeks are
// inside of, peek[i] for a peek, the state of the commit it is inside of.
// An event is a peek of the latest send of the commit it names (Inside)
// with an in-store crash that was called before it, when another process
// made it before that send returned; an event naming a commit that no
// such send explains is played as a plain call.
func peeksOf(src []Event) (held, peek []*peekState) {
	held, peek = make([]*peekState, len(src)), make([]*peekState, len(src))
	crash := map[hoststore.CommitID]int{} // id → its latest send with a crash
	for i := range src {
		e := &src[i]
		if c, ok := crash[e.Inside]; ok && e.Inside != "" && src[c].Proc != e.Proc && (!src[c].Returned() || e.Call < src[c].Return) {
			ps := held[c]
			if ps == nil {
				ps = &peekState{arrived: make(chan struct{}), allDone: make(chan struct{})}
				held[c] = ps
			}
			ps.pending.Add(1)
			peek[i] = ps
		}
		if e.Op == OpCommit && e.Batch != nil && slices.ContainsFunc(e.Faults, func(f Fault) bool { return f.Layer == "instore" && f.Kind == "crash" }) {
			crash[e.Batch.ID] = i
		}
	}
	return held, peek
}

// hold returns what a commit held for its peeks does at its site: it
// lets the peeks be called, and waits until they returned, PeekBound
// passed or ctx ended.
func (ps *peekState) hold(ctx context.Context) func() {
	return func() {
		ps.arrive()
		t := time.NewTimer(PeekBound)
		defer t.Stop()
		select {
		case <-ps.allDone:
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// answerOf returns an event's answer for comparing two replays: its
// answer text, with durations (which run on the store's clock) left out.
func answerOf(e *Event) string {
	c := *e
	if c.Held != nil {
		c.Held = &hoststore.HeldError{Holder: c.Held.Holder}
	}
	if c.Grant != nil {
		c.Grant = &hoststore.FenceGrant{Token: c.Grant.Token}
		if e.Grant.SupersededLease > 0 {
			c.Grant.SupersededLease = 1
		}
	}
	return c.answerText()
}

// Twice is what ReplayTwice found.
type Twice struct {
	// Runs are the two replays' recordings, and Verdicts their checks.
	Runs     [2]*History `json:"runs"`
	Verdicts [2]Verdict  `json:"verdicts"`
	// Same reports whether the two runs agree: the same judgement (result,
	// and the obligations and events of the findings, in order) and the
	// same answer to every operation, durations aside.
	Same bool `json:"same"`
	// Diff says where they first differ, when they do.
	Diff string `json:"diff,omitempty"`
}

// ReplayTwice replays h on two fresh realms from newRealm, one after the
// other, judges both, and reports whether the store behaved the same way
// both times. A repro that does not is not one the store can be held to:
// its outcome depends on the interleaving or on the store's own state.
func ReplayTwice(ctx context.Context, newRealm func() (hoststore.HostStoreFactory, error), h *History, cfg Config) (Twice, error) {
	var t Twice
	for i := range 2 {
		realm, err := newRealm()
		if err != nil {
			return t, fmt.Errorf("explore: replay %d: new realm: %w", i+1, err)
		}
		t.Runs[i], err = Replay(ctx, realm, h, cfg)
		if err != nil {
			return t, fmt.Errorf("explore: replay %d: %w", i+1, err)
		}
		t.Verdicts[i] = Check(t.Runs[i], cfg.Check)
	}
	t.Diff = differ(t.Runs, t.Verdicts)
	t.Same = t.Diff == ""
	return t, nil
}

// differ returns where two replays first differ, or "".
func differ(runs [2]*History, vs [2]Verdict) string {
	judged := func(v Verdict) string {
		s := string(v.Result)
		for _, f := range v.Findings {
			s += fmt.Sprintf(" %s@#%d", f.Obligation, f.Event)
		}
		return s
	}
	if a, b := judged(vs[0]), judged(vs[1]); a != b {
		return fmt.Sprintf("judgement: first %s, then %s", a, b)
	}
	a, b := runs[0].Events, runs[1].Events
	if len(a) != len(b) {
		return fmt.Sprintf("events: first %d, then %d", len(a), len(b))
	}
	for i := range a {
		if x, y := answerOf(&a[i]), answerOf(&b[i]); x != y {
			return fmt.Sprintf("#%d %s: first %s, then %s", i, a[i].Op, x, y)
		}
	}
	return ""
}
