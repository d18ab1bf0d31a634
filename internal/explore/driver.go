package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// Config says how much to explore. Budgets count histories and
// operations, never wall time, so that a run is the same size on any
// machine. The zero value of each field takes the default named.
type Config struct {
	// Seed chooses every history; history i has a seed derived from it.
	Seed uint64
	// Histories is how many histories to run (default 20).
	Histories int
	// MaxOps bounds the operations of one history (default 200). Lengths
	// vary from a few operations up to it.
	MaxOps int
	// MaxProcs bounds the concurrent processes of one history, 1 to 4
	// (default 4).
	MaxProcs int
	// NoFaults turns off injected faults and kills: only the operations.
	NoFaults bool
	// StopAtFirst ends the run after the first history with a finding.
	StopAtFirst bool
	// HistoryTimeout bounds one history's run, as a guard against a
	// store that hangs; calls still running then are recorded as never
	// returned (default 20 s).
	HistoryTimeout time.Duration
	// Check bounds each history's check.
	Check CheckConfig
	// CallBound, when set, returns how long one call of op may take
	// before it is a hang: the history ends there, its context cancelled,
	// and History.Hang names the call. A commit held at an in-store site
	// gets PeekBound more; a peek is bounded by PeekBound alone.
	CallBound func(op Op) time.Duration
	// Observe, when set, is told how long each call that returned took
	// (peeks aside), so that the bounds follow the store's latency.
	Observe func(op Op, took time.Duration)
}

func (c Config) withDefaults() Config {
	if c.Histories <= 0 {
		c.Histories = 20
	}
	if c.MaxOps <= 0 {
		c.MaxOps = 200
	}
	if c.MaxProcs <= 0 || c.MaxProcs > 4 {
		c.MaxProcs = 4
	}
	c.MaxOps = max(c.MaxOps, 3)
	if c.HistoryTimeout <= 0 {
		c.HistoryTimeout = 20 * time.Second
	}
	return c
}

// HistoryFinding is one history that failed its check, kept whole.
type HistoryFinding struct {
	// Index is the history's number in the run, counting from 0.
	Index int `json:"index"`
	// Seed is the history's own seed (HistorySeed(cfg.Seed, Index)).
	Seed uint64 `json:"seed"`
	// Findings are the breaches the check found; the first is the headline.
	Findings []Finding `json:"findings"`
	// History is what ran.
	History *History `json:"history"`
}

// Result is what Run returns.
type Result struct {
	// Histories and Ops count what ran: histories played and judged, and
	// events recorded.
	Histories int `json:"histories"`
	Ops       int `json:"ops"`
	// Undecided counts the histories whose check ran out of its bound.
	Undecided int `json:"undecided"`
	// Failed holds every history with a finding, in run order.
	Failed []HistoryFinding `json:"failed,omitempty"`
}

// HistorySeed returns the seed of history i of a run with seed seed: a
// fixed mix of the two (SplitMix64), the same on every machine.
func HistorySeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Run plays cfg.Histories histories against fresh realms from newRealm,
// each generated from its own seed, and judges each with Check. It
// returns what ran and every history that failed, or an error when a
// realm could not be made or opened at all (nothing to judge). A finding
// is never an error.
func Run(ctx context.Context, newRealm func() (hoststore.HostStoreFactory, error), cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	var res Result
	for i := range cfg.Histories {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		realm, err := newRealm()
		if err != nil {
			return res, fmt.Errorf("explore: history %d: new realm: %w", i, err)
		}
		seed := HistorySeed(cfg.Seed, i)
		h, err := Play(ctx, realm, seed, cfg)
		if err != nil {
			return res, fmt.Errorf("explore: history %d (seed %d): %w", i, seed, err)
		}
		res.Histories++
		res.Ops += len(h.Events)
		v := Check(h, cfg.Check)
		if v.Result == Undecided {
			res.Undecided++
		}
		if len(v.Findings) > 0 {
			res.Failed = append(res.Failed, HistoryFinding{Index: i, Seed: seed, Findings: v.Findings, History: h})
			if cfg.StopAtFirst {
				return res, nil
			}
		}
	}
	return res, nil
}

// runs numbers histories across the process, so that commit ids (which
// in-store holds match) never repeat between histories run at once.
var runs atomic.Uint64

