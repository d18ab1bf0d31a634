package faults

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// allOps runs each of the six requests once and returns their errors.
func allOps(t *testing.T, s *Store) map[Op]error {
	t.Helper()
	out := map[Op]error{}
	_, out[OpAcquire] = s.AcquireFence(ctx0, hoststore.Exclusive)
	out[OpRenew] = s.RenewFence(ctx0, 7)
	_, out[OpLoad] = s.LoadHead(ctx0, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"})
	_, out[OpList] = s.ListHeads(ctx0, hoststore.KindSession, nil, 10)
	_, out[OpRead] = s.ReadRows(ctx0, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"}, 0, 10)
	out[OpCommit] = s.Commit(ctx0, batch(t, "c-all"))
	return out
}

func TestWrapForwards(t *testing.T) {
	f := &fakeStore{}
	s := def.Wrap(f)
	if s.Inner() != f {
		t.Fatal("Inner is not the wrapped store")
	}
	g, err := s.AcquireFence(ctx0, hoststore.Exclusive)
	if err != nil || g.Token != 7 {
		t.Fatalf("AcquireFence = %v, %v; want token 7", g, err)
	}
	var fo *hoststore.FencedOutError
	if err := s.RenewFence(ctx0, 3); !errors.As(err, &fo) {
		t.Fatalf("RenewFence(3) = %v, want the store's FencedOut", err)
	}
	h, err := s.LoadHead(ctx0, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "x"})
	if err != nil || string(h.Head) != "x" {
		t.Fatalf("LoadHead = %v, %v", h, err)
	}
	if s.FenceTiming() != hoststore.DefaultFenceTiming() {
		t.Fatal("FenceTiming is not the inner store's")
	}
	for op, err := range allOps(t, s) {
		if err != nil {
			t.Errorf("%s through an empty wrapper: %v", op, err)
		}
	}
	calls, landed, kills := f.snapshot()
	if len(calls) != 9 || !slices.Equal(landed, []hoststore.CommitID{"c-all"}) || kills != 0 {
		t.Fatalf("inner saw calls %v, landed %v, kills %d", calls, landed, kills)
	}
	if err := s.Close(); err != nil || f.closes != 1 {
		t.Fatalf("Close = %v, inner closes %d; want nil, 1", err, f.closes)
	}
}

func TestKillBeforeSend(t *testing.T) {
	f := &fakeStore{}
	s := def.Wrap(f)
	in := s.Inject(Rule{Op: OpCommit, Phase: BeforeSend, Effect: EffectKill})
	if err := s.Commit(ctx0, batch(t, "c1")); !errors.Is(err, ErrKilled) {
		t.Fatalf("killed commit answered %v, want ErrKilled", err)
	}
	if !fired(in) || !s.Killed() {
		t.Fatalf("fired %v, killed %v; want both", fired(in), s.Killed())
	}
	for op, err := range allOps(t, s) {
		if !errors.Is(err, ErrKilled) {
			t.Errorf("%s on a killed wrapper: %v, want ErrKilled", op, err)
		}
	}
	calls, landed, kills := f.snapshot()
	if len(calls) != 0 || len(landed) != 0 || kills != 1 {
		t.Fatalf("inner saw calls %v, landed %v, kills %d; want none, none, 1", calls, landed, kills)
	}
	s.Kill()
	if _, _, kills := f.snapshot(); kills != 1 {
		t.Fatalf("a second Kill killed the inner store again (%d kills)", kills)
	}
}

func TestUnavailableBeforeSendCounts(t *testing.T) {
	f := &fakeStore{}
	s := def.Wrap(f)
	s.Inject(Rule{Op: OpLoad, Effect: EffectUnavailable, Times: 2})
	scope := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"}
	for i := range 2 {
		if _, err := s.LoadHead(ctx0, scope); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
			t.Fatalf("load %d: %v, want Unavailable", i, err)
		}
	}
	if _, err := s.LoadHead(ctx0, scope); err != nil {
		t.Fatalf("load after Times ran out: %v, want nil", err)
	}
	if _, err := s.ListHeads(ctx0, hoststore.KindSession, nil, 1); err != nil {
		t.Fatalf("list, another op: %v, want nil", err)
	}
	if calls, _, _ := f.snapshot(); !slices.Equal(calls, []Op{OpLoad, OpList}) || s.Killed() {
		t.Fatalf("inner saw %v, killed %v; want [load list], alive", calls, s.Killed())
	}
}

