package procstore_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/faults"
	"github.com/conform-spi/conform/procstore"
)

// goStore returns a factory over the SQLite store served by this test
// binary, closed with the test.
func goStore(t *testing.T) *procstore.Factory {
	t.Helper()
	f, err := procstore.New([]string{conformServe(t), "sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(f.Realm()); !os.IsNotExist(err) {
			t.Errorf("the realm %s is still there after Close: %v", f.Realm(), err)
		}
	})
	return f
}

func open(t *testing.T, ctx context.Context, f *procstore.Factory) *procstore.Store {
	t.Helper()
	st, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*procstore.Store)
}

// writer opens a process that holds the fence, taking it over from any
// earlier holder.
func writer(t *testing.T, ctx context.Context, f *procstore.Factory) (*procstore.Store, hoststore.FenceToken) {
	t.Helper()
	s := open(t, ctx, f)
	g, err := s.AcquireFence(ctx, hoststore.Takeover)
	if err != nil {
		t.Fatal(err)
	}
	return s, g.Token
}

func twoScopeBatch(t *testing.T, id string, token hoststore.FenceToken) *hoststore.CommitBatch {
	t.Helper()
	b, err := hoststore.NewCommitBatch(hoststore.CommitID(id), token, []hoststore.ScopeUpdate{
		{Scope: hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("a"))},
		{Scope: hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "b"}, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("b")), Append: [][]byte{[]byte("row")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gone fails unless the process pid was reaped.
func gone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d is still there after its call returned: %v", pid, err)
	}
}

// landed reports whether a new process sees both scopes of the batch, and
// fails on a torn batch.
func landed(t *testing.T, ctx context.Context, f *procstore.Factory) bool {
	t.Helper()
	r := open(t, ctx, f)
	defer r.Close()
	a, err := r.LoadHead(ctx, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.LoadHead(ctx, hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if (a == nil) != (b == nil) {
		t.Fatalf("the batch is torn: a %v, b %v", a, b)
	}
	return a != nil
}

// TestKillWhileHeldAtSite holds a commit at each site inside the store
// process and kills the process there with SIGKILL: the commit returns an
// error, the process is gone, and the batch landed exactly when the site
// was past the commit point.
func TestKillWhileHeldAtSite(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			inj := faults.NewInjector()
			ctx := inj.Bind(context.Background())
			f := goStore(t)
			w, tok := writer(t, ctx, f)
			b := twoScopeBatch(t, "held-"+string(site), tok)
			h := inj.HoldAt(site, func(id hoststore.CommitID) bool { return id == b.CommitID() })
			defer h.Disarm()
			errc := make(chan error, 1)
			go func() { errc <- w.Commit(ctx, b) }()
			<-h.Arrived()
			w.Kill()
			err := <-errc
			if err == nil {
				t.Fatal("the commit of a killed process answered Ok")
			}
			if k := hoststore.KindOf(err); k != hoststore.ErrKindIndeterminate && k != hoststore.ErrKindUnavailable {
				t.Errorf("the commit of a killed process answered %v, want Indeterminate or Unavailable", err)
			}
			gone(t, procstore.Pid(w))
			h.Release()
			if got, want := landed(t, ctx, f), site == instore.CommitAfterPoint; got != want {
				t.Errorf("landed %v after a kill at %s, want %v", got, site, want)
			}
		})
	}
}

// TestCrashAtSite crashes a commit at each site: the harness kills the
// process instead of answering its at call, and Commit returns an error
// wrapping instore.ErrCrashed.
func TestCrashAtSite(t *testing.T) {
	for _, site := range instore.Sites {
		t.Run(string(site), func(t *testing.T) {
			inj := faults.NewInjector()
			ctx := inj.Bind(context.Background())
			f := goStore(t)
			w, tok := writer(t, ctx, f)
			b := twoScopeBatch(t, "crash-"+string(site), tok)
			h := inj.HoldAt(site, func(id hoststore.CommitID) bool { return id == b.CommitID() })
			defer h.Disarm()
			h.Crash()
			err := w.Commit(ctx, b)
			if !errors.Is(err, instore.ErrCrashed) {
				t.Fatalf("Commit = %v, want an error wrapping instore.ErrCrashed", err)
			}
			gone(t, procstore.Pid(w))
			if _, err := w.LoadHead(ctx, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}); err == nil {
				t.Error("a crashed process still answers")
			}
			if got, want := landed(t, ctx, f), site == instore.CommitAfterPoint; got != want {
				t.Errorf("landed %v after a crash at %s, want %v", got, site, want)
			}
		})
	}
}

// TestAtCallsReachTheOpeningRun holds a commit sent under a context
// without an injector: its at calls reach the injector of the run that
// opened the handle, and another run's hold for the same commit id, armed
// at the same time, never takes it.
func TestAtCallsReachTheOpeningRun(t *testing.T) {
	a, b := faults.NewInjector(), faults.NewInjector()
	f := goStore(t)
	w, tok := writer(t, a.Bind(context.Background()), f)
	batch := twoScopeBatch(t, "opening-run", tok)
	match := func(id hoststore.CommitID) bool { return id == batch.CommitID() }
	hb := b.HoldAt(instore.CommitLocked, match)
	defer hb.Disarm()
	b.Claim(batch.CommitID()) // b claims it too: the handle's injector still wins
	ha := a.HoldAt(instore.CommitLocked, match)
	defer ha.Disarm()
	errc := make(chan error, 1)
	go func() { errc <- w.Commit(context.Background(), batch) }()
	select {
	case <-ha.Arrived():
	case <-hb.Arrived():
		t.Fatal("another run's hold took a commit of the handle's run")
	}
	ha.Release()
	if err := <-errc; err != nil {
		t.Fatalf("the commit released by the opening run's hold: %v", err)
	}
	select {
	case <-hb.Arrived():
		t.Fatal("another run's hold took a commit of the handle's run")
	default:
	}
	if got := a.Passes(batch.CommitID()); got[instore.CommitLocked] == 0 {
		t.Errorf("the opening run counted passes %v, want commit-locked among them", got)
	}
	if got := b.Passes(batch.CommitID()); len(got) != 0 {
		t.Errorf("another run counted passes %v of the handle's commit", got)
	}
}

// TestCloseIsGraceful closes a process: it exits on the end of its input,
// and later calls answer Unavailable.
func TestCloseIsGraceful(t *testing.T) {
	ctx := context.Background()
	f := goStore(t)
	s := open(t, ctx, f)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	gone(t, procstore.Pid(s))
	if _, err := s.AcquireFence(ctx, hoststore.Exclusive); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
		t.Errorf("AcquireFence after Close = %v, want Unavailable", err)
	}
}

// TestLapseFenceLeases lets a live holder's lease run out through a
// process of its own: an exclusive acquire then succeeds.
func TestLapseFenceLeases(t *testing.T) {
	ctx := context.Background()
	f := goStore(t)
	w, _ := writer(t, ctx, f)
	defer w.Close()
	q := open(t, ctx, f)
	defer q.Close()
	var held *hoststore.HeldError
	if _, err := q.AcquireFence(ctx, hoststore.Exclusive); !errors.As(err, &held) {
		t.Fatalf("an exclusive acquire over a live holder = %v, want Held", err)
	}
	if err := f.LapseFenceLeases(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.AcquireFence(ctx, hoststore.Exclusive); err != nil {
		t.Fatalf("an exclusive acquire after LapseFenceLeases = %v", err)
	}
}