// Play runs the history seed chooses against realm, one goroutine per
// process, and returns it recorded. It returns an error only when the
// realm cannot open a first handle.
func Play(ctx context.Context, realm hoststore.HostStoreFactory, seed uint64, cfg Config) (*History, error) {
	cfg = cfg.withDefaults()
	p := newPlan(seed, cfg.MaxOps, cfg.MaxProcs)
	ctx, dl, cancel := withDeadline(ctx, cfg.HistoryTimeout)
	defer cancel()
	first, err := realm.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if first == nil {
		return nil, errors.New("open returned no handle and no error")
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	h := &History{Seed: seed, Procs: p.procs, Lease: first.FenceTiming().Lease()}
	d := &driver{realm: realm, cfg: cfg, run: runs.Add(1), procs: p.procs, stop: stop, ctx: ctx, deadline: dl, lease: h.Lease}
	if k, ok := first.(hoststore.Killer); ok {
		k.Kill()
	}
	procs := make([]*proc, p.procs)
	var wg sync.WaitGroup
	for i := range procs {
		procs[i] = &proc{d: d, id: i, ch: chooser{rng: p.procRNG(i), pool: p.pool}, view: map[hoststore.ScopeRef]*belief{}}
		wg.Add(1)
		go func(pr *proc, n int) {
			defer wg.Done()
			defer pr.recoverPanic()
			pr.run(ctx, n)
		}(procs[i], p.steps[i])
	}
	waitOrEnd(ctx, &wg)
	for _, pr := range procs {
		// A process that ignored its context may still be running: its
		// observer is read under its lock, as observer sets it.
		pr.mu.Lock()
		o := pr.obs
		pr.mu.Unlock()
		if o != nil {
			h.Procs++
			o.mu.Lock()
			h.Events = append(h.Events, o.events...)
			o.mu.Unlock()
		}
		pr.mu.Lock()
		h.Events = append(h.Events, pr.events...)
		pr.mu.Unlock()
	}
	slices.SortFunc(h.Events, func(a, b Event) int { return int(a.Call - b.Call) })
	for i := range h.Events {
		h.Events[i].ID = i
	}
	d.mu.Lock()
	if hg := d.hang; hg != nil {
		for i := range h.Events {
			if h.Events[i].Call == hg.call {
				hg.Event = i
			}
		}
		h.Hang = &hg.Hang
	}
	d.mu.Unlock()
	return h, nil
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

// hung records that event i of p hung after bound, and ends the history.
// With running set, the call itself is the hang, and a call that returned
// in the meantime is none; otherwise (a kill whose abandoned request never
// finished) the event counts whether it returned or not.
func (d *driver) hung(p *proc, i int, op Op, bound time.Duration, running bool) {
	p.mu.Lock()
	returned := running && p.events[i].Returned()
	call := p.events[i].Call
	p.mu.Unlock()
	if returned {
		return
	}
	d.mu.Lock()
	if d.hang == nil {
		d.hang = &hang{Hang: Hang{Op: op, Bound: bound}, call: call}
	}
	d.mu.Unlock()
	d.stop()
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

// driver is what a history's processes share.
type driver struct {
	realm hoststore.HostStoreFactory
	cfg   Config
	run   uint64
	procs int             // processes generated
	ctx   context.Context // the history's
	stop  context.CancelFunc
	// deadline ends the history; each lapse moves it later by lease,
	// which also bounds a lapse beyond the per-call bound.
	deadline *deadline
	lease    time.Duration
	clock    atomic.Int64
	handles  atomic.Int64

	mu   sync.Mutex
	sent []*Batch // every batch sent so far, for resends
	hang *hang    // the first call that hung
}

func (d *driver) remember(b *Batch) {
	d.mu.Lock()
	d.sent = append(d.sent, b)
	d.mu.Unlock()
}

func (d *driver) pickSent(rng interface{ IntN(int) int }) *Batch {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.sent) == 0 {
		return nil
	}
	return d.sent[rng.IntN(len(d.sent))]
}

// proc is one process of a history: one goroutine, one handle at a time.
type proc struct {
	d      *driver
	id     int
	ch     chooser
	h      *faults.Store
	handle int
	token  hoststore.FenceToken
	view   map[hoststore.ScopeRef]*belief
	n      int   // batches made
	obs    *proc // peeks inside this process's held commits (observer)

	mu     sync.Mutex // guards events against the driver's read after a timeout
	events []Event
	watch  *time.Timer // the hang watch of the call in flight
	start  time.Time   // when the call in flight began, for Observe
}

// begin records the call of e and returns its index.
func (p *proc) begin(e Event) int {
	e.Proc, e.Handle = p.id, p.handle
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Call = p.d.clock.Add(1)
	p.events = append(p.events, e)
	i := len(p.events) - 1
	if p.d.cfg.Observe != nil {
		p.start = time.Now()
	}
	if cb := p.d.cfg.CallBound; cb != nil && e.Inside == "" {
		bound := cb(e.Op)
		if len(e.Faults) > 0 && e.Faults[0].Layer == "instore" {
			bound += PeekBound
		}
		if e.Op == OpLapse {
			// A store may lapse its leases by waiting out its lease.
			bound += p.d.lease
		}
		p.watch = time.AfterFunc(bound, func() { p.d.hung(p, i, e.Op, bound, true) })
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

// end records the return of event i and what came back.
func (p *proc) end(i int, err error, fill func(*Event)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unwatch()
	e := &p.events[i]
	if ob := p.d.cfg.Observe; ob != nil && e.Inside == "" && e.Op != OpKill {
		ob(e.Op, time.Since(p.start))
	}
	e.Return = p.d.clock.Add(1)
	recordErr(e, err)
	if fill != nil {
		fill(e)
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

// recordCommitLoss marks a commit's loss as the driver knows it: a crash
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

func (p *proc) run(ctx context.Context, steps int) {
	defer func() {
		if p.obs != nil {
			p.obs.kill()
		}
	}()
	if !p.open(ctx) {
		return
	}
	for range steps {
		if ctx.Err() != nil {
			return
		}
		p.do(ctx, p.ch.step())
	}
	p.kill()
}

// open gives the process a new handle, as a new process: it knows no
// token and nothing of the realm.
func (p *proc) open(ctx context.Context) bool {
	p.handle = int(p.d.handles.Add(1))
	p.token = 0
	clear(p.view)
	i := p.begin(Event{Op: OpOpen})
	s, err := p.d.realm.Open(ctx)
	p.end(i, err, nil)
	if err != nil || s == nil {
		return false
	}
	p.h = faults.Wrap(s)
	return true
}

// kill ends the handle as a crash would, and waits for what it abandoned
// in flight, so no request outlives its history.
func (p *proc) kill() {
	if p.h == nil {
		return
	}
	i := p.begin(Event{Op: OpKill})
	p.h.Kill()
	p.end(i, nil, nil)
	wait, bound := p.d.ctx, time.Duration(0)
	if cb := p.d.cfg.CallBound; cb != nil {
		bound = cb(OpCommit)
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(wait, bound)
		defer cancel()
	}
	if err := p.h.WaitAbandoned(wait); err != nil && wait.Err() != nil && p.d.ctx.Err() == nil {
		// A request abandoned in flight still running after its bound:
		// the store ignores the context of a call it cannot answer.
		p.d.hung(p, i, OpKill, bound, false)
	}
	p.h = nil
}

func (p *proc) do(ctx context.Context, s step) {
	if p.h == nil || p.h.Killed() {
		p.kill()
		if !p.open(ctx) {
			return
		}
	}
	if p.token == 0 && (s == stepCommit || s == stepRenew || s == stepFaultCommit) {
		s = stepAcquire
	}
	switch s {
	case stepAcquire:
		p.acquire(ctx)
	case stepRenew:
		p.renew(ctx, p.token)
	case stepLapse:
		p.d.deadline.extend(p.d.lease)
		i := p.begin(Event{Op: OpLapse})
		err := p.d.realm.LapseFenceLeases(ctx)
		p.end(i, err, nil)
	case stepLoad:
		p.load(ctx, p.ch.scope())
	case stepList:
		p.list(ctx)
	case stepRead:
		p.read(ctx)
	case stepCommit:
		p.commit(ctx, p.newBatch(), nil)
	case stepResend:
		if b := p.d.pickSent(p.ch.rng); b != nil {
			p.commit(ctx, b, nil)
		} else {
			p.load(ctx, p.ch.scope())
		}
	case stepFaultCommit:
		if p.d.cfg.NoFaults {
			p.commit(ctx, p.newBatch(), nil)
			return
		}
		p.faultCommit(ctx)
	case stepKill:
		if p.d.cfg.NoFaults {
			p.load(ctx, p.ch.scope())
			return
		}
		if c, ok := p.h.Inner().(io.Closer); ok && p.ch.pct(25) {
			i := p.begin(Event{Op: OpClose})
			err := c.Close()
			p.end(i, err, nil)
		}
		p.kill()
		p.open(ctx)
	}
}

func (p *proc) acquire(ctx context.Context) {
	mode := hoststore.Exclusive
	if p.ch.pct(35) {
		mode = hoststore.Takeover
	}
	i := p.begin(Event{Op: OpAcquire, Mode: mode.String()})
	g, err := p.h.AcquireFence(ctx, mode)
	p.end(i, err, func(e *Event) {
		if err == nil {
			e.Grant = &g
		}
	})
	if err == nil {
		p.token = g.Token
	}
}

// renew renews tok, the handle's token or one a batch carried.
func (p *proc) renew(ctx context.Context, tok hoststore.FenceToken) {
	i := p.begin(Event{Op: OpRenew, Token: tok})
	err := p.h.RenewFence(ctx, tok)
	p.end(i, err, nil)
	if hoststore.KindOf(err) == hoststore.ErrKindFencedOut && tok == p.token && p.ch.pct(50) {
		p.token = 0 // a writer stops; the other half goes on with its stale token
	}
}

func (p *proc) load(ctx context.Context, s hoststore.ScopeRef) {
	i := p.begin(Event{Op: OpLoad, Scope: hoststore.Ptr(s)})
	h, err := p.h.LoadHead(ctx, s)
	p.end(i, err, func(e *Event) { e.Head = h })
	if err == nil {
		p.see(s, h)
	}
}

func (p *proc) see(s hoststore.ScopeRef, h *hoststore.VersionedHead) {
	b := p.belief(s)
	if h == nil {
		*b = belief{}
		return
	}
	if !b.live || b.version != h.Version {
		b.live, b.version = true, h.Version
	}
}

func (p *proc) belief(s hoststore.ScopeRef) *belief {
	b := p.view[s]
	if b == nil {
		b = &belief{}
		p.view[s] = b
	}
	return b
}

func (p *proc) list(ctx context.Context) {
	kind := p.ch.kind()
	var after *hoststore.ScopeName
	left := 0
	for _, s := range p.ch.pool {
		if s.Kind == kind {
			left++
		}
	}
	if p.ch.pct(40) {
		s := p.ch.scope()
		after = hoststore.Ptr(s.Name)
		left = 0
		for _, t := range p.ch.pool {
			if t.Kind == kind && t.Name > s.Name {
				left++
			}
		}
	}
	for pages := 0; pages < 8; pages++ {
		limit := p.ch.limit(left)
		i := p.begin(Event{Op: OpList, Kind: kind, After: after, Limit: limit})
		pg, err := p.h.ListHeads(ctx, kind, after, limit)
		p.end(i, err, func(e *Event) {
			if err == nil {
				e.Page = &pg
			}
		})
		if err != nil || pg.Next == nil || !p.ch.pct(60) {
			return
		}
		for _, nh := range pg.Heads {
			p.see(hoststore.ScopeRef{Kind: kind, Name: nh.Name}, hoststore.Ptr(nh.Head))
		}
		after = pg.Next
		left = max(left-len(pg.Heads), 0)
	}
}

func (p *proc) read(ctx context.Context) {
	s := p.ch.scope()
	b := p.belief(s)
	from := p.ch.around(b.start, b.end)
	limit := p.ch.limit(int(b.end) - int(from))
	i := p.begin(Event{Op: OpRead, Scope: hoststore.Ptr(s), From: from, Limit: limit})
	rows, err := p.h.ReadRows(ctx, s, from, limit)
	p.end(i, err, func(e *Event) { e.Rows = rows })
	switch {
	case err == nil && len(rows) > 0:
		b.start = min(b.start, rows[0].Index)
		b.end = max(b.end, rows[len(rows)-1].Index+1)
	case hoststore.KindOf(err) == hoststore.ErrKindInvalid:
		b.start = max(b.start, from+1)
		b.end = max(b.end, b.start)
	}
}

func (p *proc) newBatch() *Batch {
	p.n++
	id := hoststore.CommitID(fmt.Sprintf("r%d-p%d-c%d", p.d.run, p.id, p.n))
	return &Batch{ID: id, Token: p.token, Updates: p.ch.batch(id, p.view)}
}

// commit sends b, with inject set up around it when not nil.
func (p *proc) commit(ctx context.Context, b *Batch, fs []Fault) {
	built, err := b.Build()
	if err != nil {
		panic("explore: the generator built a batch NewCommitBatch refuses: " + err.Error())
	}
	p.d.remember(b)
	i := p.begin(Event{Op: OpCommit, Batch: b, Faults: fs})
	err = p.h.Commit(ctx, built)
	p.end(i, err, func(e *Event) { recordCommitLoss(e, err, fs) })
	switch k := hoststore.KindOf(err); {
	case err == nil:
		for _, u := range b.Updates {
			p.belief(u.Scope).learn(u)
		}
	case errors.Is(err, instore.ErrCrashed):
		p.kill() // a crashed commit is a dead process
	case k == hoststore.ErrKindConflict:
		var ce *hoststore.ConflictError
		if errors.As(err, &ce) {
			p.see(ce.Scope, nil)
			if ce.Current != nil {
				bl := p.belief(ce.Scope)
				bl.live, bl.version = true, *ce.Current
			}
		}
	case k == hoststore.ErrKindFencedOut:
		// Half the writers stop; the other half check their lease
		// with a renew of the token the commit was refused for, as a
		// writer that doubts its fence does.
		if p.ch.pct(50) {
			p.token = 0
		} else {
			p.renew(ctx, b.Token)
		}
	}
}

// faultCommit sends a new batch with one fault: a kill of the process
// before the send, in flight or after the answer; an answer lost as
// Indeterminate; or a crash at one of the store's in-store sites.
func (p *proc) faultCommit(ctx context.Context) {
	b := p.newBatch()
	id := b.ID
	match := func(c *hoststore.CommitBatch) bool { return c.CommitID() == id }
	switch r := p.ch.rng.IntN(7); r {
	case 0, 1, 2:
		ph := []faults.Phase{faults.BeforeSend, faults.InFlight, faults.AfterAnswer}[r]
		p.h.Inject(faults.Rule{Op: faults.OpCommit, Phase: ph, Effect: faults.EffectKill, Match: match})
		p.commit(ctx, b, []Fault{{Layer: "wrapper", Site: ph.String(), Kind: "kill"}})
	case 3:
		p.h.Inject(faults.Rule{Op: faults.OpCommit, Phase: faults.AfterAnswer, Effect: faults.EffectIndeterminate, Match: match})
		p.commit(ctx, b, []Fault{{Layer: "wrapper", Site: faults.AfterAnswer.String(), Kind: "indeterminate"}})
	default:
		// A store may pass a site more than once in a commit (one
		// transaction per scope, a retry): a quarter of the crashes are
		// armed at the second pass, which a commit that passes once never
		// reaches.
		site, pass := instore.Sites[r-4], 1
		if p.ch.pct(25) {
			pass = 2
		}
		// Half the crashes peek first: held at the site, the commit
		// waits while another process of the same realm loads one of its
		// scopes, and crashes once the load returned. What a store shows
		// of a batch before its commit point is seen there.
		peek := p.ch.pct(50)
		scope := b.Updates[p.ch.rng.IntN(len(b.Updates))].Scope
		if peek && p.observer().h == nil {
			// Opened before the hold: an open may take the locks the
			// held commit holds (a schema check in a write transaction).
			peek = p.observer().open(ctx)
		}
		hold := faults.HoldAtPass(site, pass, func(c hoststore.CommitID) bool { return c == id })
		defer hold.Disarm()
		stop := make(chan struct{})
		var peeked sync.WaitGroup
		defer func() { // also when the store panicked
			close(stop)
			peeked.Wait()
		}()
		if peek {
			peeked.Add(1)
			go func() {
				defer peeked.Done()
				select {
				case <-hold.Arrived():
					p.observer().peek(ctx, scope, id)
				case <-stop:
				}
				hold.Crash()
			}()
		} else {
			hold.Crash()
		}
		p.commit(ctx, b, []Fault{{Layer: "instore", Site: string(site), Kind: "crash", Pass: pass}})
	}
}

// recoverPanic, deferred around a process's calls, takes a panic of the
// store: the call in flight records it (Event.Panic) and the history
// ends there, as a store that panics would crash the process it runs in.
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
	p.d.stop()
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

// observer returns the process that peeks inside p's held commits: a
// process of its own, numbered after every generated one, with its own
// handle, opened at its first peek.
func (p *proc) observer() *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.obs == nil {
		p.obs = &proc{d: p.d, id: p.d.procs + p.id, view: map[hoststore.ScopeRef]*belief{}}
	}
	return p.obs
}

// peek loads s inside commit id, held at its site, and returns when the
// load returned or PeekBound passed.
func (p *proc) peek(ctx context.Context, s hoststore.ScopeRef, id hoststore.CommitID) {
	i := p.begin(Event{Op: OpLoad, Scope: hoststore.Ptr(s), Inside: id})
	done, st := make(chan struct{}), p.h
	go func() {
		defer close(done)
		defer p.recoverPanic()
		h, err := st.LoadHead(ctx, s)
		p.end(i, err, func(e *Event) { e.Head = h })
	}()
	t := time.NewTimer(PeekBound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}
