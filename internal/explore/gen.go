package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
)

// plan is what one history's seed decides before it runs: how many
// processes, how many operations each sends, and the scopes they write.
// Each process then draws every choice from its own PCG stream, seeded
// from the history's seed and its number, against what it has seen so far.
type plan struct {
	seed  uint64
	procs int
	steps []int // operations per process
	pool  []hoststore.ScopeRef
}

// step is what a process does next.
type step uint8

const (
	stepAcquire step = iota
	stepRenew
	stepLapse
	stepLoad
	stepList
	stepRead
	stepCommit
	stepResend
	stepFaultCommit
	stepKill
	nSteps
)

// weights of the steps, in the order above: commits and reads dominate.
var stepWeights = [nSteps]int{stepAcquire: 5, stepRenew: 6, stepLapse: 2, stepLoad: 13, stepList: 7, stepRead: 12,
	stepCommit: 32, stepResend: 6, stepFaultCommit: 9, stepKill: 4}

var poolNames = []hoststore.ScopeName{"a", "b", "c", "d", "e", "f"}

// oddNames are names a quarter of the histories draw from instead: names
// that differ only by a trailing space, and names whose order by UTF-8
// bytes (which listings follow) is not their order by UTF-16 code units
// (U+FF61 sorts before U+1F600 in bytes, after it in UTF-16).
var oddNames = []hoststore.ScopeName{"a", "a ", "b", "\uff61", "\U0001F600", "\u00e9"}

// newPlan draws a history's shape from seed: 1 to maxProcs processes, a
// length from a few operations to maxOps (short ones common, long ones
// regular), and a pool of 2 to 5 scopes over one or two kinds (Session,
// and one of the others half the time), so that batches collide often.
func newPlan(seed uint64, maxOps, maxProcs int) plan {
	rng := rand.New(rand.NewPCG(seed, 0x6578706c6f7265))
	p := plan{seed: seed, procs: 1 + rng.IntN(max(maxProcs, 1))}
	var total int
	switch r := rng.IntN(10); {
	case r < 3:
		total = 3 + rng.IntN(min(20, maxOps))
	case r < 7:
		total = 3 + rng.IntN(min(80, maxOps))
	default:
		total = 3 + rng.IntN(maxOps)
	}
	total = min(total, maxOps)
	for i := range p.procs {
		n := total / p.procs
		if i < total%p.procs {
			n++
		}
		p.steps = append(p.steps, n)
	}
	kinds := []hoststore.ScopeKind{hoststore.KindSession}
	if rng.IntN(2) == 0 {
		kinds = append(kinds, hoststore.AllKinds[1+rng.IntN(len(hoststore.AllKinds)-1)])
	}
	names := poolNames
	if rng.IntN(4) == 0 {
		names = oddNames
	}
	n := 2 + rng.IntN(4)
	for _, i := range rng.Perm(len(names))[:n] {
		p.pool = append(p.pool, hoststore.ScopeRef{Kind: kinds[rng.IntN(len(kinds))], Name: names[i]})
	}
	return p
}

// procRNG returns process proc's stream of choices.
func (p plan) procRNG(proc int) *rand.Rand {
	return rand.New(rand.NewPCG(p.seed, uint64(proc)+1))
}

// belief is what a process last saw of a scope.
type belief struct {
	live       bool
	version    hoststore.ScopeVersion
	start, end hoststore.RowIndex
}

// chooser draws one process's choices.
type chooser struct {
	rng  *rand.Rand
	pool []hoststore.ScopeRef
}

func (c *chooser) step() step {
	total := 0
	for _, w := range stepWeights {
		total += w
	}
	r := c.rng.IntN(total)
	for s, w := range stepWeights {
		if r < w {
			return step(s)
		}
		r -= w
	}
	return stepLoad
}

func (c *chooser) pct(p int) bool { return c.rng.IntN(100) < p }

func (c *chooser) scope() hoststore.ScopeRef { return c.pool[c.rng.IntN(len(c.pool))] }

// kind returns a kind of the pool.
func (c *chooser) kind() hoststore.ScopeKind { return c.scope().Kind }

// around returns an index from one below lo to two past hi.
func (c *chooser) around(lo, hi hoststore.RowIndex) hoststore.RowIndex {
	if lo > 0 {
		lo--
	}
	return lo + hoststore.RowIndex(c.rng.IntN(int(hi-lo)+3))
}

// limit returns a limit for n entries left: 1, exactly n, a few, or many.
func (c *chooser) limit(n int) int {
	switch c.rng.IntN(4) {
	case 0:
		return 1
	case 1:
		return max(n, 1)
	case 2:
		return 1 + c.rng.IntN(4)
	}
	return 64
}

