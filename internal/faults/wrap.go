package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
)

// ErrKilled is answered by every call to a killed wrapper, and by the call
// whose kill fired. It is the harness's, never a store's.
var ErrKilled = errors.New("conform: process killed")

// Phase is when around a request an injected fault acts.
type Phase int

const (
	// BeforeSend acts before the request is sent: the store never sees it.
	BeforeSend Phase = iota
	// InFlight acts once the request is sent: the wrapper starts it in a
	// goroutine and kills the handle at once, without waiting for the answer.
	InFlight
	// AfterAnswer acts after the store answered: the answer is lost.
	AfterAnswer
)

// String names the phase.
func (p Phase) String() string {
	switch p {
	case BeforeSend:
		return "before-send"
	case InFlight:
		return "in-flight"
	case AfterAnswer:
		return "after-answer"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Op names one of the store's six requests.
type Op string

// The six requests.
const (
	OpAcquire Op = "acquire"
	OpRenew   Op = "renew"
	OpLoad    Op = "load"
	OpList    Op = "list"
	OpRead    Op = "read"
	OpCommit  Op = "commit"
)

// Ops lists the six requests.
var Ops = []Op{OpAcquire, OpRenew, OpLoad, OpList, OpRead, OpCommit}

// Effect is what an injected fault does.
type Effect int

const (
	// EffectKill kills the handle: the wrapper calls the inner store's
	// Kill() if it implements hoststore.Killer and returns ErrKilled to
	// this and every later call. Any phase.
	EffectKill Effect = iota
	// EffectUnavailable returns *hoststore.UnavailableError, which the
	// spec allows "only when nothing was applied": BeforeSend only.
	EffectUnavailable
	// EffectIndeterminate returns *hoststore.IndeterminateError ("the batch
	// may or may not have landed"); the handle lives. Commit only, at
	// AfterAnswer (the batch ran in the store, its answer is lost) or at
	// BeforeSend (the batch was never sent, the caller cannot know).
	EffectIndeterminate
)

// String names the effect.
func (e Effect) String() string {
	switch e {
	case EffectKill:
		return "kill"
	case EffectUnavailable:
		return "unavailable"
	case EffectIndeterminate:
		return "indeterminate"
	}
	return fmt.Sprintf("Effect(%d)", int(e))
}

// Rule says which calls an injection acts on and what it does. The zero
// Phase is BeforeSend and the zero Effect is EffectKill.
type Rule struct {
	// Op is the request the rule acts on.
	Op Op
	// Phase is when around the request it acts.
	Phase Phase
	// Effect is what it does.
	Effect Effect
	// Match selects commits by their batch (commit only); nil matches every
	// call of Op. It runs with the wrapper's lock held and must not call
	// the wrapper.
	Match func(b *hoststore.CommitBatch) bool
	// Times is how many calls it fires on: 0 means 1, a negative count
	// means every matching call until Remove.
	Times int
}

// validate refuses a rule that cannot act as written.
func (r Rule) validate() error {
	known := false
	for _, op := range Ops {
		known = known || r.Op == op
	}
	switch {
	case !known:
		return fmt.Errorf("unknown op %q", r.Op)
	case r.Phase < BeforeSend || r.Phase > AfterAnswer:
		return fmt.Errorf("unknown phase %d", int(r.Phase))
	case r.Effect < EffectKill || r.Effect > EffectIndeterminate:
		return fmt.Errorf("unknown effect %d", int(r.Effect))
	case r.Match != nil && r.Op != OpCommit:
		return fmt.Errorf("Match is for commits only, not %s", r.Op)
	case r.Phase == InFlight && r.Effect != EffectKill:
		return fmt.Errorf("in flight the only effect is kill, not %s", r.Effect)
	case r.Effect == EffectUnavailable && r.Phase != BeforeSend:
		return fmt.Errorf("unavailable means nothing was applied: before-send only, not %s", r.Phase)
	case r.Effect == EffectIndeterminate && r.Op != OpCommit:
		return fmt.Errorf("indeterminate is a commit's answer, not %s's", r.Op)
	}
	return nil
}

// Injection is one rule injected into a Store.
type Injection struct {
	s     *Store
	rule  Rule
	left  int // calls it still fires on, <0 for every call; guarded by s.mu
	fired chan struct{}
	done  bool // fired is closed; guarded by s.mu
}

// Fired is closed when the injection fired for the first time.
func (in *Injection) Fired() <-chan struct{} { return in.fired }

// Remove stops the injection from firing again. It is idempotent; an
// injection that fired its Times calls is removed already.
func (in *Injection) Remove() {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	in.s.removeLocked(in)
}

// Store is a hoststore.HostStore that forwards to an inner store through
// injected faults; it is also a hoststore.Killer. A killed Store returns
// ErrKilled to every call without reaching the inner store. Panics of the
// inner store are not caught here, except in a request abandoned in flight
// (see WaitAbandoned).
//
// A call's injector is the one its context carries, else the Store's own
// (Injector.Wrap). The call reaches the inner store under a context that
// carries it; the wrapper terms of a commit are that injector's, and the
// commit's id is claimed for it (Injector.Claim).
type Store struct {
	inj      *Injector // the injector of a call under a context without one
	inner    hoststore.HostStore
	dead     atomic.Bool
	killOnce sync.Once
	nrules   atomic.Int64 // len(rules); zero keeps a call's check to one load

	mu    sync.Mutex
	rules []*Injection

	abandoned sync.WaitGroup
	pmu       sync.Mutex
	panics    []error
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

// Wrap puts a Store with nothing injected around inner, whose calls under
// a context without an injector are the injector's.
func (i *Injector) Wrap(inner hoststore.HostStore) *Store { return &Store{inj: i, inner: inner} }

// bind returns the call's context, carrying its injector, and the
// injector.
func (s *Store) bind(ctx context.Context) (context.Context, *Injector) {
	if inj := InjectorOf(ctx); inj != nil {
		return ctx, inj
	}
	return s.inj.Bind(ctx), s.inj
}

// Inner is the wrapped store.
func (s *Store) Inner() hoststore.HostStore { return s.inner }

// Inject adds a rule; rules fire in the order they were injected, at most
// one per phase of a call. Inject panics on a rule that cannot act as
// written (an unknown op, phase or effect; Match on a request other than
// commit; a combination the Effect docs exclude): that is a bug in the row.
func (s *Store) Inject(r Rule) *Injection {
	if err := r.validate(); err != nil {
		panic("faults: Inject: " + err.Error())
	}
	left := r.Times
	if left == 0 {
		left = 1
	}
	in := &Injection{s: s, rule: r, left: left, fired: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, in)
	s.nrules.Store(int64(len(s.rules)))
	return in
}

func (s *Store) removeLocked(in *Injection) {
	for i, x := range s.rules {
		if x == in {
			s.rules = append(s.rules[:i:i], s.rules[i+1:]...)
			s.nrules.Store(int64(len(s.rules)))
			return
		}
	}
}

// Kill kills the handle now, as a process dies: the inner store's Kill()
// runs if it implements hoststore.Killer, and every later call returns
// ErrKilled. Calls in progress answer ErrKilled when the inner store
// returns them. Kill is idempotent; the inner Kill() runs once.
func (s *Store) Kill() {
	s.killOnce.Do(func() {
		s.dead.Store(true)
		if k, ok := s.inner.(hoststore.Killer); ok {
			k.Kill()
		}
	})
}

// Killed reports whether the handle was killed.
func (s *Store) Killed() bool { return s.dead.Load() }

// Close closes the inner store if it is an io.Closer, killed or not
// (closing is the end of a row, never part of a kill); otherwise it does
// nothing.
func (s *Store) Close() error {
	if c, ok := s.inner.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// WaitAbandoned waits until every request the Store abandoned in flight
// has been answered by the inner store (the answers are discarded: the
// process that sent them is dead). It returns ctx.Err() if ctx ends first,
// or an error for each abandoned request that panicked.
func (s *Store) WaitAbandoned(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.abandoned.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return errors.Join(s.panics...)
}

// take fires the first rule for op at phase that matches, if any.
func (s *Store) take(op Op, ph Phase, b *hoststore.CommitBatch) (Effect, bool) {
	if s.nrules.Load() == 0 {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range s.rules {
		r := in.rule
		if r.Op != op || r.Phase != ph || (r.Match != nil && !r.Match(b)) {
			continue
		}
		if !in.done {
			in.done = true
			close(in.fired)
		}
		if in.left > 0 {
			in.left--
			if in.left == 0 {
				s.removeLocked(in)
			}
		}
		return r.Effect, true
	}
	return 0, false
}

// answer is what an effect returns; the kill itself is done by the caller.
func answer(op Op, ph Phase, e Effect) error {
	switch e {
	case EffectUnavailable:
		return &hoststore.UnavailableError{Detail: fmt.Sprintf("conform: %s refused before it was sent (injected)", op)}
	case EffectIndeterminate:
		if ph == BeforeSend {
			return &hoststore.IndeterminateError{Detail: "conform: commit not sent, outcome withheld (injected)"}
		}
		return &hoststore.IndeterminateError{Detail: "conform: the store's answer to the commit was lost (injected)"}
	}
	return ErrKilled
}
