package explore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// The player runs operations (Events) against a realm, one goroutine per
// process, for Play and for Replay alike. What differs between the two is
// who chooses the next operation (the generator, or the script and its
// coordinator), how a call is named to the store (names), how long a
// kill's abandoned requests are waited for (abandon), and whether calls
// are timed (Config.CallBound and Observe, which Replay leaves unset).

// runs numbers the runs of the process, so that commit ids (which
// in-store holds match) never repeat between histories run at once.
var runs atomic.Uint64

// player is what the processes of one run share.
type player struct {
	realm hoststore.HostStoreFactory
	cfg   Config
	inj   *faults.Injector // the run's (Config.Injector), or the history's own
	run   uint64
	procs int             // processes generated; observers are numbered after them
	ctx   context.Context // the run's
	stop  context.CancelFunc
	// deadline ends the run; each lapse moves it later by lease, which
	// also bounds a lapse beyond the per-call bound.
	deadline *deadline
	lease    time.Duration
	// abandon bounds the wait for the requests a kill abandoned in flight.
	abandon context.Context
	names   *names // nil: every call is sent as it is
	clock   atomic.Int64
	handles atomic.Int64

	mu   sync.Mutex
	sent []*Batch // every batch sent so far, for resends
	hang *hang    // the first call that hung
}

// newPlayer opens a first handle on realm, to learn its lease, kills it,
// and returns the player of a run bounded by cfg.HistoryTimeout, and what
// releases it. It returns an error when the realm gives no first handle.
func newPlayer(ctx context.Context, realm hoststore.HostStoreFactory, cfg Config) (*player, func(), error) {
	inj := cfg.Injector
	if inj == nil {
		inj = faults.NewInjector()
	}
	ctx, dl, cancel := withDeadline(inj.Bind(ctx), cfg.HistoryTimeout)
	first, err := realm.Open(ctx)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("open: %w", err)
	}
	if first == nil {
		cancel()
		return nil, nil, errors.New("open returned no handle and no error")
	}
	ctx, stop := context.WithCancel(ctx)
	pl := &player{realm: realm, cfg: cfg, inj: inj, run: runs.Add(1), ctx: ctx, stop: stop, deadline: dl, lease: first.FenceTiming().Lease(), abandon: ctx}
	if k, ok := first.(hoststore.Killer); ok {
		k.Kill()
	}
	return pl, func() { stop(); cancel() }, nil
}

func (pl *player) remember(b *Batch) {
	pl.mu.Lock()
	pl.sent = append(pl.sent, b)
	pl.mu.Unlock()
}

func (pl *player) pickSent(rng interface{ IntN(int) int }) *Batch {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if len(pl.sent) == 0 {
		return nil
	}
	return pl.sent[rng.IntN(len(pl.sent))]
}

// Hang is a call that did not return within its bound (Config.CallBound).
type Hang struct {
	// Event is the call's event in the history.
	Event int `json:"event"`
	// Op is the operation, or kill for a request abandoned in flight
	// that never finished after its handle was killed.
	Op Op `json:"op"`
	// Bound is how long it was given.
	Bound time.Duration `json:"bound"`
}

type hang struct {
	Hang
	call int64 // the event's call, until events are numbered
}

// hung records that event i of p hung after bound, and ends the run.
// With running set, the call itself is the hang, and a call that returned
// in the meantime is none; otherwise (a kill whose abandoned request never
// finished) the event counts whether it returned or not.
func (pl *player) hung(p *proc, i int, op Op, bound time.Duration, running bool) {
	p.mu.Lock()
	returned := running && p.events[i].Returned()
	call := p.events[i].Call
	p.mu.Unlock()
	if returned {
		return
	}
	pl.mu.Lock()
	if pl.hang == nil {
		pl.hang = &hang{Hang: Hang{Op: op, Bound: bound}, call: call}
	}
	pl.mu.Unlock()
	pl.stop()
}

