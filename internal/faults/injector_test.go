package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/hook"
)

// bg0 is a context that carries no injector, as a store's own does.
var bg0 = context.Background()

// arrived reports whether a hold's commit arrived, without waiting.
func arrived(h *Hold) bool {
	select {
	case <-h.Arrived():
		return true
	default:
		return false
	}
}

// A commit whose context carries A meets A's holds and terms only, even
// when B has armed the same site for the same commit id.
func TestTwoInjectorsDoNotSeeEachOther(t *testing.T) {
	defer requireDisarmed(t)
	a, b := NewInjector(), NewInjector()
	defer requireInjectorDisarmed(t, a)
	defer requireInjectorDisarmed(t, b)
	ctxA, ctxB := a.Bind(bg0), b.Bind(bg0)
	ha := a.HoldAt(instore.CommitLocked, is("c1"))
	defer ha.Disarm()
	hb := b.HoldAt(instore.CommitLocked, is("c1"))
	defer hb.Disarm()
	if err := a.ArmTerms(instore.CommitBeforePoint, "return(true)"); err != nil {
		t.Fatal(err)
	}
	defer a.DisarmTerms(instore.CommitBeforePoint)
	if a.Armed() != 2 || b.Armed() != 1 || def.Armed() != 0 {
		t.Fatalf("Armed: a %d, b %d, def %d; want 2, 1, 0", a.Armed(), b.Armed(), def.Armed())
	}

	held := atAsync(ctxA, instore.CommitLocked, "c1")
	<-ha.Arrived()
	if arrived(hb) {
		t.Fatal("B's hold took a commit whose context carries A")
	}
	ha.Release()
	if err := <-held; err != nil {
		t.Fatalf("c1 under A, released: %v, want nil", err)
	}
	if err := instore.At(ctxB, instore.CommitBeforePoint, "c1"); err != nil {
		t.Fatalf("c1 under B at a site only A armed: %v, want nil", err)
	}
	if err := instore.At(ctxA, instore.CommitBeforePoint, "c1"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("c1 under A at a site A armed with return(true): %v, want instore.ErrCrashed", err)
	}
	// Each injector counts its own passes.
	if n := a.Passes("c1")[instore.CommitLocked]; n != 1 {
		t.Fatalf("A counted %d passes of c1 at commit-locked, want 1", n)
	}
	if n := b.Passes("c1")[instore.CommitLocked]; n != 0 {
		t.Fatalf("B counted %d passes of a commit it never saw", n)
	}

	held = atAsync(ctxB, instore.CommitLocked, "c1")
	<-hb.Arrived()
	hb.Crash()
	if err := <-held; !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("c1 under B, crashed: %v, want instore.ErrCrashed", err)
	}
	if n := b.Passes("c1")[instore.CommitLocked]; n != 1 {
		t.Fatalf("B counted %d passes of c1 at commit-locked, want 1 (A's pass is A's)", n)
	}
}

// A store that drops the caller's context reaches the active injector that
// claims the commit; a commit nobody claims reaches no injector.
func TestCommitIDFallback(t *testing.T) {
	defer requireDisarmed(t)
	a, b := NewInjector(), NewInjector()
	defer requireInjectorDisarmed(t, a)
	defer requireInjectorDisarmed(t, b)
	ha := a.HoldAt(instore.CommitLocked, nil)
	defer ha.Disarm()
	hb := b.HoldAt(instore.CommitLocked, nil)
	defer hb.Disarm()
	a.Claim("ca")
	b.Claim("cb")

	held := atAsync(bg0, instore.CommitLocked, "cb")
	<-hb.Arrived()
	if arrived(ha) {
		t.Fatal("A's hold took a commit B claims")
	}
	hb.Release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	held = atAsync(bg0, instore.CommitLocked, "ca")
	<-ha.Arrived()
	ha.Crash()
	if err := <-held; !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("ca, claimed by A and crashed by its hold: %v, want instore.ErrCrashed", err)
	}

	// Nobody claims c9: it meets no injector, though def has terms armed.
	if err := def.ArmTerms(instore.CommitBeforePoint, "return(true)"); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmTerms(instore.CommitBeforePoint)
	a2 := a.HoldAt(instore.CommitLocked, nil)
	defer a2.Disarm()
	if err := instore.At(bg0, instore.CommitLocked, "c9"); err != nil {
		t.Fatalf("an unclaimed commit: %v, want nil", err)
	}
	if err := instore.At(bg0, instore.CommitBeforePoint, "c9"); err != nil {
		t.Fatalf("an unclaimed commit at a site def armed: %v, want nil", err)
	}
	if arrived(a2) || len(a.Passes("c9")) != 0 || len(def.Passes("c9")) != 0 {
		t.Fatal("an injector took a commit it does not claim")
	}
}

