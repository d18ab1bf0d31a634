package scripted

import (
	"context"
	"sync"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/chapter"
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
	// afterCommit runs with the store's answer and returns what the writer
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