// waitOrEnd waits for wg, or for ctx to end: a call that ignores its
// context keeps its goroutine, and what it sent stays recorded as never
// returned.
func waitOrEnd(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// proc is one process of a run: one goroutine, one handle at a time.
type proc struct {
	pl     *player
	id     int
	h      *faults.Store
	handle int
	tok    hoststore.FenceToken // the token the handle's last acquire got
	// started, when set, is closed once the next call is on the clock.
	started chan struct{}

	mu     sync.Mutex // guards what follows against the run's read after a timeout
	events []Event
	all    []*faults.Store // every handle opened
	watch  *time.Timer     // the hang watch of the call in flight
	begun  time.Time       // when the call in flight began, for Observe
}

// begin records the call of e and returns its index.
func (p *proc) begin(e Event) int {
	e.Proc, e.Handle = p.id, p.handle
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Call = p.pl.clock.Add(1)
	p.events = append(p.events, e)
	i := len(p.events) - 1
	if p.pl.cfg.Observe != nil {
		p.begun = time.Now()
	}
	if cb := p.pl.cfg.CallBound; cb != nil && e.Inside == "" {
		bound := cb(e.Op)
		if len(e.Faults) > 0 && e.Faults[0].Layer == "instore" {
			bound += PeekBound
		}
		if e.Op == OpLapse {
			// A store may lapse its leases by waiting out its lease.
			bound += p.pl.lease
		}
		p.watch = time.AfterFunc(bound, func() { p.pl.hung(p, i, e.Op, bound, true) })
	}
	if p.started != nil {
		close(p.started)
		p.started = nil
	}
	return i
}

// unwatch stops the hang watch of the call in flight; called with p.mu
// held.
func (p *proc) unwatch() {
	if p.watch != nil {
		p.watch.Stop()
		p.watch = nil
	}
}

// end records the return of event i and what came back, and returns the
// event as recorded.
func (p *proc) end(i int, err error, fill func(*Event)) Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unwatch()
	e := &p.events[i]
	if ob := p.pl.cfg.Observe; ob != nil && e.Inside == "" && e.Op != OpKill {
		ob(e.Op, time.Since(p.begun))
	}
	e.Return = p.pl.clock.Add(1)
	recordErr(e, err)
	if fill != nil {
		fill(e)
	}
	return *e
}

// call runs e on the process's handle, and returns it as recorded and the
// error the store answered.
func (p *proc) call(ctx context.Context, e Event, held func()) (Event, error) {
	return p.start(ctx, e, held)()
}

// start begins e, the call of an event (its operation, arguments and
// faults): it names the call to the store, injects its faults, records
// the call, and returns what makes the request, records its answer and
// returns the event as recorded. An operation other than an open, a kill
// or a lapse on a process with no handle is recorded as not sent. held,
// when set, runs once a commit is held at the site of its in-store crash;
// the commit crashes when it returns (see inject).
func (p *proc) start(ctx context.Context, e Event, held func()) func() (Event, error) {
	pl, h := p.pl, p.h
	var built *hoststore.CommitBatch
	switch e.Op {
	case OpOpen:
		p.handle, p.tok = int(pl.handles.Add(1)), 0
	case OpRenew:
		e.Token = pl.names.token(e.Token, p.tok)
	case OpCommit:
		e.Batch, built = pl.names.batch(e.Batch, p.tok)
	case OpLapse:
		pl.deadline.extend(pl.lease) // a store may lapse by waiting out its lease
	}
	// req makes the request, and returns what fills in its answer, which
	// end runs with p.mu held.
	var req func() (func(*Event), error)
	notSent := func(text string) func() (func(*Event), error) {
		return func() (func(*Event), error) { return func(e *Event) { e.NotSent, e.Text = true, text }, nil }
	}
	undo := func() {}
	switch e.Op {
	case OpOpen:
		req = func() (func(*Event), error) {
			s, err := pl.realm.Open(ctx)
			return func(*Event) {
				if err == nil && s != nil {
					p.h = pl.inj.Wrap(s)
					p.all = append(p.all, p.h)
				}
			}, err
		}
	case OpKill:
		req = func() (func(*Event), error) {
			if h != nil {
				h.Kill()
			}
			return func(*Event) { p.h = nil }, nil
		}
	case OpLapse:
		req = func() (func(*Event), error) { return nil, pl.realm.LapseFenceLeases(ctx) }
	}
	switch {
	case req != nil:
	case h == nil:
		req = notSent("replay: the process has no handle")
	case e.Op == OpClose:
		req = func() (func(*Event), error) {
			if c, ok := h.Inner().(io.Closer); ok {
				return nil, c.Close()
			}
			return nil, nil
		}
	case e.Op == OpAcquire:
		mode := hoststore.Exclusive
		if e.Mode == hoststore.Takeover.String() {
			mode = hoststore.Takeover
		}
		req = func() (func(*Event), error) {
			g, err := h.AcquireFence(ctx, mode)
			return func(o *Event) {
				if err == nil {
					o.Grant, p.tok = &g, g.Token
				}
			}, err
		}
	case e.Op == OpRenew:
		req = func() (func(*Event), error) { return nil, h.RenewFence(ctx, e.Token) }
	case e.Op == OpLoad:
		req = func() (func(*Event), error) {
			hd, err := h.LoadHead(ctx, *e.Scope)
			if hd != nil {
				hd.CommitID = pl.names.unsend(hd.CommitID)
			}
			return func(o *Event) { o.Head = hd }, err
		}
	case e.Op == OpList:
		req = func() (func(*Event), error) {
			pg, err := h.ListHeads(ctx, e.Kind, e.After, e.Limit)
			for k := range pg.Heads {
				pg.Heads[k].Head.CommitID = pl.names.unsend(pg.Heads[k].Head.CommitID)
			}
			return func(o *Event) {
				if err == nil {
					o.Page = &pg
				}
			}, err
		}
	case e.Op == OpRead:
		req = func() (func(*Event), error) {
			rows, err := h.ReadRows(ctx, *e.Scope, e.From, e.Limit)
			return func(o *Event) { o.Rows = rows }, err
		}
	case e.Op == OpCommit:
		undo = inject(ctx, pl.inj, h, e.Faults, built.CommitID(), held)
		req = func() (func(*Event), error) {
			err := h.Commit(ctx, built)
			return func(o *Event) { recordCommitLoss(o, err, e.Faults) }, err
		}
	default:
		req = notSent("replay: unknown operation " + string(e.Op))
	}
	i := p.begin(e)
	return func() (Event, error) {
		defer undo() // also when the store panicked
		fill, err := req()
		ev := p.end(i, err, fill)
		if e.Op == OpKill && h != nil {
			p.waitAbandoned(i, h)
		}
		return ev, err
	}
}

