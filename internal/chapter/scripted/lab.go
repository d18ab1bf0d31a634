package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/conform-spi/conform/faults"
	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reports"
	"github.com/conform-spi/conform/writer"
)

// procStore is a chapter process seen as a hoststore.HostStore, so that a
// writer drives the store through it: every request is traced, bounded by
// the row's time and checked against the error contract.
type procStore struct {
	p      *chapter.Proc
	timing hoststore.FenceTiming
}

func (s procStore) AcquireFence(ctx context.Context, m hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	return s.p.Acquire(ctx, m)
}
func (s procStore) RenewFence(ctx context.Context, t hoststore.FenceToken) error {
	return s.p.Renew(ctx, t)
}
func (s procStore) FenceTiming() hoststore.FenceTiming { return s.timing }
func (s procStore) LoadHead(ctx context.Context, sc hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	return s.p.Load(ctx, sc)
}
func (s procStore) ListHeads(ctx context.Context, k hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	return s.p.List(ctx, k, after, limit)
}
func (s procStore) ReadRows(ctx context.Context, sc hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	return s.p.Read(ctx, sc, from, limit)
}
func (s procStore) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	return s.p.Commit(ctx, b)
}

// obsStore is what a process's writer drives: the process, watched by the
// observer, with hooks through which a scenario acts at chosen points of a
// commit or a renew.
type obsStore struct {
	procStore
	o   *observer
	e   *chapter.Env
	pid int

	mu sync.Mutex
	// beforeCommit runs before a batch is sent; an error is answered
	// instead of sending it.
	beforeCommit func(b *hoststore.CommitBatch) error
	// afterCommit runs with the store's answer and answers what the writer
	// gets.
	afterCommit func(b *hoststore.CommitBatch, err error) error
	// beforeRenew runs before a renew; an error is answered instead.
	beforeRenew func() error
}

// setHooks sets the store's hooks under its lock.
func (s *obsStore) setHooks(f func(s *obsStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *obsStore) hooks() (func(*hoststore.CommitBatch) error, func(*hoststore.CommitBatch, error) error, func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.beforeCommit, s.afterCommit, s.beforeRenew
}

func (s *obsStore) AcquireFence(ctx context.Context, m hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	start := s.o.clock.Now()
	g, err := s.procStore.AcquireFence(ctx, m)
	s.o.acquired(s.pid, m, start, g, err)
	return g, err
}

func (s *obsStore) RenewFence(ctx context.Context, t hoststore.FenceToken) error {
	start := s.o.clock.Now()
	_, _, before := s.hooks()
	var err error
	if before != nil {
		err = before()
	}
	if err == nil {
		err = s.procStore.RenewFence(ctx, t)
	} else {
		s.e.Tracef("%s.RenewFence(%d) = %s (injected by the scenario)", s.p.Name(), t, chapter.ErrText(err))
	}
	s.o.renewed(s.pid, start, err)
	return err
}

func (s *obsStore) ListHeads(ctx context.Context, k hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	pg, err := s.procStore.ListHeads(ctx, k, after, limit)
	if err == nil {
		s.o.listed(s.pid)
	}
	return pg, err
}

func (s *obsStore) LoadHead(ctx context.Context, sc hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	h, err := s.procStore.LoadHead(ctx, sc)
	if err == nil {
		s.o.loaded(s.pid, sc)
	}
	return h, err
}

func (s *obsStore) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	s.o.sending(s.pid, b, s.o.clock.Now())
	before, after, _ := s.hooks()
	var err error
	if before != nil {
		err = before(b)
	}
	if err == nil {
		err = s.procStore.Commit(ctx, b)
	}
	s.o.answered(s.pid, b, err)
	if after != nil {
		err = after(b, err)
	}
	return err
}

// Lab is one spec's world: its scope prefix, the run's manual clock, the
// observer and the processes started over the realm.
type Lab struct {
	// Env is the chapter run the spec belongs to.
	Env *chapter.Env
	// Ctx is the spec's context.
	Ctx context.Context
	// Prefix starts the name of every scope of the spec.
	Prefix string
	// Clock is the run's manual clock: the fakes advance it.
	Clock *writer.ManualClock
	// Timing is the store's fence timing.
	Timing hoststore.FenceTiming

	obs   *observer
	opts  writer.Options
	procs []*Process
}

// Process is one process of a scripted run: a chapter process, what its
// writer drives, and its writer.
type Process struct {
	// PID numbers the process within the spec, from 1.
	PID int
	// Writer is the process's writer.
	Writer *writer.Writer

	l    *Lab
	proc *chapter.Proc
	st   *obsStore
	dead bool
	cur  Pos                          // the unit in progress
	hook func(pt Point, at Pos) error // what the fault does at a point
	drv  Driver
	spec *Spec
}

