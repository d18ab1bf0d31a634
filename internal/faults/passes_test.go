package faults

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// scopeStore stands for a store that locks each scope of a batch in its
// own step: a commit passes commit-locked once per scope, then
// commit-before-point and commit-after-point once each. On an error from
// instore.At it returns it at once, as a store must.
type scopeStore struct {
	scopes int
	mu     sync.Mutex
	landed []hoststore.CommitID
}

func (s *scopeStore) commit(ctx context.Context, id hoststore.CommitID) error {
	for range s.scopes {
		if err := instore.At(ctx, instore.CommitLocked, id); err != nil {
			return err
		}
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	s.mu.Lock()
	s.landed = append(s.landed, id)
	s.mu.Unlock()
	return instore.At(ctx, instore.CommitAfterPoint, id)
}

func (s *scopeStore) commitAsync(ctx context.Context, id hoststore.CommitID) <-chan error {
	out := make(chan error, 1)
	go func() { out <- s.commit(ctx, id) }()
	return out
}

// twoPasses is what a commit of scopeStore{scopes: 2} reaches.
var twoPasses = map[instore.Site]int{instore.CommitLocked: 2, instore.CommitBeforePoint: 1, instore.CommitAfterPoint: 1}

func TestHoldAtPassHoldsOnlyThatPass(t *testing.T) {
	defer requireDisarmed(t)
	st := &scopeStore{scopes: 2}
	h := def.HoldAtPass(instore.CommitLocked, 2, is("c1"))
	defer h.Disarm()
	if h.Site() != instore.CommitLocked || h.Pass() != 2 {
		t.Fatalf("hold at %s pass %d, want commit-locked pass 2", h.Site(), h.Pass())
	}
	done := st.commitAsync(ctx0, "c1")
	<-h.Arrived()
	// Held at its second pass: the first went through, nothing after.
	if got, want := def.Passes("c1"), map[instore.Site]int{instore.CommitLocked: 2}; !maps.Equal(got, want) {
		t.Fatalf("passes of c1 while held = %v, want %v", got, want)
	}
	// Another commit goes through both of its passes: the hold caught one.
	if err := st.commit(ctx0, "c2"); err != nil {
		t.Fatalf("commit c2 while c1 is held: %v, want nil", err)
	}
	h.Release()
	if err := <-done; err != nil {
		t.Fatalf("released commit c1: %v, want nil", err)
	}
	if got := def.Passes("c1"); !maps.Equal(got, twoPasses) {
		t.Fatalf("passes of c1 = %v, want %v", got, twoPasses)
	}
}

func TestHoldAtPassNeverReachedStaysEmpty(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAtPass(instore.CommitBeforePoint, 2, nil)
	defer h.Disarm()
	// A commit held at its first pass would wait for ctx to end.
	ctx, cancel := context.WithTimeout(ctx0, 10*time.Second)
	defer cancel()
	if err := (&scopeStore{scopes: 2}).commit(ctx, "c1"); err != nil {
		t.Fatalf("commit that passes commit-before-point once: %v, want nil", err)
	}
	select {
	case <-h.Arrived():
		t.Fatal("a hold at commit-before-point@2 caught a commit that passes it once")
	default:
	}
}

// Crashing a hold at pass 2 before the commit arrives makes the second At
// of the site fail, and only it.
func TestCrashAtPass(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAtPass(instore.CommitLocked, 2, is("c1"))
	defer h.Disarm()
	h.Crash()
	if err := instore.At(ctx0, instore.CommitLocked, "c1"); err != nil {
		t.Fatalf("first At of c1 at commit-locked: %v, want nil", err)
	}
	if err := instore.At(ctx0, instore.CommitLocked, "c2"); err != nil {
		t.Fatalf("first At of c2 at commit-locked: %v, want nil", err)
	}
	err := instore.At(ctx0, instore.CommitLocked, "c1")
	if !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("second At of c1 at commit-locked: %v, want instore.ErrCrashed", err)
	}
	if !strings.Contains(err.Error(), `commit-locked@2 of commit "c1"`) {
		t.Fatalf("crash error %q does not name the pass and the commit", err)
	}
	select {
	case <-h.Arrived():
	default:
		t.Fatal("the crash happened and Arrived is open")
	}
	for _, id := range []hoststore.CommitID{"c1", "c2", "c2"} {
		if err := instore.At(ctx0, instore.CommitLocked, id); err != nil {
			t.Fatalf("At of %s at commit-locked after the crash: %v, want nil", id, err)
		}
	}
	// Through a store: the commit stops at the crash, nothing lands.
	st := &scopeStore{scopes: 2}
	h2 := def.HoldAtPass(instore.CommitLocked, 2, is("c3"))
	defer h2.Disarm()
	h2.Crash()
	if err := st.commit(ctx0, "c3"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("commit c3 crashed at commit-locked@2: %v, want instore.ErrCrashed", err)
	}
	if got, want := def.Passes("c3"), map[instore.Site]int{instore.CommitLocked: 2}; !maps.Equal(got, want) || len(st.landed) != 0 {
		t.Fatalf("after the crash: passes %v, landed %v; want %v and nothing", got, st.landed, want)
	}
}

