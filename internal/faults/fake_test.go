package faults

import (
	"context"
	"sync"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// fakeStore is a tiny inner store: it records the requests that reach it
// and the commits that land, counts kills and closes, and can block a
// request on a gate.
type fakeStore struct {
	mu      sync.Mutex
	calls   []Op
	landed  []hoststore.CommitID
	kills   int
	closes  int
	gate    chan struct{} // when set, requests wait for it to close
	entered chan Op       // when set, gets each request as it enters
	panics  bool          // Commit panics after the gate
	ctxErrs []error       // Commit's ctx.Err() after the gate
}

func (f *fakeStore) enter(ctx context.Context, op Op) {
	f.mu.Lock()
	f.calls = append(f.calls, op)
	gate, entered := f.gate, f.entered
	f.mu.Unlock()
	if entered != nil {
		entered <- op
	}
	if gate != nil {
		<-gate
	}
}

func (f *fakeStore) AcquireFence(ctx context.Context, _ hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	f.enter(ctx, OpAcquire)
	return hoststore.FenceGrant{Token: 7}, nil
}

func (f *fakeStore) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	f.enter(ctx, OpRenew)
	if token != 7 {
		return &hoststore.FencedOutError{Current: 7}
	}
	return nil
}

func (f *fakeStore) FenceTiming() hoststore.FenceTiming { return hoststore.DefaultFenceTiming() }

func (f *fakeStore) LoadHead(ctx context.Context, scope hoststore.ScopeRef) (*hoststore.VersionedHead, error) {
	f.enter(ctx, OpLoad)
	return &hoststore.VersionedHead{Version: 1, CommitID: "c0", Head: []byte(scope.Name)}, nil
}

func (f *fakeStore) ListHeads(ctx context.Context, _ hoststore.ScopeKind, _ *hoststore.ScopeName, _ int) (hoststore.HeadPage, error) {
	f.enter(ctx, OpList)
	return hoststore.HeadPage{Heads: []hoststore.NamedHead{{Name: "s"}}}, nil
}

func (f *fakeStore) ReadRows(ctx context.Context, _ hoststore.ScopeRef, from hoststore.RowIndex, _ int) ([]hoststore.Row, error) {
	f.enter(ctx, OpRead)
	return []hoststore.Row{{Index: from, Data: []byte("r")}}, nil
}

func (f *fakeStore) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	f.enter(ctx, OpCommit)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ctxErrs = append(f.ctxErrs, ctx.Err())
	if f.panics {
		panic("fake store broke")
	}
	f.landed = append(f.landed, b.CommitID())
	return nil
}

func (f *fakeStore) Kill() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kills++
}

func (f *fakeStore) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes++
	return nil
}

// snapshot returns what reached the fake so far.
func (f *fakeStore) snapshot() (calls []Op, landed []hoststore.CommitID, kills int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Op(nil), f.calls...), append([]hoststore.CommitID(nil), f.landed...), f.kills
}

// batch builds a batch creating one scope.
func batch(t testing.TB, id hoststore.CommitID) *hoststore.CommitBatch {
	t.Helper()
	b, err := hoststore.NewCommitBatch(id, 7, []hoststore.ScopeUpdate{{
		Scope: hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"},
		Next:  hoststore.FirstVersion,
		Head:  hoststore.Ptr([]byte("h")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fired reports whether an injection fired, without waiting.
func fired(in *Injection) bool {
	select {
	case <-in.Fired():
		return true
	default:
		return false
	}
}
