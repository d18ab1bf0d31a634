package faults

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/hook"
	"github.com/pingcap/failpoint"
)

// atAsync calls instore.At in a goroutine and returns its result on a channel.
func atAsync(ctx context.Context, site instore.Site, id hoststore.CommitID) <-chan error {
	out := make(chan error, 1)
	go func() { out <- instore.At(ctx, site, id) }()
	return out
}

// is matches one commit id.
func is(id hoststore.CommitID) func(hoststore.CommitID) bool {
	return func(c hoststore.CommitID) bool { return c == id }
}

// requireDisarmed fails the test unless nothing is armed in the default
// injector and internal/hook's slot is empty, as instore.At's fast path
// needs.
func requireDisarmed(t *testing.T) {
	t.Helper()
	requireInjectorDisarmed(t, def)
	if hook.Installed() {
		t.Fatal("internal/hook's slot holds an injector with nothing armed")
	}
	sites.Lock()
	defer sites.Unlock()
	for k, n := range sites.n {
		if n != 0 {
			t.Fatalf("site %s is enabled for %d injectors with nothing armed", instore.Sites[k], n)
		}
		if terms, err := failpoint.Status(failpath(instore.Sites[k])); err == nil {
			t.Fatalf("site %s's failpath is enabled (%q) with nothing armed", instore.Sites[k], terms)
		}
	}
}

// requireInjectorDisarmed fails the test unless nothing is armed in i.
func requireInjectorDisarmed(t *testing.T, i *Injector) {
	t.Helper()
	if n := i.armed.Load(); n != 0 {
		t.Fatalf("armed = %d after disarming everything, want 0", n)
	}
	i.reg.Lock()
	defer i.reg.Unlock()
	for _, s := range instore.Sites {
		if n := i.siteCountLocked(s); n != 0 {
			t.Fatalf("site %s still counts %d armed", s, n)
		}
	}
	i.passes.Lock()
	defer i.passes.Unlock()
	if n := len(i.passes.recorders); n != 0 {
		t.Fatalf("%d recorders still armed", n)
	}
	if i.passes.cur != nil || i.passes.old != nil {
		t.Fatalf("the pass table holds %d+%d commits with nothing armed", len(i.passes.cur), len(i.passes.old))
	}
}

func TestAtNothingArmed(t *testing.T) {
	requireDisarmed(t)
	for _, s := range instore.Sites {
		if err := instore.At(ctx0, s, "c1"); err != nil {
			t.Fatalf("At(%s) with nothing armed = %v, want nil", s, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = instore.At(ctx0, instore.CommitLocked, "c1") }); n != 0 {
		t.Fatalf("At with nothing armed allocates %v times, want 0", n)
	}
}

// The dispatcher is in internal/hook's slot from the first thing armed to
// the last thing disarmed, over holds and terms alike.
func TestArmingFillsTheHookSlot(t *testing.T) {
	requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, is("c1"))
	if !hook.Installed() {
		t.Fatal("a hold is armed and the slot is empty")
	}
	if err := def.ArmTerms(instore.CommitAfterPoint, "return(true)"); err != nil {
		t.Fatal(err)
	}
	h.Disarm()
	if !hook.Installed() {
		t.Fatal("terms are still armed and the slot is empty")
	}
	if err := instore.At(ctx0, instore.CommitAfterPoint, "c2"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("At under return(true) = %v, want instore.ErrCrashed", err)
	}
	def.DisarmTerms(instore.CommitAfterPoint)
	requireDisarmed(t)
}

