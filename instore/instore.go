package instore

import (
	"context"
	"errors"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/hook"
)

// Site names a point inside a store's commit where the harness may hold or
// crash it.
type Site string

// The in-store sites, in the order a commit passes them.
const (
	// CommitLocked is where a commit holds what keeps other commits of its
	// scopes out, before it checks anything. Which locks those may be
	// depends on the engine; see the package doc.
	CommitLocked Site = "commit-locked"
	// CommitBeforePoint is just before the commit point, the moment after
	// which the batch is visible.
	CommitBeforePoint Site = "commit-before-point"
	// CommitAfterPoint is just after the commit point, before the store
	// returns.
	CommitAfterPoint Site = "commit-after-point"
)

// Sites lists the three sites in the order a commit passes them.
var Sites = []Site{CommitLocked, CommitBeforePoint, CommitAfterPoint}

// ErrCrashed is wrapped by the error At returns when the harness crashes the
// commit at a site.
var ErrCrashed = errors.New("conform: crashed at an in-store failpoint")

// At is an in-store failpoint. A store calls it at site during the commit of
// the batch whose commit id is id. At returns nil to go on. It returns an
// error wrapping ErrCrashed when the harness crashes the commit there, and
// ctx.Err() when ctx ends while the harness holds or delays the commit
// there. On any error the store returns that error at once (see the package
// doc).
//
// With nothing armed, At returns nil after one atomic load and allocates
// nothing. A site not in Sites is never armed.
func At(ctx context.Context, site Site, id hoststore.CommitID) error {
	return hook.Call(ctx, string(site), id)
}
