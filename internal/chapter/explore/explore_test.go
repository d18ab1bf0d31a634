package explore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/internal/canary"
	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reference"
	"github.com/conform-spi/conform/reports"
)

func referenceRealm(context.Context) (hoststore.HostStoreFactory, error) {
	return reference.NewFactory(), nil
}

func canaryRealm(bugs canary.Bugs) func(context.Context) (hoststore.HostStoreFactory, error) {
	return func(context.Context) (hoststore.HostStoreFactory, error) { return canary.NewFactory(bugs), nil }
}

func repro(i int) string { return fmt.Sprintf("conform reproduce 'v1;seed=7;hist=%d'", i) }

// TestReferencePassesWithFullCoverage runs the chapter's default budget
// over the reference store: no history fails, every coverage item is
// reached, and nothing is left not exercised.
func TestReferencePassesWithFullCoverage(t *testing.T) {
	var seen []chapter.ExploreStatus
	cfg := chapter.Config{NewRealm: referenceRealm, Settings: settings.Settings{Options: settings.Options{
		Seed: 7, Explore: explore.DefaultHistories,
		ExploreProgress: func(s chapter.ExploreStatus) { seen = append(seen, s) },
	}}}
	out, err := explore.Play(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, hf := range out.Failed {
		t.Errorf("history %d: %v\n%s", hf.Index, hf.Findings, hf.History.Text())
	}
	if out.Played != explore.DefaultHistories || out.Coverage.Histories != out.Played || out.Replay || out.Stopped {
		t.Fatalf("played %d (coverage of %d), replay %v, stopped %v; want %d, not a replay, not stopped", out.Played, out.Coverage.Histories, out.Replay, out.Stopped, explore.DefaultHistories)
	}
	if gaps := explore.NotReached(out); len(gaps) > 0 {
		t.Fatalf("not exercised on the reference: %v\n%s", gaps, explore.Summary(out))
	}
	if len(seen) != out.Played {
		t.Fatalf("progress called %d times for %d histories", len(seen), out.Played)
	}
	last := seen[len(seen)-1]
	if last.Histories != out.Played || last.Of != explore.DefaultHistories || last.Ops != out.Coverage.Ops || last.Reached != last.Items || last.Findings != 0 {
		t.Errorf("last progress %+v, want every history, every item, no finding", last)
	}
	if s := explore.Summary(out); !strings.Contains(s, "0 failed") || !strings.Contains(s, fmt.Sprintf("%d of %d items reached", last.Items, last.Items)) {
		t.Errorf("summary does not say what ran:\n%s", s)
	}
}

// TestCanaryFailsNamingAnObligationAndReplays runs the chapter over a
// store that ignores fence tokens: histories fail, each failure names an
// obligation of the row with the history as its trail and a repro line,
// and replaying a failed history alone by its number fails it again. The
// history replayed is one of one process and no kill in flight: such a
// history regenerates the same from its seed (a concurrent one need not
// interleave the same way twice, which the shrunk history in a repro is
// for).
func TestCanaryFailsNamingAnObligationAndReplays(t *testing.T) {
	cfg := chapter.Config{NewRealm: canaryRealm(canary.IgnoreToken), Settings: settings.Settings{Options: settings.Options{Seed: 3, Explore: explore.DefaultHistories}}}
	out, err := explore.Play(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) == 0 {
		t.Fatalf("no history failed over %d histories against a store that ignores tokens", out.Played)
	}
	simplest := explore.Simplest(out.Failed)
	hf := simplest[0]
	for _, o := range out.Failed {
		if o.History.Procs < hf.History.Procs {
			t.Fatalf("the simplest failure has %d processes, history %d %d", hf.History.Procs, o.Index, o.History.Procs)
		}
	}
	f := explore.FailureOf(hf, repro(hf.Index))
	if !slices.Contains(explore.Obligations, f.Obligation) {
		t.Errorf("failure names %q, not an obligation of the row", f.Obligation)
	}
	if f.Expected == "" || f.Got == "" || !strings.Contains(f.Message, fmt.Sprintf("history %d (seed %d", hf.Index, hf.Seed)) {
		t.Errorf("failure lacks want/got or the history's number and seed: %+v", f)
	}
	if len(f.Trail) != len(hf.History.Events)+1 || f.Trail[0] != "replay this history alone: "+repro(hf.Index) || !strings.HasPrefix(f.Trail[1], "#0 ") {
		t.Errorf("trail is not the repro line then the history, one event a line: %q", f.Trail[:min(len(f.Trail), 3)])
	}

	// A history of one process that is not racy: from this run, or else
	// from a run of a later seed.
	oneProc := func(o xp.HistoryFinding) bool { return o.History.Procs-o.History.Observers() == 1 && !o.History.Racy() }
	i := slices.IndexFunc(simplest, oneProc)
	for seed := uint64(4); i < 0 && seed < 12; seed++ {
		cfg.Settings.Seed = seed
		out, err = explore.Play(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		simplest = explore.Simplest(out.Failed)
		i = slices.IndexFunc(simplest, oneProc)
	}
	if i < 0 {
		t.Fatalf("no seed from 3 to 11 failed a history of one process that is not racy")
	}
	one := simplest[i]
	only := one.Index
	cfg.Settings.Options = settings.Options{Seed: cfg.Settings.Seed, ExploreHist: &only}
	again, err := explore.Play(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replay || again.Played < 1 || again.Played > explore.Replays {
		t.Fatalf("replay played %d times (replay %v), want 1 to %d", again.Played, again.Replay, explore.Replays)
	}
	if len(again.Failed) != 1 || again.Failed[0].Index != one.Index || again.Failed[0].Seed != one.Seed {
		t.Fatalf("replaying history %d (seed %d) did not fail it again in %d plays: %v", one.Index, one.Seed, again.Played, again.Failed)
	}
	t.Logf("history %d failed again after %d plays: %v", one.Index, again.Played, again.Failed[0].Findings[0])
}

// TestNotReachedNamesEachMissingItem judges a synthetic outcome: each
// item the histories never reached is a part not exercised, named after
// the item, with those that need the in-store sites marked so.
func TestNotReachedNamesEachMissingItem(t *testing.T) {
	s := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "a"}
	h := &xp.History{Procs: 1, Events: []xp.Event{
		{ID: 0, Op: xp.OpAcquire, Mode: "Exclusive", Call: 1, Return: 2, Grant: &hoststore.FenceGrant{Token: 1}},
		{ID: 1, Op: xp.OpCommit, Call: 3, Return: 4, Batch: &xp.Batch{ID: "c1", Token: 1, Updates: []hoststore.ScopeUpdate{{Scope: s, Next: 1}}}},
	}}
	out := explore.Outcome{Played: 1, Coverage: xp.CoverageOf([]*xp.History{h})}
	gaps := explore.NotReached(out)
	byItem := map[string]explore.Gap{}
	for _, g := range gaps {
		id, _, ok := strings.Cut(strings.TrimPrefix(g.Part, "coverage item "), " ")
		if !ok || !strings.HasPrefix(g.Part, "coverage item ") {
			t.Fatalf("part %q does not name a coverage item", g.Part)
		}
		byItem[id] = g
	}
	if len(byItem) != len(xp.Items())-2 {
		t.Errorf("%d items not exercised, want all but the two reached (%d)", len(byItem), len(xp.Items())-2)
	}
	for _, reached := range []string{"acquire/exclusive", "commit/ok"} {
		if _, ok := byItem[reached]; ok {
			t.Errorf("%s was reached but is not exercised", reached)
		}
	}
	for _, it := range xp.Items() {
		g, ok := byItem[it.ID]
		if !ok {
			continue
		}
		if g.InStore != it.InStore || !strings.Contains(g.Part, it.What) || !strings.Contains(g.Why, "1 histories of 2 operations never reached it") {
			t.Errorf("gap of %s: %+v", it.ID, g)
		}
	}
	if g, ok := byItem["commit/clash"]; !ok || g.InStore {
		t.Errorf("a store that never answers Conflict nor lets a clash land is not shown: %+v", g)
	}

	out.Undecided = 1
	if gaps := explore.NotReached(out); gaps[len(gaps)-1].Part != "linearizability" {
		t.Errorf("an undecided history is not shown: last gap %+v", gaps[len(gaps)-1])
	}
	out.Replay = true
	if gaps := explore.NotReached(out); len(gaps) != 1 || gaps[0].Part != "coverage" {
		t.Errorf("a replay judges no coverage: %+v", gaps)
	}
}

// TestRowListsEveryObligation pins the row's labels: all nine
// obligations, the fence leases, the operations and the error contract.
func TestRowListsEveryObligation(t *testing.T) {
	ch := explore.Chapter()
	rows := ch.Rows()
	if ch.ID != "explore" || len(rows) != 1 || rows[0].ID != explore.RowID {
		t.Fatalf("chapter %s with rows %v", ch.ID, rows)
	}
	want := []reports.ObligationID{"ob:1", "ob:2", "ob:3", "ob:4", "ob:5", "ob:6", "ob:7", "ob:8", "ob:9", "ob:fence", "ob:ops", "ob:errors"}
	if !slices.Equal(rows[0].Obligations, want) {
		t.Errorf("obligations %v, want %v", rows[0].Obligations, want)
	}
	labels := chapter.SpecLabels(ch.ID, rows[0])
	if len(labels) != 1 || !slices.Contains(labels[0], "chapter:explore") || !slices.Contains(labels[0], "ob:5") {
		t.Errorf("spec labels %v", labels)
	}
	if ch.Runs(chapter.Config{}) || !ch.Runs(chapter.Config{Settings: settings.Settings{Options: settings.Options{Explore: 1}}}) || !ch.Runs(chapter.Config{Settings: settings.Settings{Options: settings.Options{ExploreHist: new(int)}}}) {
		t.Error("the chapter runs without a budget, or not with one or a history to replay")
	}
}
