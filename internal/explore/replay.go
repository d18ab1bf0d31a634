package explore

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
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
//     injected into the same commit, as the driver injects them.
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
	ctx, dl, cancel := withDeadline(ctx, cfg.HistoryTimeout)
	defer cancel()
	first, err := realm.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if first == nil {
		return nil, errors.New("open returned no handle and no error")
	}
	r := &replayer{realm: realm, suffix: fmt.Sprintf("~x%d", runs.Add(1)), tokens: map[hoststore.FenceToken]hoststore.FenceToken{},
		batches: map[hoststore.CommitID]*Batch{}, sent: map[hoststore.CommitID]hoststore.CommitID{}}
	out := &History{Seed: h.Seed, Lease: first.FenceTiming().Lease()}
	r.deadline, r.lease = dl, out.Lease
	if k, ok := first.(hoststore.Killer); ok {
		k.Kill()
	}

	procs := map[int]*rproc{}
	var ids []int
	for i := range src {
		p := src[i].Proc
		if procs[p] == nil {
			procs[p] = &rproc{r: r, id: p, in: make(chan int)}
			ids = append(ids, p)
		}
	}
	out.Procs = len(ids)
	played := make([]Event, len(src))
	started := make([]chan struct{}, len(src))
	done := make([]chan struct{}, len(src))
	for i := range src {
		started[i], done[i] = make(chan struct{}), make(chan struct{})
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		p := procs[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range p.in {
				p.play(ctx, &src[i], &played[i], held[i], peeks[i], started[i], done[i])
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
		case procs[src[i].Proc].in <- i:
		case <-ctx.Done():
			break dispatch
		}
		select { // play closes started before it can block, and done always
		case <-started[i]:
		case <-done[i]:
		}
		dispatched++
	}
	for _, id := range ids {
		close(procs[id].in)
	}
	waitOrEnd(ctx, &wg)
	for _, id := range ids {
		procs[id].finish(ctx)
	}
	for i := range dispatched {
		r.mu.Lock()
		e := played[i]
		r.mu.Unlock()
		out.Events = append(out.Events, e)
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

// replayer is what a replay's processes share.
type replayer struct {
	realm  hoststore.HostStoreFactory
	suffix string // appended to every commit id sent
	// deadline ends the replay; each lapse moves it later by lease.
	deadline *deadline
	lease    time.Duration
	clock    atomic.Int64
	handles  atomic.Int64

	mu      sync.Mutex // guards what follows, and every played event
	tokens  map[hoststore.FenceToken]hoststore.FenceToken
	batches map[hoststore.CommitID]*Batch             // recorded id → the batch as first sent (recorded id, replay token)
	sent    map[hoststore.CommitID]hoststore.CommitID // id sent → recorded id
}

// token returns what the replay sends for recorded token t from a
// process whose handle last got token own (0: none).
func (r *replayer) token(t, own hoststore.FenceToken) hoststore.FenceToken {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tokenLocked(t, own)
}

func (r *replayer) tokenLocked(t, own hoststore.FenceToken) hoststore.FenceToken {
	if n, ok := r.tokens[t]; ok {
		return n
	}
	if t != 0 && own != 0 {
		return own
	}
	return t
}

// batch returns the batch to record for b, and the batch to send.
func (r *replayer) batch(b *Batch, own hoststore.FenceToken) (*Batch, *hoststore.CommitBatch, error) {
	r.mu.Lock()
	rb := r.batches[b.ID]
	if rb == nil {
		rb = &Batch{ID: b.ID, Token: r.tokenLocked(b.Token, own), Updates: cloneUpdates(b.Updates)}
		r.batches[b.ID] = rb
	}
	id := sentID(b.ID, r.suffix)
	r.sent[id] = b.ID
	r.mu.Unlock()
	built, err := hoststore.NewCommitBatch(id, rb.Token, rb.Updates)
	return rb, built, err
}

// sentID returns the id a replay sends for recorded id: id and suffix, or,
// when that is over MaxCommitIDBytes, as much of id as fits, cut between
// two characters, with a hash of the whole id before the suffix, so that
// two long ids stay two ids.
func sentID(id hoststore.CommitID, suffix string) hoststore.CommitID {
	if len(id)+len(suffix) <= hoststore.MaxCommitIDBytes {
		return id + hoststore.CommitID(suffix)
	}
	sum := fnv.New64a()
	sum.Write([]byte(id))
	tail := fmt.Sprintf("~%016x%s", sum.Sum64(), suffix)
	head := string(id[:max(hoststore.MaxCommitIDBytes-len(tail), 0)])
	for head != "" && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return hoststore.CommitID(head + tail)
}

// unsend maps a commit id the store answered back to the recorded one.
func (r *replayer) unsend(id hoststore.CommitID) hoststore.CommitID {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.sent[id]; ok {
		return o
	}
	return id
}

func cloneUpdates(us []hoststore.ScopeUpdate) []hoststore.ScopeUpdate {
	out := make([]hoststore.ScopeUpdate, len(us))
	for i, u := range us {
		out[i] = u.Clone()
	}
	return out
}

// rproc is one process of a replay.
type rproc struct {
	r      *replayer
	id     int
	in     chan int
	h      *faults.Store
	handle int
	tok    hoststore.FenceToken // the token the handle's last acquire got
	all    []*faults.Store      // every handle opened, for finish
}

// finish kills every handle the process left open and waits for what
// they abandoned in flight, so that no request outlives the replay.
// When ctx has ended (a store that hangs), it does not wait.
func (p *rproc) finish(ctx context.Context) {
	p.r.mu.Lock()
	all := slices.Clone(p.all)
	p.r.mu.Unlock()
	for _, s := range all {
		s.Kill()
		_ = s.WaitAbandoned(ctx)
	}
}

// play plays event e, recording it in out; it closes started once the
// call is on the clock and done once it returned.
// A commit some peeks are inside of has held set; a peek has peek set, the
// state of the commit it is inside of.
func (p *rproc) play(ctx context.Context, e *Event, out *Event, held, peek *peekState, started, done chan struct{}) {
	r := p.r
	defer close(done)
	defer func() {
		if v := recover(); v != nil {
			r.mu.Lock()
			out.Panic = panicText(v)
			r.mu.Unlock()
		}
	}()
	if peek != nil {
		defer peek.returned()
	}
	if held != nil {
		defer held.arrive() // a commit that never got to its site, or was not sent
	}
	ev := Event{Proc: p.id, Op: e.Op, Mode: e.Mode, Scope: e.Scope, Kind: e.Kind, After: e.After, From: e.From, Limit: e.Limit,
		Faults: slices.Clone(e.Faults), Inside: e.Inside}
	var (
		built *hoststore.CommitBatch
		err   error
	)
	switch e.Op {
	case OpOpen:
		p.handle, p.tok = int(r.handles.Add(1)), 0
	case OpRenew:
		ev.Token = r.token(e.Token, p.tok)
	case OpCommit:
		ev.Batch, built, err = r.batch(e.Batch, p.tok)
		if err != nil {
			panic("explore: replay: a batch that built when checked no longer builds: " + err.Error())
		}
	}
	ev.Handle = p.handle
	begin := func() {
		r.mu.Lock()
		ev.Call = r.clock.Add(1)
		*out = ev
		r.mu.Unlock()
		close(started)
	}
	end := func(fill func(*Event)) {
		r.mu.Lock()
		defer r.mu.Unlock()
		out.Return = r.clock.Add(1)
		recordErr(out, err)
		if fill != nil {
			fill(out)
		}
	}
	if p.h == nil && e.Op != OpOpen && e.Op != OpLapse && e.Op != OpKill {
		begin()
		end(func(e *Event) { e.NotSent, e.Text = true, "replay: the process has no handle" })
		return
	}
	switch e.Op {
	case OpOpen:
		begin()
		var s hoststore.HostStore
		s, err = r.realm.Open(ctx)
		end(nil)
		if err == nil && s != nil {
			p.h = faults.Wrap(s)
			r.mu.Lock()
			p.all = append(p.all, p.h)
			r.mu.Unlock()
		}
	case OpKill:
		begin()
		if p.h != nil {
			p.h.Kill()
		}
		end(nil)
		if p.h != nil {
			_ = p.h.WaitAbandoned(context.Background())
		}
		p.h = nil
	case OpClose:
		begin()
		if c, ok := p.h.Inner().(io.Closer); ok {
			err = c.Close()
		}
		end(nil)
	case OpLapse:
		r.deadline.extend(r.lease) // a store may lapse by waiting out its lease
		begin()
		err = r.realm.LapseFenceLeases(ctx)
		end(nil)
	case OpAcquire:
		mode := hoststore.Exclusive
		if e.Mode == hoststore.Takeover.String() {
			mode = hoststore.Takeover
		}
		begin()
		var g hoststore.FenceGrant
		g, err = p.h.AcquireFence(ctx, mode)
		end(func(o *Event) {
			if err == nil {
				o.Grant, p.tok = &g, g.Token
				if e.Grant != nil {
					r.tokens[e.Grant.Token] = g.Token
				}
			}
		})
	case OpRenew:
		begin()
		err = p.h.RenewFence(ctx, ev.Token)
		end(nil)
	case OpLoad:
		begin()
		var hd *hoststore.VersionedHead
		hd, err = p.h.LoadHead(ctx, *e.Scope)
		if hd != nil {
			hd.CommitID = r.unsend(hd.CommitID)
		}
		end(func(o *Event) { o.Head = hd })
	case OpList:
		begin()
		var pg hoststore.HeadPage
		pg, err = p.h.ListHeads(ctx, e.Kind, e.After, e.Limit)
		for i := range pg.Heads {
			pg.Heads[i].Head.CommitID = r.unsend(pg.Heads[i].Head.CommitID)
		}
		end(func(o *Event) {
			if err == nil {
				o.Page = &pg
			}
		})
	case OpRead:
		begin()
		var rows []hoststore.Row
		rows, err = p.h.ReadRows(ctx, *e.Scope, e.From, e.Limit)
		end(func(o *Event) { o.Rows = rows })
	case OpCommit:
		disarm := inject(ctx, p.h, ev.Faults, built.CommitID(), held)
		begin()
		err = p.h.Commit(ctx, built)
		end(func(o *Event) { recordCommitLoss(o, err, ev.Faults) })
		disarm()
	default:
		begin()
		end(func(o *Event) { o.NotSent, o.Text = true, "replay: unknown operation "+string(e.Op) })
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

// inject sets up the recorded faults of a commit of id on h, as the
// driver's faultCommit does, and returns what undoes what is left of them.
// A commit peeked inside (ps not nil) is held at its crash's site until
// its peeks returned, PeekBound passed or ctx ended, and crashes then.
func inject(ctx context.Context, h *faults.Store, fs []Fault, id hoststore.CommitID, ps *peekState) func() {
	match := func(c *hoststore.CommitBatch) bool { return c.CommitID() == id }
	var undo []func()
	for _, f := range fs {
		switch f.Layer {
		case "wrapper":
			ph, ok := map[string]faults.Phase{faults.BeforeSend.String(): faults.BeforeSend, faults.InFlight.String(): faults.InFlight,
				faults.AfterAnswer.String(): faults.AfterAnswer}[f.Site]
			if !ok {
				continue
			}
			eff := faults.EffectKill
			if f.Kind == "indeterminate" {
				eff = faults.EffectIndeterminate
				if ph == faults.InFlight {
					continue
				}
			}
			in := h.Inject(faults.Rule{Op: faults.OpCommit, Phase: ph, Effect: eff, Match: match})
			undo = append(undo, in.Remove)
		case "instore":
			site := instore.Site(f.Site)
			if !slices.Contains(instore.Sites, site) {
				continue
			}
			hold := faults.HoldAtPass(site, max(f.Pass, 1), func(c hoststore.CommitID) bool { return c == id })
			switch {
			case f.Kind == "crash" && ps != nil:
				stop, watched := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(watched)
					select {
					case <-hold.Arrived():
						ps.arrive()
						t := time.NewTimer(PeekBound)
						defer t.Stop()
						select {
						case <-ps.allDone:
						case <-t.C:
						case <-ctx.Done():
						}
					case <-stop:
					}
					hold.Crash()
				}()
				undo = append(undo, func() { close(stop); <-watched; ps.arrive() })
			case f.Kind == "crash":
				hold.Crash()
			}
			undo = append(undo, hold.Disarm)
		}
	}
	return func() {
		for _, u := range undo {
			u()
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

// Script returns h as a script for Replay: the events' calls, arguments,
// faults and clock, with the answers left out except the acquires'
// grants (which name the tokens later events refer to).
func Script(h *History) *History {
	c := &History{Seed: h.Seed, Procs: h.Procs, Lease: h.Lease, Events: make([]Event, len(h.Events))}
	for i, e := range h.Events {
		c.Events[i] = Event{ID: e.ID, Proc: e.Proc, Handle: e.Handle, Op: e.Op, Call: e.Call, Return: e.Return,
			Mode: e.Mode, Token: e.Token, Scope: e.Scope, Kind: e.Kind, After: e.After, From: e.From, Limit: e.Limit,
			Batch: e.Batch, Faults: e.Faults, Inside: e.Inside}
		if e.Op == OpAcquire && e.Grant != nil {
			c.Events[i].Grant = &hoststore.FenceGrant{Token: e.Grant.Token}
		}
	}
	return c
}

// reproPrefix versions the repro encoding.
const reproPrefix = "h1."

// EncodeRepro returns h's script (see Script) on one line: "h1." and the
// URL-safe, unpadded base64 of the deflated JSON. It holds no space,
// semicolon, percent sign, plus or equals sign, so it can be the value of
// a key=value part of a repro string as it is. DecodeRepro reads it back.
func EncodeRepro(h *History) (string, error) {
	data, err := json.Marshal(Script(h))
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(data); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return reproPrefix + base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// maxReproJSON bounds the JSON a repro may inflate to.
const maxReproJSON = 16 << 20

// DecodeRepro reads back what EncodeRepro wrote: a script Replay plays.
func DecodeRepro(s string) (*History, error) {
	rest, ok := strings.CutPrefix(s, reproPrefix)
	if !ok {
		return nil, fmt.Errorf("explore: repro %.16q…: does not start with %q", s, reproPrefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("explore: repro: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxReproJSON+1))
	if err != nil {
		return nil, fmt.Errorf("explore: repro: %w", err)
	}
	if len(data) > maxReproJSON {
		return nil, fmt.Errorf("explore: repro: over %d bytes of JSON", maxReproJSON)
	}
	return decodeScript(data)
}

// Bounds on a script read from a repro, far above what a generated or
// shrunk history holds (MaxOps operations over at most 4 processes and
// their observers).
const (
	maxReproEvents = 1 << 14
	maxReproProcs  = 64
)

// decodeScript returns the script whose JSON is data, as DecodeRepro
// reads it, or an error naming the first thing wrong with it: too many
// events, or an event with an unknown operation, a process out of range,
// a clock that is not positive or a return not after its call, an acquire
// mode that is not one, a missing argument, a batch NewCommitBatch
// refuses, or a fault that is not one replay injects.
func decodeScript(data []byte) (*History, error) {
	var h History
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("explore: repro: %w", err)
	}
	if len(h.Events) > maxReproEvents {
		return nil, fmt.Errorf("explore: repro: %d events, over the limit of %d", len(h.Events), maxReproEvents)
	}
	for i := range h.Events {
		if err := checkScriptEvent(&h.Events[i]); err != nil {
			return nil, fmt.Errorf("explore: repro: event %d: %w", i, err)
		}
	}
	return &h, nil
}

// checkScriptEvent returns what is wrong with e as an event of a script
// Replay plays, or nil.
func checkScriptEvent(e *Event) error {
	switch e.Op {
	case OpAcquire, OpRenew, OpLapse, OpLoad, OpList, OpRead, OpCommit, OpOpen, OpKill, OpClose:
	default:
		return fmt.Errorf("unknown operation %.32q", e.Op)
	}
	if e.Proc < 0 || e.Proc >= maxReproProcs {
		return fmt.Errorf("proc %d out of range [0, %d)", e.Proc, maxReproProcs)
	}
	if e.Call < 1 {
		return fmt.Errorf("call %d is not a positive clock", e.Call)
	}
	if e.Return != 0 && e.Return <= e.Call {
		return fmt.Errorf("return %d is not after call %d", e.Return, e.Call)
	}
	if e.Op == OpAcquire && e.Mode != hoststore.Exclusive.String() && e.Mode != hoststore.Takeover.String() {
		return fmt.Errorf("acquire mode %.32q is not Exclusive or Takeover", e.Mode)
	}
	if e.Op == OpCommit && e.Batch == nil || (e.Op == OpLoad || e.Op == OpRead) && e.Scope == nil {
		return fmt.Errorf("%s lacks its arguments", e.Op)
	}
	if e.Op == OpCommit {
		if _, err := e.Batch.Build(); err != nil {
			return err
		}
	}
	if len(e.Faults) > 0 && e.Op != OpCommit {
		return fmt.Errorf("faults on a %s: only a commit takes faults", e.Op)
	}
	for _, f := range e.Faults {
		if !replayable(f) {
			return fmt.Errorf("fault %.64q is not one replay injects", f.String())
		}
	}
	return nil
}

// replayable reports whether inject injects f: a kill before the send, in
// flight or after the answer, an Indeterminate answer before the send or
// after the answer, or a crash at an in-store site, at a pass not below 0.
func replayable(f Fault) bool {
	switch f.Layer {
	case "wrapper":
		switch f.Site {
		case faults.BeforeSend.String(), faults.AfterAnswer.String():
			return f.Kind == "kill" || f.Kind == "indeterminate"
		case faults.InFlight.String():
			return f.Kind == "kill"
		}
	case "instore":
		return f.Kind == "crash" && f.Pass >= 0 && slices.Contains(instore.Sites, instore.Site(f.Site))
	}
	return false
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
