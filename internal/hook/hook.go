// Package hook is the slot between a store's in-store failpoints
// (package instore) and the harness's fault injectors (package
// internal/faults). instore.At calls Call, which finds the injector of the
// run the commit belongs to.
//
// A run's injector travels in the context the harness passes to every
// store call (With). A store that drops that context, and commits under
// one of its own, reaches the injectors that are active in the process
// (Activate): the first that claims the commit's id; a commit that none
// claims meets no fault. An injector is active only while it has
// something armed, so with nothing armed anywhere Call costs one atomic
// load and allocates nothing. A store process has no injector: its slot
// holds the handler that forwards the calls to the harness (Set).
//
// The package depends on the standard library and hoststore only, so that a
// store binary, which links instore and therefore this package, links
// nothing of the injector.
package hook

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
)

// Handler decides what a commit does at an in-store site: nil to go on, or
// the error the store must return at once. site is the site's name
// (instore.Site's value).
type Handler func(ctx context.Context, site string, id hoststore.CommitID) error

// Injector is one run's fault injector as the slot sees it.
type Injector interface {
	// At decides what a commit does at an in-store site, as a Handler.
	At(ctx context.Context, site string, id hoststore.CommitID) error
	// Claims reports whether the commit id belongs to the injector's run.
	// It is asked only for a context that carries no injector.
	Claims(id hoststore.CommitID) bool
	// Armed reports whether anything in-store is armed in the injector.
	Armed() bool
}

// ctxKey is the context key of the injector a context carries.
type ctxKey struct{}

// With returns a copy of ctx that carries inj: Call under it runs inj and
// no other injector.
func With(ctx context.Context, inj Injector) context.Context {
	return context.WithValue(ctx, ctxKey{}, inj)
}

// From returns the injector ctx carries, or nil.
func From(ctx context.Context) Injector {
	inj, _ := ctx.Value(ctxKey{}).(Injector)
	return inj
}

// state is what the slot holds. It is never changed once stored.
type state struct {
	handler Handler
	active  []Injector // in the order they were activated
}

var (
	mu   sync.Mutex            // serialises changes of slot
	slot atomic.Pointer[state] // nil when nothing is installed
)

// update stores a changed copy of the slot's state; an empty state empties
// the slot.
func update(change func(s *state)) {
	mu.Lock()
	defer mu.Unlock()
	var next state
	if s := slot.Load(); s != nil {
		next = *s
		next.active = slices.Clone(s.active)
	}
	change(&next)
	if next.handler == nil && len(next.active) == 0 {
		slot.Store(nil)
		return
	}
	slot.Store(&next)
}

// Set puts h in the slot as the process's handler, replacing the one there;
// a nil h removes it. The handler takes the calls that no injector takes.
// A commit that read the slot before Set may still run the old handler.
func Set(h Handler) { update(func(s *state) { s.handler = h }) }

// Activate adds inj to the injectors that a context without one may reach.
// An injector calls it when it arms its first thing. Activating an active
// injector does nothing.
func Activate(inj Injector) {
	update(func(s *state) {
		if !slices.Contains(s.active, inj) {
			s.active = append(s.active, inj)
		}
	})
}

// Deactivate removes inj from the active injectors. An injector calls it
// when it disarms its last thing.
func Deactivate(inj Injector) {
	update(func(s *state) {
		s.active = slices.DeleteFunc(s.active, func(x Injector) bool { return x == inj })
	})
}

// Installed reports whether the slot holds anything: a handler or an
// active injector.
func Installed() bool { return slot.Load() != nil }

// Armed reports whether a Call under ctx may find something armed: the
// injector ctx carries has something armed, or, for a ctx without one,
// the slot holds anything.
func Armed(ctx context.Context) bool {
	if slot.Load() == nil {
		return false
	}
	if inj := From(ctx); inj != nil {
		return inj.Armed()
	}
	return true
}

// Call decides what a commit does at site. It runs the injector ctx
// carries; for a ctx without one, the first active injector that claims
// id, else the process's handler. With the slot empty
// it returns nil after one atomic load and allocates nothing.
func Call(ctx context.Context, site string, id hoststore.CommitID) error {
	s := slot.Load()
	if s == nil {
		return nil
	}
	if inj := From(ctx); inj != nil {
		return inj.At(ctx, site, id)
	}
	for _, inj := range s.active {
		if inj.Claims(id) {
			return inj.At(ctx, site, id)
		}
	}
	if s.handler != nil {
		return s.handler(ctx, site, id)
	}
	return nil
}
