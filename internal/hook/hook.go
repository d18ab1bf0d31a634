// Package hook is the slot between a store's in-store failpoints
// (package instore) and the harness's fault injector (package
// internal/faults). instore.At calls Call; the injector puts its dispatcher
// in the slot with Set while anything is armed and takes it out when nothing
// is.
//
// The package depends on the standard library and hoststore only, so that a
// store binary, which links instore and therefore this package, links
// nothing of the injector.
package hook

import (
	"context"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
)

// Handler decides what a commit does at an in-store site: nil to go on, or
// the error the store must return at once. site is the site's name
// (instore.Site's value).
type Handler func(ctx context.Context, site string, id hoststore.CommitID) error

// slot holds the handler, or nil when nothing is armed.
var slot atomic.Pointer[Handler]

// Set puts h in the slot, replacing the handler there; a nil h empties it.
// A commit that read the slot before Set may still run the old handler.
func Set(h Handler) {
	if h == nil {
		slot.Store(nil)
		return
	}
	slot.Store(&h)
}

// Installed reports whether the slot holds a handler.
func Installed() bool { return slot.Load() != nil }

// Call runs the handler in the slot for a commit at site and returns its
// error. With the slot empty it returns nil after one atomic load and
// allocates nothing.
func Call(ctx context.Context, site string, id hoststore.CommitID) error {
	h := slot.Load()
	if h == nil {
		return nil
	}
	return (*h)(ctx, site, id)
}