// newLab starts a spec's world under prefix, with the writer rules unsafe
// breaks (none for the chapters as registered).
func newLab(ctx context.Context, e *chapter.Env, prefix string, unsafe writer.Unsafe) *Lab {
	GinkgoHelper()
	p := e.MustOpen(ctx)
	t, err := p.Timing(ctx)
	p.Kill()
	if err != nil || !t.Valid() {
		e.Fail(chapter.ObOperations, "the store's FenceTiming could not be read", "a valid timing", chapter.OkOr(err))
	}
	c := writer.NewManualClock()
	l := &Lab{Env: e, Ctx: ctx, Prefix: prefix, Clock: c, obs: newObserver(c, t.SelfFenceWindow(), idLogOf(e)), Timing: t}
	l.opts = writer.Options{
		Clock:          c,
		ChunkPrefix:    prefix + "/chunk/",
		ChunkThreshold: 2 << 10,
		Limits:         writer.Limits{BatchBytes: 4 << 10, RowBytes: 1 << 10},
		SweepEvery:     3 * t.RenewInterval(),
		Unsafe:         unsafe,
		Logf:           func(f string, a ...any) { e.Tracef("   writer: "+f, a...) },
	}
	DeferCleanup(l.close)
	return l
}

// Scope returns the spec's scope of kind named name under its prefix.
func (l *Lab) Scope(kind hoststore.ScopeKind, name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: kind, Name: hoststore.ScopeName(l.Prefix + "/" + name)}
}

// Start starts a process and opens its writer: exclusively (after Held,
// the leases are lapsed and it opens again), or by an explicit takeover.
// A writer that cannot open fails the spec.
func (l *Lab) Start(takeover bool) *Process {
	GinkgoHelper()
	p := l.Env.MustOpen(l.Ctx)
	lp := &Process{l: l, PID: len(l.procs) + 1, proc: p}
	lp.st = &obsStore{procStore: procStore{p: p, timing: l.Timing}, o: l.obs, e: l.Env, pid: lp.PID}
	l.procs = append(l.procs, lp)
	l.obs.open(lp.PID, takeover)
	opts := l.opts
	opts.Takeover = takeover
	l.Env.Note("p%d (%s) opens its writer%s at %s", lp.PID, p.Name(), map[bool]string{true: " by an explicit takeover"}[takeover], l.obs.at(l.Clock.Now()))
	w, err := writer.Open(l.Ctx, lp.st, opts)
	var held *hoststore.HeldError
	if errors.As(err, &held) {
		l.Env.Lapse(l.Ctx)
		w, err = writer.Open(l.Ctx, lp.st, opts)
	}
	if err != nil {
		l.Fail(l.FailOb(err), fmt.Sprintf("p%d's writer could not open the realm", lp.PID), "an open writer", chapter.ErrText(err))
	}
	lp.Writer = w
	return lp
}

// FailOb returns the obligation a failed writer call is reported under: a
// breach of the error contract, or the writer rules.
func (l *Lab) FailOb(err error) reports.ObligationID {
	var br *chapter.Breach
	if errors.As(err, &br) {
		return chapter.ObErrors
	}
	return chapter.ObWriter
}

// kill ends the process as a crash: its writer stops (no request) and
// its handle is killed with whatever it had in flight.
func (p *Process) kill() {
	p.l.Env.Note("p%d is killed at %s", p.PID, p.l.obs.at(p.l.Clock.Now()))
	p.dead = true
	p.Writer.Close()
	p.proc.Kill()
}

// close ends every process still alive (their writers stop, the handles
// are killed) and disarms nothing of the others.
func (l *Lab) close() {
	for _, lp := range l.procs {
		if lp.Writer != nil {
			lp.Writer.Close()
		}
		if !lp.proc.Dead() {
			lp.proc.Kill()
		}
	}
}

// Fail fails the spec under ob, unless the observer saw a writer rule
// broken first: that is the cause, and the failure names it.
func (l *Lab) Fail(ob reports.ObligationID, message, expected, got string) {
	GinkgoHelper()
	l.checkObserver()
	l.Env.Fail(ob, message, expected, got)
}

// FailDiff is Fail with a diff.
func (l *Lab) FailDiff(ob reports.ObligationID, message, expected, got, diff string) {
	GinkgoHelper()
	l.checkObserver()
	l.Env.FailDiff(ob, message, expected, got, diff)
}