// HoldAt keeps its meaning: the first matching pass, whatever its number.
func TestHoldAtTakesTheFirstMatchingPass(t *testing.T) {
	defer requireDisarmed(t)
	h1 := def.HoldAt(instore.CommitLocked, is("c1"))
	defer h1.Disarm()
	if h1.Pass() != AnyPass {
		t.Fatalf("HoldAt's pass = %d, want AnyPass", h1.Pass())
	}
	h1.Release()
	if err := instore.At(ctx0, instore.CommitLocked, "c1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h1.Arrived():
	default:
		t.Fatal("HoldAt did not take the commit's first pass")
	}
	// Armed after the first pass, HoldAt takes the second.
	h2 := def.HoldAt(instore.CommitLocked, is("c1"))
	defer h2.Disarm()
	held := atAsync(ctx0, instore.CommitLocked, "c1")
	<-h2.Arrived()
	if n := def.Passes("c1")[instore.CommitLocked]; n != 2 {
		t.Fatalf("HoldAt armed after pass 1 caught pass %d, want 2", n)
	}
	h2.Release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}

func TestRecorder(t *testing.T) {
	defer requireDisarmed(t)
	st := &scopeStore{scopes: 2}
	rec := def.Record(func(id hoststore.CommitID) bool { return strings.HasPrefix(string(id), "a") })
	defer rec.Disarm()
	if def.Armed() != 1 {
		t.Fatalf("def.Armed() = %d with a recorder armed, want 1", def.Armed())
	}
	for _, id := range []hoststore.CommitID{"a1", "b1", "a2"} {
		if err := st.commit(ctx0, id); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rec.Commits(), []hoststore.CommitID{"a1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("Commits() = %v, want %v", got, want)
	}
	wantTrail := []Pass{{instore.CommitLocked, 1}, {instore.CommitLocked, 2}, {instore.CommitBeforePoint, 1}, {instore.CommitAfterPoint, 1}}
	for _, id := range []hoststore.CommitID{"a1", "a2"} {
		if got := rec.Passes(id); !maps.Equal(got, twoPasses) {
			t.Errorf("def.Passes(%s) = %v, want %v", id, got, twoPasses)
		}
		if got := rec.Trail(id); !slices.Equal(got, wantTrail) {
			t.Errorf("Trail(%s) = %v, want %v", id, got, wantTrail)
		}
	}
	if got := rec.Passes("b1"); len(got) != 0 || rec.Trail("b1") != nil {
		t.Errorf("the recorder kept b1, which it does not match: %v", got)
	}
	// The table counted b1 all the same.
	if got := def.Passes("b1"); !maps.Equal(got, twoPasses) {
		t.Errorf("def.Passes(b1) = %v, want %v", got, twoPasses)
	}
	if s := fmt.Sprint(wantTrail[1]); s != "commit-locked@2" {
		t.Errorf("a pass prints as %q, want commit-locked@2", s)
	}
	rec.Disarm()
	rec.Disarm() // idempotent
	if err := st.commit(ctx0, "a3"); err != nil {
		t.Fatal(err)
	}
	if rec.Trail("a3") != nil || !maps.Equal(rec.Passes("a1"), twoPasses) {
		t.Fatal("a disarmed recorder recorded, or forgot what it had")
	}
}

// The explorer's loop: record a run, then crash another run of the same
// commit at each (site, pass) it reached.
func TestRecordThenCrashAtEachPass(t *testing.T) {
	defer requireDisarmed(t)
	rec := def.Record(is("c1"))
	if err := (&scopeStore{scopes: 2}).commit(ctx0, "c1"); err != nil {
		t.Fatal(err)
	}
	rec.Disarm()
	for _, p := range rec.Trail("c1") {
		st := &scopeStore{scopes: 2}
		h := def.HoldAtPass(p.Site, p.N, is("c1"))
		h.Crash()
		err := st.commit(ctx0, "c1")
		h.Disarm()
		if !errors.Is(err, instore.ErrCrashed) {
			t.Fatalf("run crashed at %s: %v, want instore.ErrCrashed", p, err)
		}
		if landed := len(st.landed) == 1; landed != (p.Site == instore.CommitAfterPoint) {
			t.Fatalf("run crashed at %s: landed = %v", p, landed)
		}
	}
}

func TestConcurrentCommitsKeepSeparateCounts(t *testing.T) {
	defer requireDisarmed(t)
	const n = 16
	st := &scopeStore{scopes: 2}
	rec := def.Record(nil)
	defer rec.Disarm()
	// One commit is held at its second pass while the others run through.
	h := def.HoldAtPass(instore.CommitLocked, 2, is("c7"))
	defer h.Disarm()
	errs := make([]<-chan error, n)
	for i := range n {
		errs[i] = st.commitAsync(ctx0, hoststore.CommitID(fmt.Sprintf("c%d", i)))
	}
	<-h.Arrived()
	for i := range n {
		if i == 7 {
			continue
		}
		if err := <-errs[i]; err != nil {
			t.Fatalf("c%d: %v", i, err)
		}
	}
	h.Crash()
	if err := <-errs[7]; !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("c7: %v, want instore.ErrCrashed", err)
	}
	for i := range n {
		id := hoststore.CommitID(fmt.Sprintf("c%d", i))
		want := twoPasses
		if i == 7 {
			want = map[instore.Site]int{instore.CommitLocked: 2}
		}
		if got := rec.Passes(id); !maps.Equal(got, want) {
			t.Errorf("%s: recorded %v, want %v", id, got, want)
		}
		if got := def.Passes(id); !maps.Equal(got, want) {
			t.Errorf("%s: counted %v, want %v", id, got, want)
		}
	}
}