// waitAbandoned waits for what killed handle h, whose kill is event i,
// abandoned in flight, within the player's bound, so that no request
// outlives its run. A request still running after the per-call bound for
// a commit is a hang.
func (p *proc) waitAbandoned(i int, h *faults.Store) {
	pl := p.pl
	wait, bound := pl.abandon, time.Duration(0)
	if cb := pl.cfg.CallBound; cb != nil {
		bound = cb(OpCommit)
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(wait, bound)
		defer cancel()
	}
	if err := h.WaitAbandoned(wait); err != nil && wait.Err() != nil && pl.ctx.Err() == nil {
		// A request abandoned in flight still running after its bound:
		// the store ignores the context of a call it cannot answer.
		pl.hung(p, i, OpKill, bound, false)
	}
}

// recordErr records err as e's answer: a kill of the process as Lost,
// any other error by its kind, its text and its typed details.
func recordErr(e *Event, err error) {
	if errors.Is(err, faults.ErrKilled) {
		e.Lost = true
	} else if err != nil {
		e.Err, e.Text = hoststore.KindOf(err), err.Error()
		var he *hoststore.HeldError
		if errors.As(err, &he) {
			e.Held = &hoststore.HeldError{Holder: he.Holder, Remaining: he.Remaining}
		}
		var fe *hoststore.FencedOutError
		if errors.As(err, &fe) {
			e.Fence = &hoststore.FencedOutError{Current: fe.Current}
		}
		var ce *hoststore.ConflictError
		if errors.As(err, &ce) {
			e.Clash = &hoststore.ConflictError{Scope: ce.Scope, Current: ce.Current}
		}
	}
}

// recordCommitLoss marks a commit's loss as the player knows it: a crash
// at an in-store site loses the answer, and a kill before the send means
// the request never reached the store.
func recordCommitLoss(e *Event, err error, fs []Fault) {
	if errors.Is(err, instore.ErrCrashed) {
		e.Lost = true
	}
	if e.Lost && len(fs) > 0 && fs[0].Site == faults.BeforeSend.String() {
		e.Lost, e.NotSent = false, true
	}
}

// wrapperPhases are the wrapper phases a Fault's Site names.
var wrapperPhases = map[string]faults.Phase{faults.BeforeSend.String(): faults.BeforeSend, faults.InFlight.String(): faults.InFlight,
	faults.AfterAnswer.String(): faults.AfterAnswer}

