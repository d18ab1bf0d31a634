package explore_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/conform-spi/conform/internal/chapter"
	"github.com/conform-spi/conform/internal/chapter/explore"
	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/internal/settings"
	"github.com/conform-spi/conform/reports"
)

// TestShardsPlayEachHistoryOnce: the shards of a budget play its
// histories between them, each exactly once, each shard those whose
// index modulo the count is its own, in index order.
func TestShardsPlayEachHistoryOnce(t *testing.T) {
	const seed, histories = 17, 23
	var all []uint64
	for i := range 3 {
		cfg := chapter.Config{NewRealm: referenceRealm, Settings: settings.Settings{Options: settings.Options{Seed: seed, Explore: histories, Shard: reports.Shard{Index: i, Count: 3}}}}
		out, err := explore.Play(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var want []uint64
		for k := i; k < histories; k += 3 {
			want = append(want, xp.HistorySeed(seed, k))
		}
		if !slices.Equal(out.Seeds, want) || out.Played != len(want) {
			t.Fatalf("shard %d/3 played %d histories %v, want %v", i, out.Played, out.Seeds, want)
		}
		all = append(all, out.Seeds...)
	}
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != histories || len(all) != histories {
		t.Fatalf("the shards played %d histories (%d distinct), want %d", len(all), len(slices.Compact(all)), histories)
	}
}

// TestLedgerIsReplayedFirst: a ledger's histories are played before the
// budget's, each shown as replayed from the ledger in the progress and
// the summary, and recorded apart from the budget's seeds.
func TestLedgerIsReplayedFirst(t *testing.T) {
	ledger := []reports.LedgerEntry{{Index: 4, Seed: xp.HistorySeed(99, 4), Repro: "r4"}, {Index: 9, Seed: xp.HistorySeed(99, 9), Repro: "r9"}}
	var order []string
	cfg := chapter.Config{NewRealm: referenceRealm, Settings: settings.Settings{Options: settings.Options{Seed: 5, Explore: 3, Ledger: ledger,
		ExploreProgress: func(st chapter.ExploreStatus) { order = append(order, st.Replayed) }}}}
	out, err := explore.Play(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 5 || !strings.Contains(order[0], "history 4") || !strings.Contains(order[1], "history 9") || order[2] != "" {
		t.Fatalf("progress in the order %q, want the ledger's two first", order)
	}
	if len(out.Replayed) != 2 || out.Replayed[0].Failed || len(out.Seeds) != 3 || out.Played != 5 {
		t.Fatalf("replayed %+v, budget seeds %d, played %d", out.Replayed, len(out.Seeds), out.Played)
	}
	if s := explore.Summary(out); !strings.Contains(s, "replayed from the ledger: history 9 (seed ") {
		t.Errorf("the summary does not show the replays:\n%s", s)
	}
	x := explore.Exploration(cfg, out)
	if x.Histories != 3 || len(x.Replayed) != 2 || len(x.Seeds) != 3 || x.Coverage["commit/ok"] == 0 {
		t.Errorf("exploration record: %+v", x)
	}
	// Shard 1 of 2 replays the ledger's second entry only.
	cfg.Settings.Shard, cfg.Settings.ExploreProgress = reports.Shard{Index: 1, Count: 2}, nil
	out, err = explore.Play(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Replayed) != 1 || out.Replayed[0].Index != 9 || len(out.Seeds) != 1 {
		t.Errorf("shard 1/2 replayed %+v and played %d of the budget", out.Replayed, len(out.Seeds))
	}
}