func TestEveryOpCanBeRefused(t *testing.T) {
	for _, op := range Ops {
		f := &fakeStore{}
		s := def.Wrap(f)
		s.Inject(Rule{Op: op, Effect: EffectUnavailable})
		for got, err := range allOps(t, s) {
			if want := got == op; want != (hoststore.KindOf(err) == hoststore.ErrKindUnavailable) {
				t.Errorf("rule on %s: %s answered %v", op, got, err)
			}
		}
		if calls, _, _ := f.snapshot(); slices.Contains(calls, op) || len(calls) != 5 {
			t.Errorf("rule on %s: inner saw %v", op, calls)
		}
	}
}

func TestKillInFlight(t *testing.T) {
	f := &fakeStore{gate: make(chan struct{})}
	s := def.Wrap(f)
	s.Inject(Rule{Op: OpCommit, Phase: InFlight})
	ctx, cancel := context.WithCancel(ctx0)
	// The fake blocks on its gate: the wrapper returns without waiting.
	if err := s.Commit(ctx, batch(t, "c1")); !errors.Is(err, ErrKilled) {
		t.Fatalf("commit killed in flight: %v, want ErrKilled", err)
	}
	if _, _, kills := f.snapshot(); kills != 1 || !s.Killed() {
		t.Fatalf("inner kills %d, killed %v; want 1, true", kills, s.Killed())
	}
	cancel() // the caller's ctx ends; the request on the wire goes on
	close(f.gate)
	if err := s.WaitAbandoned(ctx0); err != nil {
		t.Fatalf("WaitAbandoned = %v", err)
	}
	_, landed, _ := f.snapshot()
	if !slices.Equal(landed, []hoststore.CommitID{"c1"}) || f.ctxErrs[0] != nil {
		t.Fatalf("abandoned commit landed %v with ctx err %v; want [c1], nil", landed, f.ctxErrs[0])
	}
}

func TestAbandonedPanicIsKept(t *testing.T) {
	f := &fakeStore{panics: true}
	s := def.Wrap(f)
	s.Inject(Rule{Op: OpCommit, Phase: InFlight})
	if err := s.Commit(ctx0, batch(t, "c1")); !errors.Is(err, ErrKilled) {
		t.Fatalf("commit killed in flight: %v, want ErrKilled", err)
	}
	err := s.WaitAbandoned(ctx0)
	if err == nil || !strings.Contains(err.Error(), "fake store broke") {
		t.Fatalf("WaitAbandoned = %v, want the abandoned commit's panic", err)
	}
}

func TestWaitAbandonedHonoursContext(t *testing.T) {
	f := &fakeStore{gate: make(chan struct{})}
	s := def.Wrap(f)
	s.Inject(Rule{Op: OpLoad, Phase: InFlight})
	if _, err := s.LoadHead(ctx0, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"}); !errors.Is(err, ErrKilled) {
		t.Fatalf("load killed in flight: %v", err)
	}
	ctx, cancel := context.WithCancel(ctx0)
	cancel()
	if err := s.WaitAbandoned(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitAbandoned with an ended ctx = %v, want context.Canceled", err)
	}
	close(f.gate)
	if err := s.WaitAbandoned(ctx0); err != nil {
		t.Fatalf("WaitAbandoned = %v", err)
	}
}

func TestKillAfterAnswer(t *testing.T) {
	f := &fakeStore{}
	s := def.Wrap(f)
	s.Inject(Rule{Op: OpCommit, Phase: AfterAnswer, Effect: EffectKill})
	if err := s.Commit(ctx0, batch(t, "c1")); !errors.Is(err, ErrKilled) {
		t.Fatalf("commit killed after answer: %v, want ErrKilled", err)
	}
	_, landed, kills := f.snapshot()
	if !slices.Equal(landed, []hoststore.CommitID{"c1"}) || kills != 1 || !s.Killed() {
		t.Fatalf("landed %v, kills %d, killed %v; want [c1], 1, true", landed, kills, s.Killed())
	}
}

