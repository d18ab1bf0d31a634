package chapter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reference"
)

func TestCallBoundRule(t *testing.T) {
	tm := NewTiming(0)
	if d, rule := tm.CallBound("Commit"); d != CallCap || !strings.Contains(rule, "no call yet") {
		t.Errorf("before any answer: %s (%s), want the cap %s", d, rule, CallCap)
	}
	for range 100 {
		tm.observe("LoadHead", time.Millisecond)
	}
	if d, rule := tm.CallBound("LoadHead"); d != CallFloor || !strings.Contains(rule, "100 LoadHead") {
		t.Errorf("a store answering in 1ms: %s (%s), want the floor %s", d, rule, CallFloor)
	}
	if d, rule := tm.CallBound("Commit"); d != CallFloor || !strings.Contains(rule, "every operation") {
		t.Errorf("an operation not seen yet: %s (%s), want the floor from every operation's latencies", d, rule)
	}
	for range 100 {
		tm.observe("Commit", 500*time.Millisecond)
	}
	d, _ := tm.CallBound("Commit")
	if d < CallFactor*500*time.Millisecond || d > CallFactor*600*time.Millisecond {
		t.Errorf("commits of 500ms: bound %s, want about %d × 500ms", d, CallFactor)
	}
	s, _ := tm.StallBound()
	if s < StallFactor*500*time.Millisecond || s > StallFactor*600*time.Millisecond {
		t.Errorf("commits of 500ms: stall bound %s, want about %d × 500ms", s, StallFactor)
	}
	for range 100 {
		tm.observe("ReadRows", time.Minute)
	}
	if d, _ := tm.CallBound("ReadRows"); d != CallCap {
		t.Errorf("reads of a minute: bound %s, want the cap %s", d, CallCap)
	}
	if d, rule := NewTiming(3 * time.Second).CallBound("Commit"); d != 3*time.Second || !strings.Contains(rule, "the run's call timeout") {
		t.Errorf("a fixed call timeout: %s (%s)", d, rule)
	}
	if s, _ := NewTiming(0).StallBound(); s != StallFloor {
		t.Errorf("no commit seen: stall bound %s, want the floor %s", s, StallFloor)
	}
}

func newTestEnv(t *testing.T, callTimeout time.Duration) *Env {
	t.Helper()
	e, err := newEnv(t.Context(), Config{
		NewRealm: func(context.Context) (hoststore.HostStoreFactory, error) { return reference.NewFactory(), nil },
		Settings: settings.Settings{Options: settings.Options{CallTimeout: callTimeout}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAwaitJudgesOnlyTheStoresTime checks that a call that never answers
// is a hang at its bound, and that a call held at an in-store failpoint
// longer than its bound is not: the harness's hold is not the store's
// time.
func TestAwaitJudgesOnlyTheStoresTime(t *testing.T) {
	e := newTestEnv(t, 0)
	bound := 300 * time.Millisecond
	never := make(chan struct{})
	a := e.await(t.Context(), bound, func(ctx context.Context) (any, error) { <-never; return nil, nil })
	if !a.hung || a.took < bound {
		t.Errorf("a call that never answers: %+v, want a hang after %s", a, bound)
	}

	h := e.Injector().HoldAt(instore.CommitLocked, nil)
	defer h.Disarm()
	res := make(chan awaited, 1)
	go func() {
		res <- e.await(t.Context(), bound, func(ctx context.Context) (any, error) {
			return nil, instore.At(ctx, instore.CommitLocked, "held")
		})
	}()
	<-h.Arrived()
	select {
	case a := <-res:
		t.Fatalf("the held call ended while held: %+v", a)
	case <-time.After(3 * bound): // the hold outlasts the bound
	}
	h.Release()
	a = <-res
	if a.hung || a.gone || a.err != nil || a.clean {
		t.Errorf("a call held %s at a failpoint, then answered: %+v, want an answer that the hold kept out of the latencies", 3*bound, a)
	}
}

// TestSpecClockCountsOnlyTheHarnessesTime checks that a spec's bound does
// not run while a store call is in flight, and ends the spec's context
// once the harness itself spent it.
func TestSpecClockCountsOnlyTheHarnessesTime(t *testing.T) {
	e := newTestEnv(t, 0)
	bound := 200 * time.Millisecond
	sctx, spent := e.specClock(t.Context(), bound)
	defer spent()
	slow := time.After(3 * bound)
	a := e.await(sctx, CallCap, func(ctx context.Context) (any, error) {
		select {
		case <-slow: // the store takes longer than the spec's bound
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	if a.gone || a.hung || a.err != nil {
		t.Fatalf("a store call of %s in a spec bounded at %s of the harness's time: %+v", 3*bound, bound, a)
	}
	<-sctx.Done() // the harness's own time now runs
	if !spent() || context.Cause(sctx) != errSpecBound {
		t.Errorf("the spec's context ended (%v) but the clock says its bound was not spent", context.Cause(sctx))
	}
}