// inject sets up the faults fs of a commit sent as id on h, those that
// replayable accepts, with its holds on inj, and returns what undoes what
// is left of them. A
// crash at an in-store site with held set holds the commit at its site,
// runs held, and crashes the commit once held returned; without held, the
// commit crashes at the site.
func inject(ctx context.Context, inj *faults.Injector, h *faults.Store, fs []Fault, id hoststore.CommitID, held func()) func() {
	match := func(c *hoststore.CommitBatch) bool { return c.CommitID() == id }
	var undo []func()
	for _, f := range fs {
		if !replayable(f) {
			continue
		}
		if f.Layer == "wrapper" {
			eff := faults.EffectKill
			if f.Kind == "indeterminate" {
				eff = faults.EffectIndeterminate
			}
			in := h.Inject(faults.Rule{Op: faults.OpCommit, Phase: wrapperPhases[f.Site], Effect: eff, Match: match})
			undo = append(undo, in.Remove)
			continue
		}
		hold := inj.HoldAtPass(instore.Site(f.Site), max(f.Pass, 1), func(c hoststore.CommitID) bool { return c == id })
		if held == nil {
			hold.Crash()
		} else {
			stop, watched := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(watched)
				select {
				case <-hold.Arrived():
					held()
				case <-stop:
				}
				hold.Crash()
			}()
			undo = append(undo, func() { close(stop); <-watched })
		}
		undo = append(undo, hold.Disarm)
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// recoverPanic, deferred around a process's calls, takes a panic of the
// store: the call in flight records it (Event.Panic) and the run ends
// there, as a store that panics would crash the process it runs in.
func (p *proc) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	p.mu.Lock()
	for i := len(p.events) - 1; i >= 0; i-- {
		if e := &p.events[i]; !e.Returned() {
			e.Panic = panicText(v)
			p.unwatch()
			break
		}
	}
	p.mu.Unlock()
	p.pl.stop()
}

// panicText returns a panic's value as one bounded line of text.
func panicText(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// PeekBound bounds how long a commit held for a peek waits for the peek's
// load: a store may block loads while a commit is in progress, and then
// the commit crashes at the bound, the load still running. A store that
// does not block loads never reaches it, so it does not make a history
// depend on time.
const PeekBound = 2 * time.Second

// names is how a replay names its calls to the store: tokens as the
// replay's store issued them, and commit ids with a suffix of the
// replay's own. A nil *names (play) sends every call as it is.
type names struct {
	suffix string // appended to every commit id sent

	mu      sync.Mutex
	tokens  map[hoststore.FenceToken]hoststore.FenceToken // recorded grant → the replay's
	batches map[hoststore.CommitID]*Batch                 // recorded id → the batch as first sent (recorded id, replay token)
	sent    map[hoststore.CommitID]hoststore.CommitID     // id sent → recorded id
}

func newNames(run uint64) *names {
	return &names{suffix: fmt.Sprintf("~x%d", run), tokens: map[hoststore.FenceToken]hoststore.FenceToken{},
		batches: map[hoststore.CommitID]*Batch{}, sent: map[hoststore.CommitID]hoststore.CommitID{}}
}

// token returns what to send for recorded token t from a process whose
// handle last got token own (0: none).
func (n *names) token(t, own hoststore.FenceToken) hoststore.FenceToken {
	if n == nil {
		return t
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.tokenLocked(t, own)
}

func (n *names) tokenLocked(t, own hoststore.FenceToken) hoststore.FenceToken {
	if r, ok := n.tokens[t]; ok {
		return r
	}
	if t != 0 && own != 0 {
		return own
	}
	return t
}

// granted notes that the acquire whose recorded grant was t got got.
func (n *names) granted(t, got hoststore.FenceToken) {
	n.mu.Lock()
	n.tokens[t] = got
	n.mu.Unlock()
}

// batch returns the batch to record for b, and the batch to send. It
// panics when the batch does not build: the generator or the script's
// check let through what NewCommitBatch refuses.
func (n *names) batch(b *Batch, own hoststore.FenceToken) (*Batch, *hoststore.CommitBatch) {
	if n == nil {
		built, err := b.Build()
		if err != nil {
			panic("explore: the generator built a batch NewCommitBatch refuses: " + err.Error())
		}
		return b, built
	}
	n.mu.Lock()
	rb := n.batches[b.ID]
	if rb == nil {
		rb = &Batch{ID: b.ID, Token: n.tokenLocked(b.Token, own), Updates: cloneUpdates(b.Updates)}
		n.batches[b.ID] = rb
	}
	id := sentID(b.ID, n.suffix)
	n.sent[id] = b.ID
	n.mu.Unlock()
	built, err := hoststore.NewCommitBatch(id, rb.Token, rb.Updates)
	if err != nil {
		panic("explore: replay: a batch that built when checked no longer builds: " + err.Error())
	}
	return rb, built
}

// unsend maps a commit id the store answered back to the recorded one.
func (n *names) unsend(id hoststore.CommitID) hoststore.CommitID {
	if n == nil {
		return id
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if o, ok := n.sent[id]; ok {
		return o
	}
	return id
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

func cloneUpdates(us []hoststore.ScopeUpdate) []hoststore.ScopeUpdate {
	out := make([]hoststore.ScopeUpdate, len(us))
	for i, u := range us {
		out[i] = u.Clone()
	}
	return out
}

// recorded returns a copy of the events p recorded so far: an answer that
// comes later is not in it.
func (p *proc) recorded() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}
