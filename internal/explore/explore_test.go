package explore

import (
	"context"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

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
	n := 60
	if testing.Short() {
		n = 15
	}
	res, err := Run(context.Background(), referenceRealm, Config{Seed: 1, Histories: n})
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
	res, err := Run(context.Background(), canaryRealm(0), Config{Seed: 2, Histories: 30})
	if err != nil {
		t.Fatal(err)
	}
	reportFailed(t, res)
}

func TestCanariesFoundByExploration(t *testing.T) {
	for _, c := range []struct {
		bug canary.Bugs
		ob  reports.ObligationID
	}{
		{canary.TornBatch, chapter.ObAllOrNothing},
		{canary.LostOnKill, chapter.ObDurable},
		{canary.IgnoreToken, chapter.ObFencing},
		{canary.ReversedAppend, chapter.ObOrder},
		{canary.RetryTwice, chapter.ObRetry},
		{canary.LastWriterWins, chapter.ObVersionChain},
		{canary.ApplyAsChecked, ""},
		{canary.LateTruncate, ""},
		{canary.DropRenumbers, ""},
		{canary.ReadBelowStartOK, ""},
		{canary.SkipLastListed, ""},
		{canary.ListedAfterDelete, ""},
		{canary.RenewNeverFenced, ""},
		{canary.ExclusiveIgnoresHolder, ""},
		{canary.NoRenewAfterLapse, ""},
		{canary.DirtyRead, ""},
	} {
		t.Run(c.bug.String(), func(t *testing.T) {
			res, err := Run(context.Background(), canaryRealm(c.bug), Config{Seed: 3, Histories: 400, StopAtFirst: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failed) == 0 {
				t.Fatalf("not found in %d histories (%d operations)", res.Histories, res.Ops)
			}
			f := res.Failed[0]
			t.Logf("found after %d histories (%d operations): %v", res.Histories, res.Ops, f.Findings[0])
			if c.ob != "" && f.Findings[0].Obligation != c.ob {
				t.Errorf("want %s first, got %v\n%s", c.ob, f.Findings, f.History.Text())
			}
		})
	}
}
