// Package chapter is the framework conform's chapters are written in: the
// Env of a chapter run over one realm, processes over it, the reference
// model every expectation comes from, the checks that compare a store with
// it, failures that name the obligation, and rows and chapters as Ginkgo
// specs.
//
// A chapter lives in a package of its own and is registered by a function
// that takes the configuration at run time; importing a chapter adds no
// spec to anyone's suite. The harness keeps the ordered list of chapters.
package chapter

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

// Config is what a chapter run needs. The zero value of every field but
// NewRealm is usable.
type Config struct {
	// NewRealm makes a fresh realm, which starts empty. Required.
	NewRealm func(ctx context.Context) (hoststore.HostStoreFactory, error)
	// Settings are the run's settings, which the chapters read as they
	// are: the seed, the bounds, the fences, the exploration, and the
	// repro lines they render.
	Settings settings.Settings
	// Timing is the run's record of the store's latency, shared by its
	// chapters; nil gives each chapter a record of its own.
	Timing *Timing
	// Warn, when set, gets what went wrong outside any row (a realm that
	// could not be removed); nil drops it.
	Warn func(msg string)
	// Injector is the run's fault injector: every store call runs under a
	// context bound to it, and the rows arm their holds on it. Nil gives
	// each chapter run an injector of its own.
	Injector *faults.Injector
}

// ExploreStatus is the exploration chapter's progress after a history.
type ExploreStatus = settings.ExploreStatus

// Env is one chapter run over one realm: the factory, the processes opened
// on it, and the reference model of everything the realm holds.
type Env struct {
	// Cfg is the run's config.
	Cfg   Config
	realm hoststore.HostStoreFactory
	// Model is the reference model of every batch that landed and is visible.
	Model *reference.Model

	mu     sync.Mutex
	procs  []*Proc
	writer *Proc
	trail  []string
	rowID  reports.RowID
	sp     *spec.Spec // the running spec
	ids    int
	rng    *rand.Rand

	breaches   []*Breach     // what the running spec caught outside the contract
	suspect    bool          // a call hung: the realm is probed before the next spec
	suspectRow reports.RowID // the row in which it hung
	suspectOp  string        // the operation that hung
	trouble    string        // the running spec's first call that hung or answered Unavailable
	troubleH   bool          // that call hung
	troubleOp  string        // that call's operation

	timing *Timing
	inj    *faults.Injector // the run's (Config.Injector), or the Env's own
	lease  time.Duration    // the lease the store's handles declare (0: not read yet)

	// busy counts the store calls in flight; busyFor is the time in which
	// at least one was, up to busySince when busy > 0 (specClock).
	busy      int
	busySince time.Time
	busyFor   time.Duration

	inStore   map[instore.Site]bool // which in-store failpoints the store calls
	probed    bool
	trailFull bool
}

const maxTrail = 400

// newEnv opens the realm.
func newEnv(ctx context.Context, cfg Config) (*Env, error) {
	if cfg.NewRealm == nil {
		return nil, fmt.Errorf("chapter config: NewRealm is nil")
	}
	realm, err := cfg.NewRealm(ctx)
	if err != nil {
		return nil, fmt.Errorf("new realm: %w", err)
	}
	if realm == nil {
		return nil, fmt.Errorf("new realm: the factory is nil")
	}
	inj := cfg.Injector
	if inj == nil {
		inj = faults.NewInjector()
	}
	return &Env{Cfg: cfg, realm: realm, Model: reference.NewModel(), timing: cfg.timing(), inj: inj}, nil
}

// timing returns the run's Timing, or a new one when the config has none.
func (c Config) timing() *Timing {
	if c.Timing != nil {
		return c.Timing
	}
	return NewTiming(c.Settings.CallTimeout)
}

// beginSpec resets the per-spec state: the trail and the random source.
func (e *Env) beginSpec(rowID reports.RowID, sp *spec.Spec) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sp = sp
	text := sp.FullText()
	e.trail = e.trail[:0]
	e.trailFull = false
	e.breaches = nil
	e.trouble, e.troubleH, e.troubleOp = "", false, ""
	e.rowID = rowID
	h := fnv.New64a()
	h.Write([]byte(text))
	e.rng = rand.New(rand.NewPCG(e.Cfg.Settings.Seed, h.Sum64()))
}

// Spec returns the running spec's handle.
func (e *Env) Spec() *spec.Spec {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sp
}