func TestHoldCatchesFirstMatchingCommitOnly(t *testing.T) {
	h := def.HoldAt(instore.CommitLocked, func(c hoststore.CommitID) bool { return strings.HasPrefix(string(c), "a") })
	defer requireDisarmed(t)
	defer h.Disarm()

	if err := instore.At(ctx0, instore.CommitLocked, "b1"); err != nil {
		t.Fatalf("At(b1), not matched: %v, want nil", err)
	}
	if err := instore.At(ctx0, instore.CommitBeforePoint, "a0"); err != nil {
		t.Fatalf("At(a0) at another site: %v, want nil", err)
	}
	select {
	case <-h.Arrived():
		t.Fatal("Arrived closed before a matching commit reached the site")
	default:
	}
	held := atAsync(ctx0, instore.CommitLocked, "a1")
	<-h.Arrived()
	// A second matching commit passes: the hold catches one.
	if err := instore.At(ctx0, instore.CommitLocked, "a2"); err != nil {
		t.Fatalf("At(a2) while a1 is held: %v, want nil", err)
	}
	h.Release()
	if err := <-held; err != nil {
		t.Fatalf("released commit a1: %v, want nil", err)
	}
}

func TestHoldCrash(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitBeforePoint, is("c1"))
	defer h.Disarm()
	held := atAsync(ctx0, instore.CommitBeforePoint, "c1")
	<-h.Arrived()
	h.Crash()
	h.Release() // the first decision wins
	err := <-held
	if !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("crashed commit answered %v, want an error wrapping instore.ErrCrashed", err)
	}
	if !strings.Contains(err.Error(), "c1") || !strings.Contains(err.Error(), string(instore.CommitBeforePoint)) {
		t.Fatalf("crash error %q names neither the commit nor the site", err)
	}
}

func TestHoldReleasedBeforeArrivalPasses(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitAfterPoint, nil)
	defer h.Disarm()
	h.Release()
	// Called on this goroutine: it would block forever if it waited.
	if err := instore.At(ctx0, instore.CommitAfterPoint, "c1"); err != nil {
		t.Fatalf("At after an early release: %v, want nil", err)
	}
	select {
	case <-h.Arrived():
	default:
		t.Fatal("the commit passed without taking the hold")
	}
}

func TestHoldCrashedBeforeArrivalCrashes(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, nil)
	defer h.Disarm()
	h.Crash()
	if err := instore.At(ctx0, instore.CommitLocked, "c1"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("At after an early crash: %v, want instore.ErrCrashed", err)
	}
}

func TestDisarmReleasesHeldCommit(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, nil)
	held := atAsync(ctx0, instore.CommitLocked, "c1")
	<-h.Arrived()
	h.Disarm()
	h.Disarm() // idempotent
	if err := <-held; err != nil {
		t.Fatalf("commit released by Disarm: %v, want nil", err)
	}
	if err := instore.At(ctx0, instore.CommitLocked, "c2"); err != nil {
		t.Fatalf("At after Disarm: %v, want nil", err)
	}
}

func TestTwoHoldsReleasedIndependently(t *testing.T) {
	defer requireDisarmed(t)
	h1 := def.HoldAt(instore.CommitLocked, is("c1"))
	h2 := def.HoldAt(instore.CommitLocked, is("c2"))
	defer h1.Disarm()
	defer h2.Disarm()
	r1 := atAsync(ctx0, instore.CommitLocked, "c1")
	r2 := atAsync(ctx0, instore.CommitLocked, "c2")
	<-h1.Arrived()
	<-h2.Arrived()
	h1.Release()
	if err := <-r1; err != nil {
		t.Fatalf("c1 released: %v, want nil", err)
	}
	// Had Release let c2 go too (as pingcap's pause does for every caller),
	// c2 would have passed with nil; crashing it proves it was still held.
	h2.Crash()
	if err := <-r2; !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("c2 crashed after c1's release: %v, want instore.ErrCrashed", err)
	}
}

func TestHeldCommitHonoursContext(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, nil)
	defer h.Disarm()
	ctx, cancel := context.WithCancel(ctx0)
	held := atAsync(ctx, instore.CommitLocked, "c1")
	<-h.Arrived()
	cancel()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Fatalf("held commit whose ctx ended: %v, want context.Canceled", err)
	}
	if k := hoststore.KindOf(<-atAsync(ctx, instore.CommitBeforePoint, "c2")); k != hoststore.ErrKindNone {
		t.Fatalf("At at an unarmed site with an ended ctx: kind %q, want none", k)
	}
}