func TestIndeterminate(t *testing.T) {
	f := &fakeStore{}
	s := def.Wrap(f)
	s.Inject(Rule{Op: OpCommit, Phase: AfterAnswer, Effect: EffectIndeterminate, Match: func(b *hoststore.CommitBatch) bool { return b.CommitID() == "c2" }})
	s.Inject(Rule{Op: OpCommit, Phase: BeforeSend, Effect: EffectIndeterminate, Match: func(b *hoststore.CommitBatch) bool { return b.CommitID() == "c3" }})
	for _, c := range []struct {
		id   hoststore.CommitID
		kind hoststore.ErrorKind
	}{{"c1", hoststore.ErrKindNone}, {"c2", hoststore.ErrKindIndeterminate}, {"c3", hoststore.ErrKindIndeterminate}, {"c2", hoststore.ErrKindNone}} {
		if err := s.Commit(ctx0, batch(t, c.id)); hoststore.KindOf(err) != c.kind {
			t.Fatalf("commit %s: %v, want kind %q", c.id, err, c.kind)
		}
	}
	// c2's first answer was lost after it landed; c3 was never sent.
	_, landed, kills := f.snapshot()
	if !slices.Equal(landed, []hoststore.CommitID{"c1", "c2", "c2"}) || kills != 0 || s.Killed() {
		t.Fatalf("landed %v, kills %d, killed %v", landed, kills, s.Killed())
	}
}

func TestMatchFiredAndRemove(t *testing.T) {
	f := &fakeStore{}
	s := def.Wrap(f)
	in := s.Inject(Rule{Op: OpCommit, Effect: EffectUnavailable, Times: -1, Match: func(b *hoststore.CommitBatch) bool { return strings.HasPrefix(string(b.CommitID()), "x") }})
	if err := s.Commit(ctx0, batch(t, "a1")); err != nil || fired(in) {
		t.Fatalf("unmatched commit: %v, fired %v; want nil, false", err, fired(in))
	}
	for _, id := range []hoststore.CommitID{"x1", "x2", "x3"} {
		if err := s.Commit(ctx0, batch(t, id)); hoststore.KindOf(err) != hoststore.ErrKindUnavailable {
			t.Fatalf("matched commit %s under Times -1: %v, want Unavailable", id, err)
		}
	}
	if !fired(in) {
		t.Fatal("Fired not closed after the injection fired")
	}
	in.Remove()
	in.Remove()
	if err := s.Commit(ctx0, batch(t, "x4")); err != nil {
		t.Fatalf("commit after Remove: %v, want nil", err)
	}
	if _, landed, _ := f.snapshot(); !slices.Equal(landed, []hoststore.CommitID{"a1", "x4"}) {
		t.Fatalf("landed %v, want [a1 x4]", landed)
	}
}

func TestKilledWhileInStore(t *testing.T) {
	f := &fakeStore{gate: make(chan struct{}), entered: make(chan Op, 1)}
	s := def.Wrap(f)
	out := make(chan error, 1)
	go func() { out <- s.Commit(ctx0, batch(t, "c1")) }()
	<-f.entered
	s.Kill()
	close(f.gate)
	if err := <-out; !errors.Is(err, ErrKilled) {
		t.Fatalf("commit in the store when the process was killed: %v, want ErrKilled", err)
	}
}

func TestInjectRefusesImpossibleRules(t *testing.T) {
	match := func(*hoststore.CommitBatch) bool { return true }
	for _, c := range []struct {
		rule Rule
		want string
	}{
		{Rule{Op: "drop"}, "unknown op"},
		{Rule{Op: OpLoad, Phase: 7}, "unknown phase"},
		{Rule{Op: OpLoad, Effect: 9}, "unknown effect"},
		{Rule{Op: OpLoad, Match: match}, "commits only"},
		{Rule{Op: OpCommit, Phase: InFlight, Effect: EffectUnavailable}, "in flight"},
		{Rule{Op: OpCommit, Phase: AfterAnswer, Effect: EffectUnavailable}, "before-send only"},
		{Rule{Op: OpRenew, Phase: AfterAnswer, Effect: EffectIndeterminate}, "commit's answer"},
	} {
		func() {
			defer func() {
				p := recover()
				if s, _ := p.(string); !strings.Contains(s, c.want) {
					t.Errorf("Inject(%+v) panicked with %v, want %q", c.rule, p, c.want)
				}
			}()
			def.Wrap(&fakeStore{}).Inject(c.rule)
		}()
	}
}

