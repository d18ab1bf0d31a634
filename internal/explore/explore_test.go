package explore

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/obligation"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

type hostFactory = hoststore.HostStoreFactory

func referenceRealm() (hoststore.HostStoreFactory, error) { return reference.NewFactory(), nil }

func canaryRealm(bugs canary.Bugs) func() (hoststore.HostStoreFactory, error) {
	return func() (hoststore.HostStoreFactory, error) { return canary.NewFactory(bugs), nil }
}

func reportFailed(t *testing.T, res Result) {
	t.Helper()
	for _, f := range res.Failed {
		t.Errorf("history %d (seed %d): %v\n%s", f.Index, f.Seed, f.Findings, f.History.Text())
		return
	}
}

func TestReferencePasses(t *testing.T) {
	n := 5000
	if testing.Short() || raceEnabled {
		n = 400
	}
	res, err := Run(context.Background(), referenceRealm, Config{Seed: 1, Histories: n, MaxOps: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d histories, %d operations, %d undecided", res.Histories, res.Ops, res.Undecided)
	reportFailed(t, res)
	if res.Histories != n || res.Ops < n*3 {
		t.Fatalf("ran %d histories and %d operations, want %d histories", res.Histories, res.Ops, n)
	}
}

func TestCorrectCanaryPasses(t *testing.T) {
	res, err := Run(context.Background(), canaryRealm(0), Config{Seed: 2, Histories: 300})
	if err != nil {
		t.Fatal(err)
	}
	reportFailed(t, res)
}

// TestCanariesFoundByExploration runs exploration alone against broken
// stores: each must be found within the chapter's default budget of 300
// histories (chapter/explore.DefaultHistories, which imports this
// package). The obligation the
// diagnosis names is logged with the number of histories it took; the
// diagnosis is a heuristic and depends on the interleaving, so only
// finding the breach is asserted here (the synthetic-history tests pin
// the diagnosis).
func TestCanariesFoundByExploration(t *testing.T) {
	for _, c := range []struct {
		bug canary.Bugs
		ob  reports.ObligationID
	}{
		{canary.TornBatch, obligation.ObAllOrNothing},
		{canary.LostOnKill, obligation.ObDurable},
		{canary.IgnoreToken, obligation.ObFencing},
		{canary.ReversedAppend, obligation.ObOrder},
		{canary.RetryTwice, obligation.ObRetry},
		{canary.LastWriterWins, obligation.ObVersionChain},
		{canary.ApplyAsChecked, obligation.ObAllOrNothing},
		{canary.LateTruncate, obligation.ObRemoval},
		{canary.DropRenumbers, obligation.ObRemoval},
		{canary.ReadBelowStartOK, obligation.ObOperations},
		{canary.SkipLastListed, obligation.ObListing},
		{canary.ListedAfterDelete, obligation.ObListing},
		{canary.RenewNeverFenced, obligation.ObFenceLease},
		{canary.ExclusiveIgnoresHolder, obligation.ObFenceLease},
		{canary.NoRenewAfterLapse, obligation.ObFenceLease},
		{canary.ReadIgnoresLimit, obligation.ObOperations},
		{canary.CreateOverExisting, obligation.ObVersionChain},
		{canary.NextAfterFullPage, obligation.ObListing},
		{canary.DirtyRead, obligation.ObFencing},
		{canary.SiteTwicePublish, obligation.ObAllOrNothing},
		{canary.UnknownError, obligation.ObErrors},
		{canary.UTF16Order, obligation.ObListing},
		{canary.PadSpace, obligation.ObDurable},
	} {
		t.Run(c.bug.String(), func(t *testing.T) {
			// dirty-read and site-twice-publish show only to a load inside
			// a commit's window: the peeks of held commits aim there.
			res, err := Run(context.Background(), canaryRealm(c.bug), Config{Seed: 3, Histories: 300, StopAtFirst: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failed) == 0 {
				t.Fatalf("not found in %d histories (%d operations)", res.Histories, res.Ops)
			}
			f := res.Failed[0].Findings[0]
			t.Logf("found after %d histories (%d operations); the canary breaks %s, the diagnosis names %s: %v", res.Histories, res.Ops, c.ob, f.Obligation, f)
		})
	}
}

// TestHangEndsTheHistory plays histories against a store whose eighth
// commit never answers: with a per-call bound, the history ends at the
// hang, names the commit, and the check's headline is the hang under
// ob:errors. The bound is generous (1 s) against a store whose other
// calls take microseconds.
func TestHangEndsTheHistory(t *testing.T) {
	bound := func(Op) time.Duration { return time.Second }
	for i := range 50 {
		h, err := Play(context.Background(), canary.NewFactory(canary.HangsCommit), HistorySeed(5, i), Config{CallBound: bound})
		if err != nil {
			t.Fatal(err)
		}
		if h.Hang == nil {
			continue
		}
		e := h.Events[h.Hang.Event]
		if e.Op != OpCommit || e.Returned() || h.Hang.Bound != time.Second {
			t.Fatalf("the hang names %s (returned %v, bound %s), want the commit that never returned", e.String(), e.Returned(), h.Hang.Bound)
		}
		v := Check(h, CheckConfig{})
		if len(v.Findings) == 0 || v.Findings[0].Obligation != obligation.ObErrors || !strings.Contains(v.Findings[0].Message, "hang in Commit") || v.Findings[0].Event != h.Hang.Event {
			t.Fatalf("the headline is %v, want the hang in Commit under ob:errors", v.Findings)
		}
		return
	}
	t.Fatal("no history of 50 reached the eighth commit")
}

// panicky is a reference realm whose fifth commit panics, as a store with
// a nil dereference in its commit path would.
type panicky struct {
	hoststore.HostStoreFactory
	commits atomic.Int32
}

func (f *panicky) Open(ctx context.Context) (hoststore.HostStore, error) {
	s, err := f.HostStoreFactory.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &panickyStore{HostStore: s, f: f}, nil
}

type panickyStore struct {
	hoststore.HostStore
	f *panicky
}

func (s *panickyStore) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	if s.f.commits.Add(1) == 5 {
		var m map[string]int
		m["boom"]++ // a nil map write: the store's bug
	}
	return s.HostStore.Commit(ctx, b)
}

// Kill passes the harness's kill on, so that kills still reach the store.
func (s *panickyStore) Kill() {
	if k, ok := s.HostStore.(hoststore.Killer); ok {
		k.Kill()
	}
}

// TestPanicEndsTheHistory: a store that panics in a call does not take
// the harness down; the call records the panic, the history ends, and the
// check's headline is the panic under ob:errors at that call.
func TestPanicEndsTheHistory(t *testing.T) {
	for i := range 50 {
		h, err := Play(context.Background(), &panicky{HostStoreFactory: reference.NewFactory()}, HistorySeed(6, i), Config{})
		if err != nil {
			t.Fatal(err)
		}
		if !h.Panicked() {
			continue
		}
		v := Check(h, CheckConfig{})
		if len(v.Findings) == 0 || v.Findings[0].Obligation != obligation.ObErrors || !strings.Contains(v.Findings[0].Message, "panic in Commit: assignment to entry in nil map") {
			t.Fatalf("the headline is %v, want the panic in Commit under ob:errors", v.Findings)
		}
		if e := h.Events[v.Findings[0].Event]; e.Op != OpCommit || e.Panic == "" || e.Returned() {
			t.Fatalf("the finding names %s, want the commit that panicked", e.String())
		}
		return
	}
	t.Fatal("no history of 50 reached the fifth commit")
}