func TestArmTermsAtPass(t *testing.T) {
	defer requireDisarmed(t)
	st := &scopeStore{scopes: 2}
	// Each commit crashes at its second pass of commit-locked.
	if err := def.ArmTermsAtPass(instore.CommitLocked, 2, `return("crash")`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []hoststore.CommitID{"c1", "c2"} {
		if err := instore.At(ctx0, instore.CommitLocked, id); err != nil {
			t.Fatalf("%s pass 1: %v, want nil", id, err)
		}
	}
	for _, id := range []hoststore.CommitID{"c1", "c2"} {
		if err := instore.At(ctx0, instore.CommitLocked, id); !errors.Is(err, instore.ErrCrashed) {
			t.Fatalf("%s pass 2: %v, want instore.ErrCrashed", id, err)
		}
	}
	// Counts run over the pass's calls only: 1* crashes the first commit
	// that reaches pass 2, and no other call.
	if err := def.ArmTermsAtPass(instore.CommitLocked, 2, `1*return("crash")`); err != nil {
		t.Fatal(err)
	}
	if err := st.commit(ctx0, "c3"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("c3 under commit-locked@2=1*return(\"crash\"): %v, want instore.ErrCrashed", err)
	}
	if err := st.commit(ctx0, "c4"); err != nil {
		t.Fatalf("c4 after the count was spent: %v, want nil", err)
	}
	// Every-pass terms sit beside a pass's terms; the pass's go first.
	if err := def.ArmTerms(instore.CommitLocked, `1*off->1*return("crash")`); err != nil {
		t.Fatal(err)
	}
	if err := def.ArmTermsAtPass(instore.CommitLocked, 1, "sleep(0)"); err != nil {
		t.Fatal(err)
	}
	if n := def.Armed(); n != 3 {
		t.Fatalf("def.Armed() = %d with terms at passes 0, 1 and 2, want 3", n)
	}
	// c5 pass 1: sleep(0), then off. c5 pass 2: the spent 1* term passes
	// it, then the every-pass terms crash it.
	if err := st.commit(ctx0, "c5"); !errors.Is(err, instore.ErrCrashed) || def.Passes("c5")[instore.CommitLocked] != 2 {
		t.Fatalf("c5: %v at pass %d, want instore.ErrCrashed at pass 2", err, def.Passes("c5")[instore.CommitLocked])
	}
	def.DisarmTerms(instore.CommitLocked)
	if n := def.Armed(); n != 2 {
		t.Fatalf("def.Armed() = %d after DisarmTerms, want 2 (the passes' terms stay)", n)
	}
	def.DisarmTermsAtPass(instore.CommitLocked, 1)
	def.DisarmTermsAtPass(instore.CommitLocked, 2)
	def.DisarmTermsAtPass(instore.CommitLocked, 2) // idempotent
}

// Every-pass terms count calls, whatever the commit and its pass.
func TestArmTermsCountsEveryPass(t *testing.T) {
	defer requireDisarmed(t)
	if err := def.ArmTerms(instore.CommitLocked, `2*off->1*return("crash")`); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmTerms(instore.CommitLocked)
	st := &scopeStore{scopes: 2}
	if err := st.commit(ctx0, "c1"); err != nil {
		t.Fatalf("c1's two passes are the first two calls: %v, want nil", err)
	}
	if err := st.commit(ctx0, "c2"); !errors.Is(err, instore.ErrCrashed) || def.Passes("c2")[instore.CommitLocked] != 1 {
		t.Fatalf("c2: %v, want a crash at its first pass, the third call", err)
	}
}

func TestPassRefused(t *testing.T) {
	defer requireDisarmed(t)
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Fatal("HoldAtPass at pass -1 did not panic")
			}
		}()
		def.HoldAtPass(instore.CommitLocked, -1, nil)
	}()
	if err := def.ArmTermsAtPass(instore.CommitLocked, -1, "return(true)"); err == nil || !strings.Contains(err.Error(), "pass -1") {
		t.Fatalf("ArmTermsAtPass at pass -1 = %v, want a refusal", err)
	}
	if err := def.ArmTermsAtPass("commit-nowhere", 1, "return(true)"); err == nil || !strings.Contains(err.Error(), "unknown in-store site") {
		t.Fatalf("ArmTermsAtPass at an unknown site = %v, want a refusal", err)
	}
}