func TestWrapTerms(t *testing.T) {
	defer func() {
		if n := def.Armed(); n != 0 {
			t.Fatalf("def.Armed() = %d after disarming, want 0", n)
		}
	}()
	f := &fakeStore{}
	s := def.Wrap(f)
	if err := def.ArmWrapTerms(WrapCommitBeforeSend, `1*return("unavailable")->1*return("indeterminate")`); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmWrapTerms(WrapCommitBeforeSend)
	for _, want := range []hoststore.ErrorKind{hoststore.ErrKindUnavailable, hoststore.ErrKindIndeterminate, hoststore.ErrKindNone} {
		if err := s.Commit(ctx0, batch(t, "c1")); hoststore.KindOf(err) != want {
			t.Fatalf("commit under before-send terms: %v, want kind %q", err, want)
		}
	}
	if _, err := s.LoadHead(ctx0, hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"}); err != nil {
		t.Fatalf("load is not a commit: %v", err)
	}
	if err := def.ArmWrapTerms(WrapCommitAfterAnswer, `1*return("kill")`); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmWrapTerms(WrapCommitAfterAnswer)
	if err := s.Commit(ctx0, batch(t, "c2")); !errors.Is(err, ErrKilled) || !s.Killed() {
		t.Fatalf("commit under after-answer kill: %v, killed %v", err, s.Killed())
	}
	if _, landed, _ := f.snapshot(); !slices.Equal(landed, []hoststore.CommitID{"c1", "c2"}) {
		t.Fatalf("landed %v, want [c1 c2]", landed)
	}
}

func TestWrapTermsSleepHonoursContext(t *testing.T) {
	if err := def.ArmWrapTerms(WrapCommitBeforeSend, `sleep("1h")`); err != nil {
		t.Fatal(err)
	}
	defer def.DisarmWrapTerms(WrapCommitBeforeSend)
	f := &fakeStore{}
	ctx, cancel := context.WithCancel(ctx0)
	cancel()
	if err := def.Wrap(f).Commit(ctx, batch(t, "c1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("delayed commit whose ctx ended: %v, want context.Canceled", err)
	}
	if calls, _, _ := f.snapshot(); len(calls) != 0 {
		t.Fatalf("inner saw %v, want nothing sent", calls)
	}
}

func TestWrapTermsRefused(t *testing.T) {
	for _, c := range []struct {
		site        WrapSite
		terms, want string
	}{
		{WrapCommitBeforeSend, `return("crash")`, `"kill", "unavailable" or "indeterminate"`},
		{WrapCommitAfterAnswer, `return("unavailable")`, `"kill" or "indeterminate"`},
		{WrapCommitAfterAnswer, "return(true)", `"kill" or "indeterminate"`},
		{WrapCommitBeforeSend, `50%return("kill")`, "N%"},
		{"wrap/elsewhere", `return("kill")`, "unknown wrapper site"},
	} {
		if err := def.ArmWrapTerms(c.site, c.terms); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("def.ArmWrapTerms(%s, %s) = %v, want an error containing %q", c.site, c.terms, err, c.want)
		}
	}
	def.DisarmWrapTerms(WrapCommitBeforeSend)
	if n := def.Armed(); n != 0 {
		t.Fatalf("def.Armed() = %d after refusals, want 0", n)
	}
}

// nopCommits returns nil to every commit; its other methods are not called.
type nopCommits struct{ hoststore.HostStore }

func (nopCommits) Commit(context.Context, *hoststore.CommitBatch) error { return nil }

func BenchmarkWrapCommitNothingInjected(b *testing.B) {
	s := def.Wrap(nopCommits{})
	bt := batch(b, "c1")
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Commit(ctx0, bt); err != nil {
			b.Fatal(err)
		}
	}
}