// Tracef adds a line to the current spec's trail.
func (e *Env) Tracef(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.trail) >= maxTrail {
		e.trail = append(e.trail[:0], e.trail[maxTrail/2:]...)
		e.trailFull = true
	}
	e.trail = append(e.trail, fmt.Sprintf(format, args...))
}

// Note adds a line of the row's own to the trail (what it is about to do).
func (e *Env) Note(format string, args ...any) { e.Tracef("-- "+format, args...) }

// trailLines returns the current spec's operations so far, oldest first.
func (e *Env) trailLines() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := append([]string(nil), e.trail...)
	if e.trailFull {
		out = append([]string{"(earlier operations cut)"}, out...)
	}
	return out
}

// Rand is the current spec's seeded random source.
func (e *Env) Rand() *rand.Rand { return e.rng }

// Timing is the run's record of the store's latency and health.
func (e *Env) Timing() *Timing { return e.timing }

// Injector returns the run's fault injector, on which the rows arm their
// holds.
func (e *Env) Injector() *faults.Injector { return e.inj }

// RowID is the ID of the row running now.
func (e *Env) RowID() reports.RowID { return e.rowID }

// Open starts a new process over the realm.
func (e *Env) Open(ctx context.Context) (*Proc, error) {
	e.mu.Lock()
	id := len(e.procs) + 1
	e.mu.Unlock()
	p := &Proc{ID: id, env: e}
	st, err := call(ctx, p, "Open", func(ctx context.Context) (hoststore.HostStore, error) { return e.realm.Open(ctx) })
	if err == nil && st == nil {
		err = &Breach{Op: "Open", Kind: BreachNilHandle, Detail: "Open answered a nil store and no error"}
	}
	e.Tracef("open p%d = %s", id, OkOr(err))
	if err != nil {
		return nil, err
	}
	p.wrap = e.inj.Wrap(st)
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return p, nil
}

// MustOpen opens a process or fails the spec.
func (e *Env) MustOpen(ctx context.Context) *Proc {
	spec.Helper()
	p, err := e.Open(ctx)
	if err != nil {
		e.Fail(ObOperations, "opening a new process failed", "a new handle over the realm", ErrText(err))
	}
	return p
}

// Lapse lets every recorded lease run out through the factory. A store
// may do so by waiting: the call is a hang only once it took the lease its
// handles declare (FenceTiming) plus the per-call bound.
func (e *Env) Lapse(ctx context.Context) {
	spec.Helper()
	lease := e.declaredLease(ctx)
	cb, rule := e.timing.CallBound("LapseFenceLeases")
	bound := lease + cb
	res := e.await(ctx, bound, func(ctx context.Context) (any, error) { return nil, e.realm.LapseFenceLeases(ctx) })
	err := res.err
	switch {
	case res.panicked != "":
		err = &Breach{Op: "LapseFenceLeases", Kind: BreachPanic, Detail: res.panicked}
	case res.hung:
		err = &Breach{Op: "LapseFenceLeases", Kind: BreachHang, Detail: fmt.Sprintf("did not return within the declared lease %s plus the per-call bound %s (%s)", lease, cb, rule)}
	}
	e.Tracef("lapse fence leases = %s", OkOr(err))
	if err != nil {
		e.Fail(ObFenceLease, "the factory's LapseFenceLeases failed", "every recorded lease runs out", ErrText(err))
	}
}

// declaredLease returns the lease the store's handles declare, read once
// from a live process (the default lease while none is live or the
// timing cannot be read).
func (e *Env) declaredLease(ctx context.Context) time.Duration {
	e.mu.Lock()
	lease := e.lease
	var live *Proc
	for i := len(e.procs) - 1; i >= 0 && lease == 0; i-- {
		if !e.procs[i].Dead() {
			live = e.procs[i]
			break
		}
	}
	e.mu.Unlock()
	if lease > 0 {
		return lease
	}
	lease = hoststore.DefaultFenceTiming().Lease()
	if live == nil {
		return lease
	}
	if t, err := live.Timing(ctx); err == nil && t.Valid() {
		lease = t.Lease()
		e.mu.Lock()
		e.lease = lease
		e.mu.Unlock()
	}
	return lease
}