// batch returns the updates of a new batch id over one to three scopes of
// the pool, written from the beliefs in view: mostly creates of scopes
// believed absent and updates at the believed version, and also creates
// of names believed live, updates at stale and future versions, deletes,
// truncates, drops and appends in any mix.
func (c *chooser) batch(id hoststore.CommitID, view map[hoststore.ScopeRef]*belief) []hoststore.ScopeUpdate {
	n := 1
	if r := c.rng.IntN(100); r >= 50 {
		n = 2
		if r >= 85 {
			n = 3
		}
	}
	n = min(n, len(c.pool))
	var ups []hoststore.ScopeUpdate
	for _, i := range c.rng.Perm(len(c.pool))[:n] {
		s := c.pool[i]
		b := view[s]
		if b == nil {
			b = &belief{}
		}
		u := hoststore.ScopeUpdate{Scope: s}
		rows := func(k int) {
			for r := range k {
				u.Append = append(u.Append, fmt.Appendf(nil, "%s/%s/%d", id, s.Name, r))
			}
		}
		create := !b.live && c.pct(85) || b.live && c.pct(6)
		if create {
			u.Next = hoststore.FirstVersion
			u.Head = hoststore.Ptr(fmt.Appendf(nil, "h-%s", id))
			if c.pct(60) {
				rows(1 + c.rng.IntN(3))
			}
			ups = append(ups, u)
			continue
		}
		v := b.version
		switch r := c.rng.IntN(100); {
		case !b.live || v == 0:
			v = hoststore.ScopeVersion(1 + c.rng.IntN(3))
		case r < 10 && v > 1:
			v--
		case r < 20:
			v++
		}
		u.Previous, u.Next = hoststore.Ptr(v), v+1
		if c.pct(10) {
			u.Delete = true
			ups = append(ups, u)
			continue
		}
		if c.pct(70) {
			u.Head = hoststore.Ptr(fmt.Appendf(nil, "h-%s", id))
		}
		if c.pct(15) {
			u.TruncateAfter = hoststore.Ptr(c.around(b.start, b.end))
		}
		if c.pct(15) {
			u.DropBefore = hoststore.Ptr(c.around(b.start, b.end))
		}
		if c.pct(60) {
			rows(1 + c.rng.IntN(3))
		}
		ups = append(ups, u)
	}
	return ups
}

// learn updates a belief after a batch with u landed.
func (b *belief) learn(u hoststore.ScopeUpdate) {
	if u.Delete {
		*b = belief{}
		return
	}
	if u.Previous == nil {
		*b = belief{}
	}
	b.live, b.version = true, u.Next
	if t := u.TruncateAfter; t != nil && *t < b.end {
		b.end = *t
		b.start = min(b.start, b.end)
	}
	if d := u.DropBefore; d != nil && *d > b.start {
		b.start = min(*d, b.end)
	}
	b.end += hoststore.RowIndex(len(u.Append))
}

// genProc is one generated process of a history: it draws each operation
// from its own stream, against what it has seen, and plays it.
type genProc struct {
	*proc
	ch    chooser
	token hoststore.FenceToken // the token the writer writes with
	view  map[hoststore.ScopeRef]*belief
	n     int   // batches made
	obs   *proc // peeks inside this process's held commits (observer); guarded by mu
}