func TestArmingWhileHeldDoesNotDeadlock(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, is("c1"))
	held := atAsync(ctx0, instore.CommitLocked, "c1")
	<-h.Arrived()
	// Other sites, and the held commit's own site, arm and disarm freely
	// while the commit waits (pingcap's registry would deadlock on an
	// Enable while a caller is paused).
	for _, s := range instore.Sites {
		o := def.HoldAt(s, is("other"))
		if err := def.ArmTerms(s, "sleep(0)"); err != nil {
			t.Fatal(err)
		}
		if err := def.ArmTerms(s, `1*return("crash")`); err != nil {
			t.Fatal(err)
		}
		def.DisarmTerms(s)
		o.Disarm()
	}
	if err := instore.At(ctx0, instore.CommitAfterPoint, "c2"); err != nil {
		t.Fatalf("another commit while c1 is held: %v, want nil", err)
	}
	h.Disarm()
	if err := <-held; err != nil {
		t.Fatalf("held commit after the arming: %v, want nil", err)
	}
}

func TestArmTermsCountedCrash(t *testing.T) {
	defer requireDisarmed(t)
	if err := def.ArmTerms(instore.CommitBeforePoint, `1*return("crash")`); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmTerms(instore.CommitBeforePoint)
	err := instore.At(ctx0, instore.CommitBeforePoint, "c1")
	if !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("first call under 1*return(\"crash\"): %v, want instore.ErrCrashed", err)
	}
	for _, id := range []hoststore.CommitID{"c2", "c3"} {
		if err := instore.At(ctx0, instore.CommitBeforePoint, id); err != nil {
			t.Fatalf("call %s after the count was spent: %v, want nil", id, err)
		}
	}
	// Re-arming starts a fresh count.
	if err := def.ArmTerms(instore.CommitBeforePoint, `1*return("crash")`); err != nil {
		t.Fatal(err)
	}
	if err := instore.At(ctx0, instore.CommitBeforePoint, "c4"); !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("first call after re-arming: %v, want instore.ErrCrashed", err)
	}
}

func TestArmTermsEffects(t *testing.T) {
	cases := []struct {
		terms string
		crash []bool // per call
	}{
		{"return(true)", []bool{true, true}},
		{"return(false)", []bool{false}},
		{"sleep(1)", []bool{false, false}},
		{`sleep("1ms")`, []bool{false}},
		{"off", []bool{false}},
		{`2*off->1*return("crash")->return(false)`, []bool{false, false, true, false, false}},
	}
	for _, c := range cases {
		t.Run(c.terms, func(t *testing.T) {
			defer requireDisarmed(t)
			if err := def.ArmTerms(instore.CommitAfterPoint, c.terms); err != nil {
				t.Fatal(err)
			}
			defer def.DisarmTerms(instore.CommitAfterPoint)
			for i, want := range c.crash {
				err := instore.At(ctx0, instore.CommitAfterPoint, "c1")
				if got := errors.Is(err, instore.ErrCrashed); got != want || (!want && err != nil) {
					t.Fatalf("call %d under %s: %v, want crash=%v", i, c.terms, err, want)
				}
			}
		})
	}
}

func TestTermSleepHonoursContext(t *testing.T) {
	defer requireDisarmed(t)
	if err := def.ArmTerms(instore.CommitLocked, `sleep("1h")`); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmTerms(instore.CommitLocked)
	ctx, cancel := context.WithCancel(ctx0)
	cancel()
	if err := instore.At(ctx, instore.CommitLocked, "c1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleeping commit whose ctx ended: %v, want context.Canceled", err)
	}
}

func TestHoldThenTermsAtOneSite(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, nil)
	defer h.Disarm()
	if err := def.ArmTerms(instore.CommitLocked, "return(true)"); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmTerms(instore.CommitLocked)
	held := atAsync(ctx0, instore.CommitLocked, "c1")
	<-h.Arrived()
	h.Release()
	if err := <-held; !errors.Is(err, instore.ErrCrashed) {
		t.Fatalf("released commit at a site with crash terms: %v, want instore.ErrCrashed", err)
	}
}

