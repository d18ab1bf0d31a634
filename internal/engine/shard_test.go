package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/conform-spi/conform/internal/chapter/explore"
	xp "github.com/conform-spi/conform/internal/explore"
	"github.com/conform-spi/conform/reports"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want reports.Shard
	}{{"0/1", reports.Shard{Index: 0, Count: 1}}, {"3/4", reports.Shard{Index: 3, Count: 4}}, {" 1 / 2 ", reports.Shard{Index: 1, Count: 2}}} {
		got, err := parseShard(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseShard(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for in, why := range map[string]string{"4/4": "below 4", "-1/4": "below 4", "0/0": "at least 1", "0/10001": "at most 10000", "1": "want i/N", "a/4": "whole numbers", "1/4/2": "whole numbers", "": "want i/N"} {
		if _, err := parseShard(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("parseShard(%q) = %v, want an error saying %q", in, err, why)
		}
	}
}

// TestRowInShardSplitsEveryRowOnce: for any count, every row of every
// chapter belongs to exactly one shard, the same on every call.
func TestRowInShardSplitsEveryRowOnce(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for _, ch := range chaptersOf(Options{}) {
			for _, r := range ch.Rows() {
				in := 0
				for i := range n {
					if rowInShard(r.ID, i, n) {
						in++
					}
				}
				if in != 1 {
					t.Errorf("row %s is in %d of %d shards", r.ID, in, n)
				}
			}
		}
	}
	// FNV-1a (32 bits) of "kill" is 0xc50f4599; modulo 4 that is 1.
	if !rowInShard("kill", 1, 4) {
		t.Errorf("the hash of row IDs changed: shards of two versions would split rows differently")
	}
}

// shardRun returns the report of shard i of n of an exploration with
// seed 1 that reached the items of reached, with the row's status.
func shardRun(i, n int, st reports.Status, reached ...string) *reports.Run {
	x := &reports.Exploration{Histories: 10, Played: 5, Ops: 50, Seeds: []uint64{uint64(100*n + i)}, Coverage: map[string]int{}}
	for _, it := range xp.Items() {
		x.Coverage[it.ID] = 0
	}
	for _, id := range reached {
		x.Coverage[id] = 3
	}
	row := reports.Row{Chapter: explore.ID, ID: explore.RowID, Status: st}
	for _, g := range explore.NotReached(explore.Outcome{Played: 5, Coverage: explore.CoverageOf(x)}) {
		row.NotExercised = append(row.NotExercised, explore.SpecText+": "+g.Part+": "+g.Why)
	}
	if st == reports.StatusFailed {
		row.Failures = []reports.Failure{{Message: "broke", Obligation: "ob:7"}}
		x.Failed = []reports.LedgerEntry{{Index: i, Seed: 7, Obligation: "ob:7"}}
	}
	return &reports.Run{Tool: "conform", Version: Version, Store: "reference:", Seed: 1, Start: time.Unix(int64(i), 0), Duration: time.Second,
		Shard: &reports.Shard{Index: i, Count: n}, Explore: x,
		Rows: []reports.Row{{Chapter: "host-store", ID: "kill", Status: reports.StatusNotRun, NotSelected: true}, row}}
}

func itemIDs(keep func(xp.Item) bool) []string {
	var out []string
	for _, it := range xp.Items() {
		if keep(it) {
			out = append(out, it.ID)
		}
	}
	return out
}

// TestMergeJudgesTheSumOfTheShards: what one shard left not exercised
// another may have reached, and the merge judges the sum; a failed shard
// fails the merge; an item no shard reached is not exercised.
func TestMergeJudgesTheSumOfTheShards(t *testing.T) {
	ids := itemIDs(func(xp.Item) bool { return true })
	half := len(ids) / 2
	merge := func(runs ...*reports.Run) *reports.Run {
		t.Helper()
		var in []shardReport
		for i, r := range runs {
			in = append(in, shardReport{From: "s" + string(rune('0'+i)), Run: r})
		}
		m, err := mergeShards(in)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := shardRun(0, 2, reports.StatusPassed, ids[:half]...), shardRun(1, 2, reports.StatusPassed, ids[half:]...)
	if a.Verdict().Passing() || b.Verdict().Passing() {
		t.Fatal("a shard that reached half the items passes alone")
	}
	m := merge(b, a)
	if v := m.Verdict(); v != reports.VerdictConformant {
		t.Errorf("merged verdict %s, want conformant: %v", v, m.Reasons())
	}
	if m.Explore.Played != 10 || len(m.Explore.Seeds) != 2 || m.Explore.Coverage[ids[0]] != 3 || m.MergedFrom != 2 || m.Duration != 2*time.Second {
		t.Errorf("merged exploration %+v, from %d, duration %s", m.Explore, m.MergedFrom, m.Duration)
	}
	if !m.Rows[0].NotSelected || m.Rows[0].ID != "kill" {
		t.Errorf("a row no shard ran is not left not selected: %+v", m.Rows[0])
	}

	m = merge(shardRun(0, 2, reports.StatusPassed, ids...), shardRun(1, 2, reports.StatusFailed, ids...))
	if m.Verdict() != reports.VerdictNotConformant || m.Rows[1].Status != reports.StatusFailed || len(m.Explore.Failed) != 1 || len(m.Rows[1].Failures) != 1 {
		t.Errorf("a failed shard: merged %s, row %s, ledger %d", m.Verdict(), m.Rows[1].Status, len(m.Explore.Failed))
	}

	notInStore := itemIDs(func(it xp.Item) bool { return !it.InStore })
	m = merge(shardRun(0, 2, reports.StatusPassed, notInStore...), shardRun(1, 2, reports.StatusPassed, notInStore...))
	row := m.Rows[1]
	if m.Verdict() != reports.VerdictNotConformant || !row.InStoreOnly || len(row.NotExercised) != len(ids)-len(notInStore) {
		t.Errorf("no shard reached the in-store items: %s, in-store only %v, %q", m.Verdict(), row.InStoreOnly, row.NotExercised)
	}
}

// TestMergeRefuses names what keeps shards from being one campaign.
func TestMergeRefuses(t *testing.T) {
	ids := itemIDs(func(xp.Item) bool { return true })
	other := shardRun(1, 2, reports.StatusPassed, ids...)
	other.Explore.Seeds = shardRun(0, 2, reports.StatusPassed).Explore.Seeds
	budget := shardRun(1, 2, reports.StatusPassed)
	budget.Explore.Histories = 11
	for want, in := range map[string][]*reports.Run{
		"shard 1/3 missing":                               {shardRun(0, 3, reports.StatusPassed), shardRun(2, 3, reports.StatusPassed)},
		"shard 0/2 given twice: s0 and s1":                {shardRun(0, 2, reports.StatusPassed), shardRun(0, 2, reports.StatusPassed)},
		"different shard counts":                          {shardRun(0, 2, reports.StatusPassed), shardRun(1, 3, reports.StatusPassed)},
		"played by shard 0/2 and shard 1/2":               {shardRun(0, 2, reports.StatusPassed), other},
		"different exploration budgets":                   {shardRun(0, 2, reports.StatusPassed), budget},
		"shard 0 of 1000000000000, which no campaign has": {shardRun(0, 1e12, reports.StatusPassed)},
		"shard 2 of 2, which no campaign has":             {shardRun(2, 2, reports.StatusPassed)},
	} {
		var sh []shardReport
		for i, r := range in {
			sh = append(sh, shardReport{From: "s" + string(rune('0'+i)), Run: r})
		}
		if _, err := mergeShards(sh); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Merge = %v, want an error saying %q", err, want)
		}
	}
}