func (p *genProc) run(ctx context.Context, steps int) {
	defer func() {
		if p.obs != nil {
			p.obs.kill(ctx)
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
	p.kill(ctx)
}

// open gives the process a new handle, as a new process: it knows no
// token and nothing of the realm.
func (p *genProc) open(ctx context.Context) bool {
	p.token = 0
	clear(p.view)
	return p.proc.open(ctx)
}

// open gives p a new handle, and reports whether it got one.
func (p *proc) open(ctx context.Context) bool {
	p.call(ctx, Event{Op: OpOpen}, nil)
	return p.h != nil
}

// kill kills p's handle, if it has one, and waits for what it abandoned
// in flight, so no request outlives its history.
func (p *proc) kill(ctx context.Context) {
	if p.h != nil {
		p.call(ctx, Event{Op: OpKill}, nil)
	}
}

func (p *genProc) do(ctx context.Context, s step) {
	if p.h == nil || p.h.Killed() {
		p.kill(ctx)
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
		p.call(ctx, Event{Op: OpLapse}, nil)
	case stepLoad:
		p.load(ctx, p.ch.scope())
	case stepList:
		p.list(ctx)
	case stepRead:
		p.read(ctx)
	case stepCommit:
		p.commit(ctx, p.newBatch(), nil, nil)
	case stepResend:
		if b := p.pl.pickSent(p.ch.rng); b != nil {
			p.commit(ctx, b, nil, nil)
		} else {
			p.load(ctx, p.ch.scope())
		}
	case stepFaultCommit:
		if p.pl.cfg.NoFaults {
			p.commit(ctx, p.newBatch(), nil, nil)
			return
		}
		p.faultCommit(ctx)
	case stepKill:
		if p.pl.cfg.NoFaults {
			p.load(ctx, p.ch.scope())
			return
		}
		if _, ok := p.h.Inner().(io.Closer); ok && p.ch.pct(25) {
			p.call(ctx, Event{Op: OpClose}, nil)
		}
		p.kill(ctx)
		p.open(ctx)
	}
}

func (p *genProc) acquire(ctx context.Context) {
	mode := hoststore.Exclusive
	if p.ch.pct(35) {
		mode = hoststore.Takeover
	}
	if e, err := p.call(ctx, Event{Op: OpAcquire, Mode: mode.String()}, nil); err == nil {
		p.token = e.Grant.Token
	}
}

// renew renews tok, the writer's token or one a batch carried.
func (p *genProc) renew(ctx context.Context, tok hoststore.FenceToken) {
	_, err := p.call(ctx, Event{Op: OpRenew, Token: tok}, nil)
	if hoststore.KindOf(err) == hoststore.ErrKindFencedOut && tok == p.token && p.ch.pct(50) {
		p.token = 0 // a writer stops; the other half goes on with its stale token
	}
}

func (p *genProc) load(ctx context.Context, s hoststore.ScopeRef) {
	if e, err := p.call(ctx, Event{Op: OpLoad, Scope: hoststore.Ptr(s)}, nil); err == nil {
		p.see(s, e.Head)
	}
}

func (p *genProc) see(s hoststore.ScopeRef, h *hoststore.VersionedHead) {
	b := p.belief(s)
	if h == nil {
		*b = belief{}
		return
	}
	if !b.live || b.version != h.Version {
		b.live, b.version = true, h.Version
	}
}

func (p *genProc) belief(s hoststore.ScopeRef) *belief {
	b := p.view[s]
	if b == nil {
		b = &belief{}
		p.view[s] = b
	}
	return b
}

func (p *genProc) list(ctx context.Context) {
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
		e, err := p.call(ctx, Event{Op: OpList, Kind: kind, After: after, Limit: limit}, nil)
		if err != nil || e.Page.Next == nil || !p.ch.pct(60) {
			return
		}
		for _, nh := range e.Page.Heads {
			p.see(hoststore.ScopeRef{Kind: kind, Name: nh.Name}, hoststore.Ptr(nh.Head))
		}
		after = e.Page.Next
		left = max(left-len(e.Page.Heads), 0)
	}
}

func (p *genProc) read(ctx context.Context) {
	s := p.ch.scope()
	b := p.belief(s)
	from := p.ch.around(b.start, b.end)
	limit := p.ch.limit(int(b.end) - int(from))
	e, err := p.call(ctx, Event{Op: OpRead, Scope: hoststore.Ptr(s), From: from, Limit: limit}, nil)
	switch {
	case err == nil && len(e.Rows) > 0:
		b.start = min(b.start, e.Rows[0].Index)
		b.end = max(b.end, e.Rows[len(e.Rows)-1].Index+1)
	case hoststore.KindOf(err) == hoststore.ErrKindInvalid:
		b.start = max(b.start, from+1)
		b.end = max(b.end, b.start)
	}
}

func (p *genProc) newBatch() *Batch {
	p.n++
	id := hoststore.CommitID(fmt.Sprintf("r%d-p%d-c%d", p.pl.run, p.id, p.n))
	return &Batch{ID: id, Token: p.token, Updates: p.ch.batch(id, p.view)}
}

// commit sends b with faults fs; held is as for proc.start.
func (p *genProc) commit(ctx context.Context, b *Batch, fs []Fault, held func()) {
	p.pl.remember(b)
	_, err := p.call(ctx, Event{Op: OpCommit, Batch: b, Faults: fs}, held)
	switch k := hoststore.KindOf(err); {
	case err == nil:
		for _, u := range b.Updates {
			p.belief(u.Scope).learn(u)
		}
	case errors.Is(err, instore.ErrCrashed):
		p.kill(ctx) // a crashed commit is a dead process
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
func (p *genProc) faultCommit(ctx context.Context) {
	b := p.newBatch()
	switch r := p.ch.rng.IntN(7); r {
	case 0, 1, 2:
		ph := []faults.Phase{faults.BeforeSend, faults.InFlight, faults.AfterAnswer}[r]
		p.commit(ctx, b, []Fault{{Layer: "wrapper", Site: ph.String(), Kind: "kill"}}, nil)
	case 3:
		p.commit(ctx, b, []Fault{{Layer: "wrapper", Site: faults.AfterAnswer.String(), Kind: "indeterminate"}}, nil)
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
		var held func()
		if peek {
			held = func() { p.observer().peek(ctx, scope, b.ID) }
		}
		p.commit(ctx, b, []Fault{{Layer: "instore", Site: string(site), Kind: "crash", Pass: pass}}, held)
	}
}

// observer returns the process that peeks inside p's held commits: a
// process of its own, numbered after every generated one, with its own
// handle, opened at its first peek.
func (p *genProc) observer() *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.obs == nil {
		p.obs = &proc{pl: p.pl, id: p.pl.procs + p.id}
	}
	return p.obs
}

// peek loads s inside commit id, held at its site, and returns when the
// load returned or PeekBound passed.
func (p *proc) peek(ctx context.Context, s hoststore.ScopeRef, id hoststore.CommitID) {
	load := p.start(ctx, Event{Op: OpLoad, Scope: hoststore.Ptr(s), Inside: id}, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer p.recoverPanic()
		load()
	}()
	t := time.NewTimer(PeekBound)
	defer t.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-t.C:
	}
}