// A commit A counted under a bound context is A's at its later sites too,
// when the store reaches them under a context of its own.
func TestCountedCommitIsClaimed(t *testing.T) {
	defer requireDisarmed(t)
	a, b := NewInjector(), NewInjector()
	if err := a.ArmTerms(instore.CommitBeforePoint, `1*return("crash")`); err != nil {
		t.Fatal(err)
	}
	defer a.DisarmTerms(instore.CommitBeforePoint)
	if err := b.ArmTerms(instore.CommitBeforePoint, "return(true)"); err != nil {
		t.Fatal(err)
	}
	defer b.DisarmTerms(instore.CommitBeforePoint)
	if err := instore.At(a.Bind(bg0), instore.CommitLocked, "c1"); err != nil {
		t.Fatal(err)
	}
	err := instore.At(bg0, instore.CommitBeforePoint, "c1")
	if !errors.Is(err, instore.ErrCrashed) || !strings.Contains(err.Error(), strconv.Quote(`1*return("crash")`)) {
		t.Fatalf("c1 at commit-before-point under a context of its own: %v, want A's crash", err)
	}
}

// droppingStore stands for a store that commits from its own goroutine
// under context.Background(): its in-store calls carry no injector.
type droppingStore struct{ fakeStore }

func (d *droppingStore) Commit(_ context.Context, b *hoststore.CommitBatch) error {
	out := make(chan error, 1)
	go func() {
		ctx := context.Background()
		for _, s := range instore.Sites {
			if err := instore.At(ctx, s, b.CommitID()); err != nil {
				out <- err
				return
			}
		}
		out <- nil
	}()
	return <-out
}

// A commit sent through an injector's wrapper is claimed for it, so a
// store that drops the context still reaches it; the wrapper's terms are
// the injector's.
func TestWrapperClaimsAndTermsAreTheInjectors(t *testing.T) {
	defer requireDisarmed(t)
	a, b := NewInjector(), NewInjector()
	ha := a.HoldAt(instore.CommitBeforePoint, nil)
	defer ha.Disarm()
	hb := b.HoldAt(instore.CommitBeforePoint, nil)
	defer hb.Disarm()
	ha.Crash()
	hb.Release()
	if err := a.Wrap(&droppingStore{}).Commit(bg0, batch(t, "wa")); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("a commit through A's wrapper into a store that drops ctx: %v, want A's crash", err)
	}
	if arrived(hb) {
		t.Fatal("B's hold took a commit sent through A's wrapper")
	}

	if err := a.ArmWrapTerms(WrapCommitBeforeSend, `return("unavailable")`); err != nil {
		t.Fatal(err)
	}
	defer a.DisarmWrapTerms(WrapCommitBeforeSend)
	if b.Armed() != 1 {
		t.Fatalf("B counts %d armed, want its hold alone", b.Armed())
	}
	for _, c := range []struct {
		what string
		s    *Store
		ctx  context.Context
		want hoststore.ErrorKind
	}{
		{"B's wrapper under A's context", b.Wrap(&fakeStore{}), a.Bind(bg0), hoststore.ErrKindUnavailable},
		{"A's wrapper", a.Wrap(&fakeStore{}), bg0, hoststore.ErrKindUnavailable},
		{"A's wrapper under B's context", a.Wrap(&fakeStore{}), b.Bind(bg0), hoststore.ErrKindNone},
		{"B's wrapper", b.Wrap(&fakeStore{}), bg0, hoststore.ErrKindNone},
	} {
		if k := hoststore.KindOf(c.s.Commit(c.ctx, batch(t, "w1"))); k != c.want {
			t.Errorf("a commit through %s with A's before-send terms: kind %q, want %q", c.what, k, c.want)
		}
	}
}

