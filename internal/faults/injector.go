package faults

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/hook"
)

// Injector holds everything one run arms: in-store holds, recorders and
// terms, the pass table, wrapper terms, and the time the harness held
// commits. Two injectors never see each other's arming. Build one with
// NewInjector; it is safe for concurrent use.
//
// A store call reaches the injector of its run through its context:
// Bind returns one that carries it, and the harness passes it to every
// store call. A store that commits under a context of its own reaches
// the injectors that have something armed, matched by commit id: the
// first that claims it (Claim; commits sent through its wrapper, and
// commits it saw under a bound context, are claimed), while it has
// something armed. A commit that no injector claims meets no fault.
type Injector struct {
	// armed counts the in-store holds, recorders and term sets. It changes
	// only with reg held. While it is above zero the injector is active in
	// internal/hook; at zero it is not, and the pass table is emptied.
	armed atomic.Int64

	// reg holds what is armed at each site. The dispatcher never blocks
	// with reg or a library lock held, so arming and disarming stay free
	// while commits are held. Term sets are kept by the pass they apply at
	// (AnyPass for every pass).
	reg struct {
		sync.Mutex
		holds map[instore.Site][]*Hold
		terms map[instore.Site]map[int]*termSet
	}

	// passes is the pass table and the armed recorders. It is taken after
	// reg when both are; matchers of recorders run with it held.
	passes passTable

	claims idSet // commit ids claimed for this run

	// wrapArmed counts the wrapper sites with terms; zero keeps a commit's
	// check to one atomic load. It changes only with wrapReg held.
	wrapArmed atomic.Int64
	wrapReg   struct {
		sync.Mutex
		terms map[WrapSite]*termSet
	}

	clock harnessClock
}

// armedAll counts what is armed in every injector of the process (see
// ArmedAnywhere).
var armedAll atomic.Int64

// NewInjector returns an injector with nothing armed.
func NewInjector() *Injector {
	i := &Injector{}
	i.reg.holds = map[instore.Site][]*Hold{}
	i.reg.terms = map[instore.Site]map[int]*termSet{}
	i.wrapReg.terms = map[WrapSite]*termSet{}
	return i
}

// Bind returns a copy of ctx that carries the injector: the in-store
// calls of a commit made under it reach this injector and no other, and
// so do wrapper terms.
func (i *Injector) Bind(ctx context.Context) context.Context {
	return hook.With(ctx, i.hooked())
}

// InjectorOf returns the injector ctx carries (Bind), or nil.
func InjectorOf(ctx context.Context) *Injector {
	if d, ok := hook.From(ctx).(*dispatcher); ok {
		return (*Injector)(d)
	}
	return nil
}

// Claim marks commits as this run's: a store that reaches a site for one
// of them under a context without an injector reaches this injector,
// while it has something armed. The claims are bounded as the pass table
// is (PassMemory): a claim is forgotten once more than PassMemory other
// commits were claimed after it.
func (i *Injector) Claim(ids ...hoststore.CommitID) {
	for _, id := range ids {
		i.claims.add(id)
	}
}

// hooked returns the injector as internal/hook sees it.
func (i *Injector) hooked() *dispatcher { return (*dispatcher)(i) }

// dispatcher is an Injector as internal/hook calls it.
type dispatcher Injector

var _ hook.Injector = (*dispatcher)(nil)

// At runs the injector's in-store failpoint for a commit at site.
func (d *dispatcher) At(ctx context.Context, site string, id hoststore.CommitID) error {
	return (*Injector)(d).dispatchAt(ctx, site, id)
}

// Claims reports whether id was claimed or counted by the injector.
func (d *dispatcher) Claims(id hoststore.CommitID) bool {
	i := (*Injector)(d)
	return i.claims.has(id) || i.passes.has(id)
}

// Armed reports whether anything in-store is armed in the injector.
func (d *dispatcher) Armed() bool { return d.armed.Load() > 0 }

// activate makes the injector reachable from a context without one; called
// with reg held when its first thing is armed.
func (i *Injector) activate() { hook.Activate(i.hooked()) }

// deactivate undoes activate; called with reg held when its last thing is
// disarmed.
func (i *Injector) deactivate() { hook.Deactivate(i.hooked()) }

// idSet is a bounded set of commit ids, in two generations as the pass
// table: an id is kept while up to PassMemory others are added after it.
type idSet struct {
	mu       sync.Mutex
	cur, old map[hoststore.CommitID]struct{}
}

func (s *idSet) add(id hoststore.CommitID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cur[id]; ok {
		return
	}
	delete(s.old, id)
	if s.cur == nil {
		s.cur = make(map[hoststore.CommitID]struct{})
	} else if len(s.cur) >= PassMemory {
		s.old, s.cur = s.cur, make(map[hoststore.CommitID]struct{}, PassMemory)
	}
	s.cur[id] = struct{}{}
}

func (s *idSet) has(id hoststore.CommitID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.cur[id]
	if !ok {
		_, ok = s.old[id]
	}
	return ok
}
