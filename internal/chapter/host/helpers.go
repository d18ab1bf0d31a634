package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/conform-spi/conform/internal/spec"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/faults"
)

// asErr is errors.As for an error that may be nil.
func asErr[T error](err error, target *T) bool { return err != nil && errors.As(err, target) }

// retryRefusal tells whether err is a way a store may refuse a duplicate
// commit id: any contract error that says nothing was applied.
func retryRefusal(err error) bool {
	switch hoststore.KindOf(err) {
	case hoststore.ErrKindConflict, hoststore.ErrKindInvalid, hoststore.ErrKindFencedOut:
		return true
	}
	return false
}

// goCommit commits on its own goroutine and returns the error on a channel.
func goCommit(ctx context.Context, p *chapter.Proc, b *hoststore.CommitBatch) <-chan error {
	return goCommitUnder(ctx, ctx, p, b)
}

// goCommitUnder is goCommit under the caller's context callCtx (see
// Proc.CommitUnder).
func goCommitUnder(ctx, callCtx context.Context, p *chapter.Proc, b *hoststore.CommitBatch) <-chan error {
	res := make(chan error, 1)
	go func() { res <- p.CommitUnder(ctx, callCtx, b) }()
	return res
}

// waitArrived waits until the held commit arrives at its site. A commit that
// returns without arriving means the store skipped the site for it: the
// spec ends as not exercised. A commit that does neither (it hung before
// the site) fails the spec.
func (e *env) waitArrived(ctx context.Context, h *faults.Hold, res <-chan error) {
	spec.Helper()
	select {
	case <-h.Arrived():
	case err := <-res:
		if chapter.IsHang(err) {
			e.Fail(chapter.ObErrors, fmt.Sprintf("the commit neither reached the in-store failpoint %s nor answered", h.Site()), "the commit at the failpoint", chapter.ErrText(err))
		}
		e.NothingExercised(fmt.Sprintf("the commit answered (%s) without reaching the in-store failpoint %s", chapter.OkOr(err), h.Site()))
	case <-ctx.Done():
		e.Fail(chapter.ObErrors, fmt.Sprintf("the commit neither reached the in-store failpoint %s nor answered", h.Site()), "the commit at the failpoint", "a hang")
	}
}

// holdCommit holds b at site, commits it from p on its own goroutine and
// waits until it arrives there; the commit's answer comes on the channel
// once the hold is released. The hold is disarmed when the spec ends.
func (e *env) holdCommit(ctx context.Context, p *chapter.Proc, b *hoststore.CommitBatch, site instore.Site) (*faults.Hold, <-chan error) {
	spec.Helper()
	return e.holdCommitUnder(ctx, ctx, p, b, site)
}

// holdCommitUnder is holdCommit for a commit under the caller's context
// callCtx (see Proc.CommitUnder).
func (e *env) holdCommitUnder(ctx, callCtx context.Context, p *chapter.Proc, b *hoststore.CommitBatch, site instore.Site) (*faults.Hold, <-chan error) {
	spec.Helper()
	h := e.Injector().HoldAt(site, chapter.MatchID(b.CommitID()))
	e.Spec().Defer(h.Disarm)
	res := goCommitUnder(ctx, callCtx, p, b)
	e.waitArrived(ctx, h, res)
	return h, res
}