func TestForgetPasses(t *testing.T) {
	defer requireDisarmed(t)
	rec := def.Record(nil)
	defer rec.Disarm()
	for range 2 {
		_ = instore.At(ctx0, instore.CommitLocked, "c1")
		_ = instore.At(ctx0, instore.CommitLocked, "c2")
	}
	def.ForgetPasses("c1")
	if len(def.Passes("c1")) != 0 || def.Passes("c2")[instore.CommitLocked] != 2 {
		t.Fatalf("after def.ForgetPasses(c1): c1 %v, c2 %v", def.Passes("c1"), def.Passes("c2"))
	}
	_ = instore.At(ctx0, instore.CommitLocked, "c1")
	if n := def.Passes("c1")[instore.CommitLocked]; n != 1 {
		t.Fatalf("c1's pass after ForgetPasses is %d, want 1", n)
	}
	// With nothing armed, the table is emptied: a later run starts at 1.
	rec.Disarm()
	if len(def.Passes("c2")) != 0 {
		t.Fatalf("c2's passes outlived the last arming: %v", def.Passes("c2"))
	}
	h := def.HoldAtPass(instore.CommitLocked, 1, is("c2"))
	defer h.Disarm()
	h.Release()
	_ = instore.At(ctx0, instore.CommitLocked, "c2")
	select {
	case <-h.Arrived():
	default:
		t.Fatal("a hold at pass 1 missed c2's first pass of a new run")
	}
}

func TestPassMemoryBound(t *testing.T) {
	defer requireDisarmed(t)
	rec := def.Record(is("none"))
	defer rec.Disarm()
	_ = instore.At(ctx0, instore.CommitLocked, "kept")
	// Kept while it passes again often enough...
	for i := range 3 * PassMemory {
		_ = instore.At(ctx0, instore.CommitLocked, hoststore.CommitID(fmt.Sprintf("o%d", i)))
		if i%(PassMemory/2) == 0 {
			_ = instore.At(ctx0, instore.CommitBeforePoint, "kept")
		}
		if i == PassMemory-2 {
			_ = instore.At(ctx0, instore.CommitLocked, "old")
		}
	}
	if got := def.Passes("kept"); got[instore.CommitLocked] != 1 || got[instore.CommitBeforePoint] != 6 {
		t.Fatalf("a commit that kept passing was forgotten: %v", got)
	}
	// ...forgotten once 2*PassMemory others came after its last pass.
	if got := def.Passes("old"); len(got) != 0 {
		t.Fatalf("a commit %d others ago is remembered: %v", 2*PassMemory, got)
	}
	// Within PassMemory others: remembered.
	if got := def.Passes(hoststore.CommitID(fmt.Sprintf("o%d", 2*PassMemory))); len(got) != 1 {
		t.Fatalf("a commit PassMemory others ago is forgotten")
	}
	d := def
	d.passes.Lock()
	size := len(d.passes.cur) + len(d.passes.old)
	d.passes.Unlock()
	if size > 2*PassMemory {
		t.Fatalf("the pass table holds %d commits, more than 2*PassMemory", size)
	}
}

// BenchmarkAtArmedNewCommits measures the armed path as an explorer sees
// it: every commit is new to the pass table (which keeps rotating), a
// recorder is armed for another commit, and a hold waits at pass 2 of
// another commit.
func BenchmarkAtArmedNewCommits(b *testing.B) {
	ids := make([]hoststore.CommitID, 1<<16)
	for i := range ids {
		ids[i] = hoststore.CommitID(fmt.Sprintf("c%d", i))
	}
	rec := def.Record(is("other"))
	defer rec.Disarm()
	h := def.HoldAtPass(instore.CommitLocked, 2, is("other"))
	defer h.Disarm()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		id := ids[i%len(ids)]
		i++
		for _, s := range instore.Sites {
			if err := instore.At(ctx0, s, id); err != nil {
				b.Fatal(err)
			}
		}
	}
}