// An injector with nothing armed leaves instore.At on its fast path, even
// under a context that carries it.
func TestUnarmedInjectorLeavesFastPath(t *testing.T) {
	defer requireDisarmed(t)
	a := NewInjector()
	ctx := a.Bind(bg0)
	if hook.Installed() {
		t.Fatal("an injector with nothing armed is in internal/hook's slot")
	}
	if n := testing.AllocsPerRun(100, func() { _ = instore.At(ctx, instore.CommitLocked, "c1") }); n != 0 {
		t.Fatalf("At under an unarmed injector's context allocates %v times, want 0", n)
	}
	h := a.HoldAt(instore.CommitLocked, nil)
	if !hook.Installed() {
		t.Fatal("an armed injector is not in internal/hook's slot")
	}
	h.Disarm()
	rec := a.Record(nil)
	rec.Disarm()
	if err := a.ArmWrapTerms(WrapCommitAfterAnswer, `return("kill")`); err != nil {
		t.Fatal(err)
	}
	if hook.Installed() {
		t.Fatal("wrapper terms put the injector in internal/hook's slot")
	}
	a.DisarmWrapTerms(WrapCommitAfterAnswer)
	requireInjectorDisarmed(t, a)
	// Under an unarmed injector's context, another injector's hold that
	// matches every commit takes nothing.
	b := NewInjector()
	hb := b.HoldAt(instore.CommitLocked, nil)
	defer hb.Disarm()
	if err := instore.At(ctx, instore.CommitLocked, "c1"); err != nil || arrived(hb) {
		t.Fatalf("At under A's context with B armed: %v, B's hold arrived %v; want nil, false", err, arrived(hb))
	}
}

// Each injector keeps its own harness time.
func TestHarnessTimeIsTheInjectors(t *testing.T) {
	defer requireDisarmed(t)
	a, b := NewInjector(), NewInjector()
	h := a.HoldAt(instore.CommitLocked, nil)
	defer h.Disarm()
	held := atAsync(a.Bind(bg0), instore.CommitLocked, "c1")
	<-h.Arrived()
	time.Sleep(5 * time.Millisecond)
	h.Release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if d := a.HarnessTime(); d < 5*time.Millisecond {
		t.Fatalf("A's harness time %s after a 5ms hold", d)
	}
	if d := b.HarnessTime(); d != 0 {
		t.Fatalf("B's harness time %s, want 0: the hold was A's", d)
	}
}

// Runs arm, commit and disarm at once, each through its own injector, and
// each sees only its own faults (run it with -race).
func TestInjectorsConcurrent(t *testing.T) {
	defer requireDisarmed(t)
	const runs, commits = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inj := NewInjector()
			ctx := inj.Bind(bg0)
			st := &scopeStore{scopes: 2}
			rec := inj.Record(nil)
			defer rec.Disarm()
			for c := range commits {
				// The same ids in every run: only the context tells them apart.
				id := hoststore.CommitID(fmt.Sprintf("c%d", c))
				h := inj.HoldAtPass(instore.CommitLocked, 2, is(id))
				if c%2 == 0 {
					h.Crash()
				} else {
					h.Release()
				}
				err := st.commit(ctx, id)
				h.Disarm()
				if crashed := errors.Is(err, instore.ErrCrashed); crashed != (c%2 == 0) || (!crashed && err != nil) {
					errs <- fmt.Errorf("run %d, %s: %v", r, id, err)
					return
				}
				if !arrived(h) {
					errs <- fmt.Errorf("run %d, %s: its own hold was not taken", r, id)
					return
				}
			}
			if n := len(rec.Commits()); n != commits {
				errs <- fmt.Errorf("run %d recorded %d commits, want %d", r, n, commits)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkAtBoundUnarmed measures instore.At under a context that carries
// an injector with nothing armed, while another injector is armed: the
// slot is full, the context's injector answers nil.
func BenchmarkAtBoundUnarmed(b *testing.B) {
	other := NewInjector()
	h := other.HoldAt(instore.CommitLocked, is("other"))
	defer h.Disarm()
	ctx := NewInjector().Bind(bg0)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range instore.Sites {
			if err := instore.At(ctx, s, "c1"); err != nil {
				b.Fatal(err)
			}
		}
	}
}
