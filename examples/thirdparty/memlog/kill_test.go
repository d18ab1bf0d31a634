package memlog_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"

	"example.com/thirdparty/memlog"
)

// The chapter sees a killed handle through conform's wrapper, which speaks
// for it; these tests check what memlog itself returns around a kill.

var scope = hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"}

// writer opens a handle, takes the fence and creates scope at version 1.
func writer(t *testing.T, f *memlog.Factory) (*memlog.Store, hoststore.FenceToken) {
	t.Helper()
	ctx := context.Background()
	h, err := f.Open(ctx)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	g, err := h.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		t.Fatalf("AcquireFence = %v", err)
	}
	commit(t, h, "create", g.Token, hoststore.ScopeUpdate{Scope: scope, Next: 1, Head: hoststore.Ptr([]byte("h1"))})
	return h.(*memlog.Store), g.Token
}

func batch(t *testing.T, id hoststore.CommitID, token hoststore.FenceToken, u hoststore.ScopeUpdate) *hoststore.CommitBatch {
	t.Helper()
	b, err := hoststore.NewCommitBatch(id, token, []hoststore.ScopeUpdate{u})
	if err != nil {
		t.Fatalf("NewCommitBatch = %v", err)
	}
	return b
}

func commit(t *testing.T, h hoststore.HostStore, id hoststore.CommitID, token hoststore.FenceToken, u hoststore.ScopeUpdate) {
	t.Helper()
	if err := h.Commit(context.Background(), batch(t, id, token, u)); err != nil {
		t.Fatalf("Commit(%s) = %v", id, err)
	}
}

// advance moves scope from version prev to prev+1 with a new head.
func advance(prev hoststore.ScopeVersion, head string) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: scope, Previous: hoststore.Ptr(prev), Next: prev + 1, Head: hoststore.Ptr([]byte(head))}
}

// hold stops one commit at one in-store site until it is released. Only
// conform's harness arms instore's sites, so the tests put holdAt's function
// in place of instore.At (memlog.SetAt).
type hold struct {
	site     instore.Site
	id       hoststore.CommitID
	arrived  chan struct{} // closed when the commit waits at the site
	released chan struct{} // closed by release
	caught   atomic.Bool
}

// holdAt holds the first commit with id id that reaches site, until
// release. Other commits and sites pass.
func holdAt(t *testing.T, site instore.Site, id hoststore.CommitID) *hold {
	h := &hold{site: site, id: id, arrived: make(chan struct{}), released: make(chan struct{})}
	restore := memlog.SetAt(func(ctx context.Context, s instore.Site, c hoststore.CommitID) error {
		if s != h.site || c != h.id || !h.caught.CompareAndSwap(false, true) {
			return nil
		}
		close(h.arrived)
		select {
		case <-h.released:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	t.Cleanup(restore)
	return h
}

func (h *hold) release() { close(h.released) }

// wantVersion checks, from a fresh handle, the version of scope.
func wantVersion(t *testing.T, f *memlog.Factory, want hoststore.ScopeVersion) {
	t.Helper()
	ctx := context.Background()
	h, err := f.Open(ctx)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	got, err := h.LoadHead(ctx, scope)
	if err != nil || got == nil || got.Version != want {
		t.Fatalf("LoadHead = %+v, %v; want version %d", got, err, want)
	}
}

func TestKilledHandleAnswersUnavailable(t *testing.T) {
	ctx := context.Background()
	f := memlog.NewFactory()
	h, token := writer(t, f)
	h.Kill()
	h.Kill() // idempotent
	if _, err := h.LoadHead(ctx, scope); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Errorf("LoadHead after Kill = %v, want Unavailable", err)
	}
	if err := h.RenewFence(ctx, token); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Errorf("RenewFence after Kill = %v, want Unavailable", err)
	}
	if err := h.Commit(ctx, batch(t, "after-kill", token, advance(1, "h2"))); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Errorf("Commit after Kill = %v, want Unavailable", err)
	}
	wantVersion(t, f, 1)
}

func TestCommitHeldBeforeItsPointAbandonsOnKill(t *testing.T) {
	for _, site := range []instore.Site{instore.CommitLocked, instore.CommitBeforePoint} {
		t.Run(string(site), func(t *testing.T) {
			f := memlog.NewFactory()
			h, token := writer(t, f)
			b := batch(t, "held", token, advance(1, "h2"))
			hold := holdAt(t, site, "held")
			res := make(chan error, 1)
			go func() { res <- h.Commit(context.Background(), b) }()
			<-hold.arrived
			h.Kill()
			hold.release()
			if err := <-res; hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
				t.Fatalf("held commit after Kill = %v, want Unavailable (nothing applied)", err)
			}
			wantVersion(t, f, 1)
		})
	}
}

func TestCommitWaitingForAScopeLockAbandonsOnKill(t *testing.T) {
	ctx := context.Background()
	f := memlog.NewFactory()
	h, token := writer(t, f)
	hold := holdAt(t, instore.CommitLocked, "first")
	first := make(chan error, 1)
	go func() { first <- h.Commit(ctx, batch(t, "first", token, advance(1, "first"))) }()
	<-hold.arrived // "first" holds the scope's lock
	other, err := f.Open(ctx)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	second := make(chan error, 1)
	go func() { second <- other.Commit(ctx, batch(t, "second", token, advance(1, "second"))) }()
	other.(hoststore.Killer).Kill()
	if err := <-second; hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Fatalf("a commit on a locked scope, killed while it waited = %v, want Unavailable", err)
	}
	hold.release()
	if err := <-first; err != nil {
		t.Fatalf("the held commit once released = %v, want nil", err)
	}
	wantVersion(t, f, 2)
}