func TestTermsRefused(t *testing.T) {
	cases := []struct{ terms, want string }{
		{"", "empty"},
		{"retrun(true)", "unknown action"},
		{"return(true", `want ")"`},
		{"return(true)x", `want "->"`},
		{"return(true)->", "unknown action"},
		{`return("a\"b")`, "escapes"},
		{"return()", "empty value"},
		{"return(yes)", "quoted string, true, false or digits"},
		{"50%return(true)", "N%"},
		{"12.5%return(true)", "N%"},
		{"1.5*return(true)", "whole number"},
		{"1return(true)", "whole number"},
		{"pause", "HoldAt"},
		{"1*pause", "HoldAt"},
		{"panic", "panic"},
		{"break", "debugger"},
		{`print("x")`, "standard output"},
		{"sleep", "sleep needs"},
		{`sleep("soon")`, "sleep"},
		{`sleep("-1s")`, "negative"},
		{"off(1)", "no value"},
	}
	for _, c := range cases {
		err := ValidateTerms(c.terms)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateTerms(%q) = %v, want an error containing %q", c.terms, err, c.want)
			continue
		}
		if err := def.ArmTerms(instore.CommitLocked, c.terms); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("def.ArmTerms(%q) = %v, want an error containing %q", c.terms, err, c.want)
		}
	}
	// Valid terms with return values an in-store site does not take.
	for _, terms := range []string{`return("kill")`, "return(1)", "return", `1*off->return("unavailable")`} {
		if err := ValidateTerms(terms); err != nil {
			t.Errorf("ValidateTerms(%q) = %v, want nil", terms, err)
		}
		if err := def.ArmTerms(instore.CommitLocked, terms); err == nil || !strings.Contains(err.Error(), `"crash", true`) {
			t.Errorf("def.ArmTerms(%q) = %v, want a refusal naming the values taken", terms, err)
		}
	}
	if err := def.ArmTerms("commit-nowhere", "return(true)"); err == nil || !strings.Contains(err.Error(), "unknown in-store site") {
		t.Errorf("ArmTerms at an unknown site = %v, want a refusal", err)
	}
	requireDisarmed(t)
}

func TestHoldAtUnknownSitePanics(t *testing.T) {
	defer func() {
		if p := recover(); p == nil {
			t.Fatal("HoldAt at an unknown site did not panic")
		}
		requireDisarmed(t)
	}()
	def.HoldAt("commit-nowhere", nil)
}

func TestAtUnknownSiteWhileArmed(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, nil)
	defer h.Disarm()
	if err := instore.At(ctx0, "commit-nowhere", "c1"); err != nil {
		t.Fatalf("At at an unknown site: %v, want nil", err)
	}
}

func TestDisarmTermsIdempotent(t *testing.T) {
	def.DisarmTerms(instore.CommitLocked)
	if err := def.ArmTerms(instore.CommitLocked, "return(true)"); err != nil {
		t.Fatal(err)
	}
	def.DisarmTerms(instore.CommitLocked)
	def.DisarmTerms(instore.CommitLocked)
	requireDisarmed(t)
	if err := instore.At(ctx0, instore.CommitLocked, "c1"); err != nil {
		t.Fatalf("At after DisarmTerms: %v, want nil", err)
	}
}

func BenchmarkAtArmedOtherCommit(b *testing.B) {
	ctx := ctx0
	h := def.HoldAt(instore.CommitLocked, is("other"))
	held := atAsync(ctx, instore.CommitLocked, "other")
	<-h.Arrived()
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range instore.Sites {
			if err := instore.At(ctx, s, "c1"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	h.Disarm()
	if err := <-held; err != nil {
		b.Fatal(err)
	}
}

func TestPanickingMatcherLeavesRegistryUsable(t *testing.T) {
	defer requireDisarmed(t)
	h := def.HoldAt(instore.CommitLocked, func(hoststore.CommitID) bool { panic("matcher broke") })
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Fatal("the matcher's panic did not reach the caller")
			}
		}()
		_ = instore.At(ctx0, instore.CommitLocked, "c1")
	}()
	h.Disarm() // would deadlock if the registry had stayed locked
}