// Writer returns the realm's current writer: the last process that acquired
// the fence, still lives and still renews (a row before may have been
// superseded, or its lease lapsed and the store refused the renew), or a
// new process that acquires it the way the writer does (exclusive; after Held,
// the leases are lapsed and it acquires again). So one row's breach does
// not leave the next rows with a writer that cannot commit.
func (e *Env) Writer(ctx context.Context) *Proc {
	spec.Helper()
	e.mu.Lock()
	w := e.writer
	e.mu.Unlock()
	if w != nil && !w.Dead() && w.Token != 0 {
		if err := w.Renew(ctx, w.Token); err == nil {
			return w
		}
		e.Note("%s no longer renews: a new writer takes the fence", w.Name())
	}
	return e.NewWriter(ctx)
}

// NewWriter starts a new process that takes the fence the way the writer does, and
// makes it the current writer.
func (e *Env) NewWriter(ctx context.Context) *Proc {
	spec.Helper()
	p := e.MustOpen(ctx)
	_, err := p.Acquire(ctx, hoststore.Exclusive)
	if hoststore.KindOf(err) == hoststore.ErrKindHeld {
		e.Lapse(ctx)
		_, err = p.Acquire(ctx, hoststore.Exclusive)
		if hoststore.KindOf(err) == hoststore.ErrKindHeld {
			e.Fail(ObFenceLease, "an exclusive acquire still answered Held after every recorded lease was lapsed",
				"an exclusive acquire waits out a live holder's lease and no longer", ErrText(err))
		}
	}
	if err != nil {
		e.Fail(ObFenceLease, "a new writer could not acquire the fence", "a token", ErrText(err))
	}
	e.SetWriter(p)
	return p
}

// SetWriter makes p the realm's current writer.
func (e *Env) SetWriter(p *Proc) {
	e.mu.Lock()
	e.writer = p
	e.mu.Unlock()
}

// newID is a fresh commit id, unique in the run and readable in a trail.
func (e *Env) newID(tag string) hoststore.CommitID {
	e.mu.Lock()
	e.ids++
	n := e.ids
	e.mu.Unlock()
	return hoststore.CommitID(fmt.Sprintf("%s/%s#%d", e.rowID, tag, n))
}

// Scope names a scope of this row: the row's ID prefixes the name, so rows
// never share a scope.
func (e *Env) Scope(kind hoststore.ScopeKind, name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: kind, Name: hoststore.ScopeName(string(e.rowID) + "/" + name)}
}

// close kills every process still alive and closes what can be closed.
// close closes every process still alive, then the realm's factory when
// it implements io.Closer (unless the settings keep realms).
func (e *Env) close() {
	e.mu.Lock()
	procs := append([]*Proc(nil), e.procs...)
	e.mu.Unlock()
	for _, p := range procs {
		if !p.Dead() {
			p.CloseQuietly()
		}
	}
	if e.Cfg.Settings.KeepRealms {
		return
	}
	if c, ok := e.realm.(io.Closer); ok {
		if err := c.Close(); err != nil && e.Cfg.Warn != nil {
			e.Cfg.Warn("closing a chapter's realm: " + err.Error())
		}
	}
}

// OkOr returns "ok" for nil, else ErrText(err).
func OkOr(err error) string {
	if err == nil {
		return "ok"
	}
	return ErrText(err)
}

// noteBreach records a breach the running spec caught; a hang also makes
// the realm suspect until the next spec has probed it.
func (e *Env) noteBreach(b *Breach) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.breaches = append(e.breaches, b)
	if b.Kind == BreachHang {
		e.suspect, e.suspectRow, e.suspectOp = true, e.rowID, b.Op
	}
}

// FirstBreach returns the first breach the running spec caught, or nil.
func (e *Env) FirstBreach() *Breach {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.breaches) == 0 {
		return nil
	}
	return e.breaches[0]
}

// probeHealth runs before a spec once a call hung in an earlier one: the
// store is probed (available), and when it cannot serve, every later spec
// is not run, with why.
func (e *Env) probeHealth() {
	e.mu.Lock()
	suspect, op := e.suspect, e.suspectOp
	e.mu.Unlock()
	if suspect && e.timing.Down() == "" {
		if why := e.available(op == "Commit"); why != "" {
			e.timing.setDown(fmt.Sprintf("the store became unavailable after row %s: a store call hung; then %s", e.suspectRow, why))
		}
	}
	if e.timing.Down() == "" {
		e.mu.Lock()
		if e.writer != nil && e.writer.Dead() {
			e.writer = nil
		}
		e.mu.Unlock()
	}
}
