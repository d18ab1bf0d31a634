package faults

import (
	"context"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
)

// call runs one request through the wrapper's phases: before-send faults,
// in-flight kill, the request, after-answer faults.
func call[T any](s *Store, ctx context.Context, op Op, b *hoststore.CommitBatch, req func(context.Context) (T, error)) (T, error) {
	var zero T
	if s.dead.Load() {
		return zero, ErrKilled
	}
	ctx, inj := s.bind(ctx)
	if b != nil {
		inj.Claim(b.CommitID())
	}
	if err := s.before(ctx, inj, op, b); err != nil {
		return zero, err
	}
	if _, ok := s.take(op, InFlight, b); ok {
		abandon(s, ctx, op, req)
		s.Kill()
		return zero, ErrKilled
	}
	v, err := req(ctx)
	if err := s.after(ctx, inj, op, b); err != nil {
		return zero, err
	}
	if s.dead.Load() {
		// Killed while the request was in the store: the answer dies with
		// the process.
		return zero, ErrKilled
	}
	return v, err
}

// before applies the before-send rules and, for a commit, inj's terms.
func (s *Store) before(ctx context.Context, inj *Injector, op Op, b *hoststore.CommitBatch) error {
	e, ok := s.take(op, BeforeSend, b)
	if !ok && op == OpCommit {
		var err error
		if e, ok, err = inj.wrapTerms(ctx, WrapCommitBeforeSend); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	if e == EffectKill {
		s.Kill()
	}
	return answer(op, BeforeSend, e)
}

// after applies the after-answer rules and, for a commit, inj's terms.
func (s *Store) after(ctx context.Context, inj *Injector, op Op, b *hoststore.CommitBatch) error {
	e, ok := s.take(op, AfterAnswer, b)
	if !ok && op == OpCommit {
		var err error
		if e, ok, err = inj.wrapTerms(ctx, WrapCommitAfterAnswer); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	if e == EffectKill {
		s.Kill()
	}
	return answer(op, AfterAnswer, e)
}

// abandon sends req in a goroutine with a context the wrapper never
// cancels (a real process's request is already on the wire), and returns
// once the goroutine runs. Its answer is discarded; a panic is kept for
// WaitAbandoned, since nobody else could catch it.
func abandon[T any](s *Store, ctx context.Context, op Op, req func(context.Context) (T, error)) {
	started := make(chan struct{})
	s.abandoned.Add(1)
	go func() {
		defer s.abandoned.Done()
		defer func() {
			if p := recover(); p != nil {
				s.pmu.Lock()
				s.panics = append(s.panics, fmt.Errorf("conform: %s abandoned in flight panicked: %v", op, p))
				s.pmu.Unlock()
			}
		}()
		close(started)
		_, _ = req(context.WithoutCancel(ctx)) // the answer dies with the process
	}()
	<-started
}

// AcquireFence forwards to the inner store through the faults for OpAcquire.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	return call(s, ctx, OpAcquire, nil, func(ctx context.Context) (hoststore.FenceGrant, error) {
		return s.inner.AcquireFence(ctx, mode)
	})
}

// RenewFence forwards to the inner store through the faults for OpRenew.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	_, err := call(s, ctx, OpRenew, nil, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.RenewFence(ctx, token)
	})
	return err
}

// FenceTiming is the inner store's; it is not a request and takes no fault.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.inner.FenceTiming() }

// LoadHead forwards to the inner store through the faults for OpLoad.
func (s *Store) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	return call(s, ctx, OpLoad, nil, func(ctx context.Context) (*hoststore.VersionedHead, error) {
		return s.inner.LoadHead(ctx, scope)
	})
}

// ListHeads forwards to the inner store through the faults for OpList.
func (s *Store) ListHeads(ctx context.Context, kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
	return call(s, ctx, OpList, nil, func(ctx context.Context) (hoststore.HeadPage, error) {
		return s.inner.ListHeads(ctx, kind, after, limit)
	})
}

// ReadRows forwards to the inner store through the faults for OpRead.
func (s *Store) ReadRows(ctx context.Context, scope hoststore.ScopeRef, from hoststore.RowIndex, limit int) ([]hoststore.Row, error) {
	return call(s, ctx, OpRead, nil, func(ctx context.Context) ([]hoststore.Row, error) {
		return s.inner.ReadRows(ctx, scope, from, limit)
	})
}

// Commit forwards to the inner store through the faults for OpCommit,
// including the terms armed at the wrapper sites.
func (s *Store) Commit(ctx context.Context, batch *hoststore.CommitBatch) error {
	_, err := call(s, ctx, OpCommit, batch, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.Commit(ctx, batch)
	})
	return err
}