// checkObserver fails the spec with every writer rule the observer saw
// broken, and with any breach of the error contract the run met.
func (l *Lab) checkObserver() {
	GinkgoHelper()
	if fs := l.obs.Findings(); len(fs) > 0 {
		var sb strings.Builder
		for i, f := range fs {
			if i == 8 {
				fmt.Fprintf(&sb, "… (%d in all)\n", len(fs))
				break
			}
			sb.WriteString(f.message + "\n")
		}
		l.Env.Fail(fs[0].ob, "the writer broke Core's writer rules during the run: "+fs[0].message, "no rule broken", sb.String())
	}
	if br := l.Env.FirstBreach(); br != nil {
		l.Env.Fail(chapter.ObErrors, "the store broke the error contract during the run", "answers within the contract", br.Error())
	}
}

// listAll lists every visible head of kind through p.
func (l *Lab) listAll(p *chapter.Proc, kind hoststore.ScopeKind) []hoststore.NamedHead {
	GinkgoHelper()
	var out []hoststore.NamedHead
	var after *hoststore.ScopeName
	for i := 0; ; i++ {
		pg, err := p.List(l.Ctx, kind, after, 200)
		if err != nil {
			l.Fail(chapter.ObOperations, fmt.Sprintf("ListHeads(%s) failed", kind), "a page", chapter.ErrText(err))
		}
		out = append(out, pg.Heads...)
		if pg.Next == nil || i > 1<<12 {
			return out
		}
		after = pg.Next
	}
}

// CheckGarbage fails the spec when a chunk scope of the spec survives that
// no visible head refers to ("Core deletes such chunks when it opens the
// realm"), or when a head refers to a chunk scope that is not there.
func (l *Lab) CheckGarbage(p *chapter.Proc) {
	GinkgoHelper()
	refs := map[hoststore.ScopeName]hoststore.ScopeName{}
	chunks := map[hoststore.ScopeName]bool{}
	for _, k := range hoststore.AllKinds {
		for _, h := range l.listAll(p, k) {
			s := hoststore.ScopeRef{Kind: k, Name: h.Name}
			if writer.IsChunk(l.opts.ChunkPrefix, s) {
				chunks[h.Name] = true
			} else if n, ok := writer.Refs(h.Head.Head); ok && strings.HasPrefix(string(h.Name), l.Prefix+"/") {
				refs[n] = h.Name
			}
		}
	}
	for n := range chunks {
		if _, ok := refs[n]; !ok {
			l.Fail(chapter.ObWriter, fmt.Sprintf("chunk scope %q survived the open, yet no visible head refers to it", n),
				"no garbage chunk after an open (Core deletes unreferenced chunks when it opens the realm)", "an unreferenced chunk scope")
		}
	}
	for n, by := range refs {
		if !chunks[n] {
			l.Fail(chapter.ObAllOrNothing, fmt.Sprintf("%q refers to chunk scope %q, which is not visible", by, n),
				"every chunk a visible head refers to is visible (its batch landed before the commit batch)", "a missing chunk scope")
		}
	}
}

// holdCommit arms a hold at site for the first batch match accepts, and a
// helper that kills p once that batch is held inside the store, then lets
// it go on: the process dies with its commit in flight. wait answers
// whether a batch was held (false: none reached the site); call it once
// the process's work has ended. It is also called at the spec's end, so a
// failed spec leaves nothing armed.
func (p *Process) holdCommit(site faults.Site, match func(*hoststore.CommitBatch) bool) (wait func() bool) {
	var (
		mu   sync.Mutex
		hold *faults.Hold
	)
	armed := make(chan *faults.Hold, 1)
	stop := make(chan struct{})
	held := make(chan bool, 1)
	p.st.setHooks(func(s *obsStore) {
		s.beforeCommit = func(b *hoststore.CommitBatch) error {
			mu.Lock()
			defer mu.Unlock()
			if hold == nil && match(b) {
				hold = faults.HoldAt(site, chapter.MatchID(b.CommitID()))
				armed <- hold
			}
			return nil
		}
	})
	go func() {
		var h *faults.Hold
		select {
		case h = <-armed:
		case <-stop:
			held <- false
			return
		}
		select {
		case <-h.Arrived():
			p.kill()
			h.Release()
			held <- true
		case <-stop:
			held <- false
		}
	}()
	var (
		once sync.Once
		ok   bool
	)
	wait = func() bool {
		once.Do(func() {
			close(stop)
			ok = <-held
			mu.Lock()
			if hold != nil {
				hold.Disarm()
			}
			mu.Unlock()
		})
		return ok
	}
	DeferCleanup(func() { wait() })
	return wait
}

// Called has the observer check a model or tool call that process pid
// starts now; what names it.
func (l *Lab) Called(pid int, what string) { l.obs.called(pid, what) }

// Now returns the run's clock now, as the trail shows it: "+1m30s".
func (l *Lab) Now() string { return l.obs.at(l.Clock.Now()) }
